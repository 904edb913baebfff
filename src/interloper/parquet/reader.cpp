// Reading Parquet: DuckDB's read_parquet, its columns cast to the types a Value holds, read
// chunk by chunk into tables.
#include <fmt/format.h>

#include <optional>

#include "interloper/data/table_columns.hpp"
#include "interloper/duckdb/duckdb.hpp"
#include "interloper/parquet/parquet.hpp"
#include "interloper/parquet/settings.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper::parquet {
namespace {

// How a column's cells are read out of a chunk, once cast by the query.
enum class Cell : std::uint8_t {
  boolean,
  int64,
  float64,
  text,
  json,
  date,
  timestamp,
  decimal16,
  decimal32,
  decimal64,
  decimal128
};

struct Column {
  std::string name;
  Cell cell = Cell::text;
  std::string expression;  // what the query selects
  Field field;
};

// How a column of DuckDB type `type` is selected (`quoted` is its quoted name) and read.
Column plan_column(std::string name, const duckdb::LogicalType& type) {
  Column c;
  const std::string quoted = sql::quote_identifier(name);
  c.expression = quoted;
  c.field.name = name;
  c.name = std::move(name);
  auto as = [&](Cell cell, DataType dt, std::string_view cast = {}) {
    c.cell = cell;
    c.field.type = dt;
    if (!cast.empty()) c.expression = fmt::format("CAST({} AS {})", quoted, cast);
  };
  switch (type.id()) {
    case DUCKDB_TYPE_BOOLEAN:
      as(Cell::boolean, DataType::boolean);
      break;
    case DUCKDB_TYPE_BIGINT:
      as(Cell::int64, DataType::int64);
      break;
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
      as(Cell::int64, DataType::int64, "BIGINT");
      break;
    case DUCKDB_TYPE_UBIGINT:
    case DUCKDB_TYPE_HUGEINT:
    case DUCKDB_TYPE_UHUGEINT:
      as(Cell::decimal128, DataType::decimal, "DECIMAL(38,0)");
      c.field.precision = 38;
      break;
    case DUCKDB_TYPE_DOUBLE:
      as(Cell::float64, DataType::float64);
      break;
    case DUCKDB_TYPE_FLOAT:
      as(Cell::float64, DataType::float64, "DOUBLE");
      break;
    case DUCKDB_TYPE_DECIMAL:
      switch (type.decimal_storage()) {
        case DUCKDB_TYPE_SMALLINT:
          as(Cell::decimal16, DataType::decimal);
          break;
        case DUCKDB_TYPE_INTEGER:
          as(Cell::decimal32, DataType::decimal);
          break;
        case DUCKDB_TYPE_BIGINT:
          as(Cell::decimal64, DataType::decimal);
          break;
        default:
          as(Cell::decimal128, DataType::decimal);
          break;
      }
      c.field.precision = type.decimal_width();
      c.field.scale = type.decimal_scale();
      break;
    case DUCKDB_TYPE_DATE:
      as(Cell::date, DataType::date);
      break;
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_TZ:
      as(Cell::timestamp, DataType::timestamp);  // both are microseconds since 1970 UTC
      break;
    case DUCKDB_TYPE_TIMESTAMP_S:
    case DUCKDB_TYPE_TIMESTAMP_MS:
    case DUCKDB_TYPE_TIMESTAMP_NS:
      as(Cell::timestamp, DataType::timestamp, "TIMESTAMP");
      break;
    case DUCKDB_TYPE_VARCHAR:
      if (type.alias() == "JSON") {
        as(Cell::json, DataType::json);
      } else {
        as(Cell::text, DataType::string);
      }
      break;
    case DUCKDB_TYPE_LIST:
    case DUCKDB_TYPE_STRUCT:
    case DUCKDB_TYPE_MAP:
    case DUCKDB_TYPE_ARRAY:
    case DUCKDB_TYPE_UNION:
      as(Cell::json, DataType::json);
      c.expression = fmt::format("CAST(to_json({}) AS VARCHAR)", quoted);
      break;
    default:
      as(Cell::text, DataType::string, "VARCHAR");
      break;
  }
  return c;
}

__int128 from_hugeint(const duckdb_hugeint& h) noexcept {
  return static_cast<__int128>(
      (static_cast<unsigned __int128>(static_cast<std::uint64_t>(h.upper)) << 64) | h.lower);
}

Value cell_value(const duckdb::Chunk& chunk, std::size_t c, std::size_t row, const Column& col) {
  if (chunk.is_null(c, row)) return {};
  const int scale = col.field.scale;
  switch (col.cell) {
    case Cell::boolean:
      return Value(chunk.data<bool>(c)[row]);
    case Cell::int64:
      return Value(static_cast<long long>(chunk.data<std::int64_t>(c)[row]));
    case Cell::float64:
      return Value(chunk.data<double>(c)[row]);
    case Cell::text:
      return Value(std::string(chunk.text(c, row)));
    case Cell::json:
      return Value(parse_json(chunk.text(c, row)));
    case Cell::date:
      return Value(Value::Date(std::chrono::days(chunk.data<std::int32_t>(c)[row])));
    case Cell::timestamp:
      return Value(Value::Timestamp(std::chrono::microseconds(chunk.data<std::int64_t>(c)[row])));
    case Cell::decimal16:
      return Value(Decimal(chunk.data<std::int16_t>(c)[row], scale));
    case Cell::decimal32:
      return Value(Decimal(chunk.data<std::int32_t>(c)[row], scale));
    case Cell::decimal64:
      return Value(Decimal(chunk.data<std::int64_t>(c)[row], scale));
    case Cell::decimal128:
      return Value(Decimal(from_hugeint(chunk.data<duckdb_hugeint>(c)[row]), scale));
  }
  return {};
}

// One read of a file: its database, its columns and the query that casts them.
struct FileRead {
  std::string path;
  duckdb::Database db;
  duckdb::Connection con;
  std::vector<Column> columns;

  explicit FileRead(std::string file)
      : path(std::move(file)), db(":memory:", duckdb_settings("256MB", {}, 1)), con(db) {
    try {
      duckdb::Statement probe = con.prepare("SELECT * FROM read_parquet(?) LIMIT 0");
      probe.bind_text(1, path);
      duckdb::Result result = probe.execute();
      for (std::size_t c = 0; c < result.column_count(); ++c) {
        columns.push_back(plan_column(result.column_name(c), result.column_type(c)));
      }
    } catch (const duckdb::Error& e) {
      throw DataError(fmt::format("parquet '{}': cannot be read: {}", path, e.message()));
    }
  }

  Schema schema() const {
    std::vector<Field> fields;
    for (const Column& c : columns) fields.push_back(c.field);
    return Schema(std::move(fields));
  }

  std::string query() const {
    std::string select;
    for (const Column& c : columns) {
      select += fmt::format("{}{} AS {}", select.empty() ? "" : ", ", c.expression,
                            sql::quote_identifier(c.name));
    }
    return fmt::format("SELECT {} FROM read_parquet(?)", select.empty() ? "*" : select);
  }
};

}  // namespace

Schema file_schema(const std::string& path) { return FileRead(path).schema(); }

void read_file(const std::string& path, const std::function<void(Table&&)>& on_batch,
               const Schema* declared, std::size_t batch_rows) {
  FileRead file(path);
  const Schema schema = file.schema();
  std::size_t rows = 0;  // handed on so far
  std::optional<Table> batch;
  detail::TableColumns cells;
  auto hand_on = [&] {
    if (declared != nullptr) {
      try {
        batch->conform(*declared, rows + 1);
      } catch (const DataError& e) {
        throw DataError(fmt::format("parquet '{}': {}", path, e.what()));
      }
    }
    rows += batch->num_rows();
    on_batch(std::move(*batch));
    batch.reset();
  };
  bool any = false;
  try {
    duckdb::Statement statement = file.con.prepare(file.query());
    statement.bind_text(1, path);
    duckdb::Result result = statement.execute();
    while (std::optional<duckdb::Chunk> chunk = result.next()) {
      for (std::size_t row = 0; row < chunk->size(); ++row) {
        if (!batch) {
          batch.emplace(schema);
          batch->reserve(batch_rows);
          cells = detail::TableColumns(*batch);
        }
        for (std::size_t c = 0; c < file.columns.size(); ++c) {
          try {
            cells.set(c, cell_value(*chunk, c, row, file.columns[c]));
          } catch (const DataError& e) {
            throw DataError(fmt::format("parquet '{}': row {}, column '{}': {}", path,
                                        rows + batch->num_rows() + 1, file.columns[c].name,
                                        e.what()));
          }
        }
        cells.end_row();
        if (batch->num_rows() >= batch_rows) {
          any = true;
          hand_on();
        }
      }
    }
  } catch (const duckdb::Error& e) {
    throw DataError(fmt::format("parquet '{}': cannot be read: {}", path, e.message()));
  }
  if (batch || !any) {
    if (!batch) batch.emplace(schema);
    hand_on();
  }
}

Table read_file(const std::string& path, const Schema* declared) {
  Table out;
  bool first = true;
  read_file(
      path,
      [&](Table&& batch) {
        if (first) {
          out = std::move(batch);
          first = false;
        } else {
          out.append_table(std::move(batch));
        }
      },
      declared);
  return out;
}

}  // namespace interloper::parquet
