// Writing Parquet: batches staged in DuckDB through its appender, then COPY ... TO the file.
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <system_error>
#include <unordered_map>

#include "interloper/data/format.hpp"
#include "interloper/duckdb/duckdb.hpp"
#include "interloper/parquet/parquet.hpp"
#include "interloper/parquet/settings.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper::parquet {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The staging column's type: what a chunk holds for the field.
duckdb::LogicalType staging_type(const Field& f) {
  switch (f.type) {
    case DataType::boolean:
      return duckdb::LogicalType(DUCKDB_TYPE_BOOLEAN);
    case DataType::int64:
      return duckdb::LogicalType(DUCKDB_TYPE_BIGINT);
    case DataType::float64:
      return duckdb::LogicalType(DUCKDB_TYPE_DOUBLE);
    case DataType::date:
      return duckdb::LogicalType(DUCKDB_TYPE_DATE);
    case DataType::timestamp:
      return duckdb::LogicalType(DUCKDB_TYPE_TIMESTAMP_TZ);
    case DataType::decimal:
      // A declared size is staged at its scale in 128 bits; an undeclared one as its exact text,
      // until the largest scale is known.
      if (f.precision > 0) return duckdb::LogicalType::decimal(Decimal::kMaxDigits, f.scale);
      return duckdb::LogicalType(DUCKDB_TYPE_VARCHAR);
    case DataType::null:
    case DataType::string:
    case DataType::json:
      return duckdb::LogicalType(DUCKDB_TYPE_VARCHAR);
  }
  return duckdb::LogicalType(DUCKDB_TYPE_VARCHAR);
}

std::string sql_type(const Field& f) {
  switch (f.type) {
    case DataType::boolean:
      return "BOOLEAN";
    case DataType::int64:
      return "BIGINT";
    case DataType::float64:
      return "DOUBLE";
    case DataType::date:
      return "DATE";
    case DataType::timestamp:
      return "TIMESTAMPTZ";
    case DataType::decimal:
      return f.precision > 0 ? fmt::format("DECIMAL({},{})", Decimal::kMaxDigits, f.scale)
                             : "VARCHAR";
    default:
      return "VARCHAR";
  }
}

duckdb_hugeint to_hugeint(__int128 v) noexcept {
  const auto u = static_cast<unsigned __int128>(v);
  return {static_cast<std::uint64_t>(u), static_cast<std::int64_t>(u >> 64)};
}

// A directory that is removed with the writer when the writer made it.
struct TempDirectory {
  std::string path;
  bool owned = false;
  ~TempDirectory() {
    if (!owned) return;
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

void check_schema(const Schema& schema) {
  if (schema.empty()) throw DataError("parquet: a file needs at least one column");
  std::unordered_map<std::string, std::string> seen;  // lower-cased name -> name
  for (const Field& f : schema.fields()) {
    if (f.name.empty()) throw DataError("parquet: a column has an empty name");
    if (f.name.find_first_of("=/") != std::string::npos) {
      throw DataError(fmt::format(
          "parquet: column '{}' has '=' or '/' in its name; it would read as a Hive directory "
          "(name=value) or a path: rename the column",
          f.name));
    }
    auto [at, fresh] = seen.emplace(lower(f.name), f.name);
    if (!fresh) {
      throw DataError(fmt::format(
          "parquet: columns '{}' and '{}' differ only by case, which DuckDB does not tell apart",
          at->second, f.name));
    }
  }
}

struct Writer::State {
  std::string path;
  Schema schema;
  TempDirectory temp;
  std::optional<duckdb::Database> db;
  std::optional<duckdb::Connection> con;
  std::optional<duckdb::Appender> appender;
  std::optional<duckdb::Chunk> chunk;
  std::uint64_t rows = 0;
  bool finished = false;
  // Per undeclared decimal column: the largest scale and the most digits before the point.
  std::vector<int> max_scale;
  std::vector<int> max_whole;

  // Per declared decimal column: 10^precision, the bound of its unscaled values.
  std::vector<__int128> bounds;
  std::uint64_t row_base = 0;  // the rows before the chunk being filled

  void fill(const Table& batch, const std::vector<std::size_t>& from, std::size_t begin,
            std::size_t count);
  void fill_column(std::size_t c, const Value* cells, std::size_t count);
  template <typename T, typename Get>
  void fill_fixed(std::size_t c, const Value* cells, std::size_t count, DataType type, Get get);
  void put_converted(std::size_t c, std::size_t row, const Value& v);
  void put_decimal(std::size_t c, std::size_t row, const Decimal& d);
  void put_string(std::size_t c, std::size_t row, const std::string& text);
  [[noreturn]] void fail(std::size_t row, std::string_view what) const;
  std::string copy_sql() const;
};

Writer::Writer(std::string path, Schema schema, WriteOptions options)
    : state_(std::make_unique<State>()) {
  check_schema(schema);
  State& s = *state_;
  s.path = std::move(path);
  s.schema = std::move(schema);
  s.max_scale.assign(s.schema.size(), 0);
  s.max_whole.assign(s.schema.size(), 0);
  for (const Field& f : s.schema.fields()) {
    __int128 bound = 1;
    for (int i = 0; i < f.precision; ++i) bound *= 10;
    s.bounds.push_back(bound);
  }
  if (options.temp_directory.empty()) {
    std::string pattern = (fs::temp_directory_path() / "interloper-parquet-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw DestinationError(fmt::format("parquet '{}': cannot make a temporary directory in {}",
                                         s.path, fs::temp_directory_path().string()));
    }
    s.temp.path = pattern;
    s.temp.owned = true;
  } else {
    s.temp.path = options.temp_directory;
  }
  s.db.emplace(":memory:", duckdb_settings(options.memory_limit, s.temp.path, options.threads));
  s.con.emplace(*s.db);
  // A temporary table: DuckDB neither compresses nor checkpoints it, and spills it past the limit.
  std::string create = "CREATE TEMPORARY TABLE staging (";
  std::vector<duckdb::LogicalType> types;
  for (std::size_t c = 0; c < s.schema.size(); ++c) {
    const Field& f = s.schema.field(c);
    create += fmt::format("{}c{} {}", c > 0 ? ", " : "", c, sql_type(f));
    types.push_back(staging_type(f));
  }
  create += ")";
  s.con->execute(create);
  s.appender.emplace(*s.con, "staging");
  s.chunk.emplace(types);
}

Writer::~Writer() = default;

std::uint64_t Writer::rows() const noexcept { return state_->rows; }

[[noreturn]] void Writer::State::fail(std::size_t row, std::string_view what) const {
  throw DataError(fmt::format("parquet '{}': row {}: {}", path, row_base + row + 1, what));
}

void Writer::State::put_decimal(std::size_t c, std::size_t row, const Decimal& d) {
  if (schema.field(c).precision > 0) {  // declared_value has put it at the column's scale
    chunk->data<duckdb_hugeint>(c)[row] = to_hugeint(d.unscaled());
    return;
  }
  max_scale[c] = std::max(max_scale[c], d.scale());
  max_whole[c] = std::max(max_whole[c], d.digits() - d.scale());
  chunk->set_text(c, row, d.to_string());
}

void Writer::State::put_string(std::size_t c, std::size_t row, const std::string& text) {
  if (!detail::valid_utf8(text)) {
    fail(row, fmt::format("column '{}': the string is not valid UTF-8", schema.field(c).name));
  }
  chunk->set_text(c, row, text);
}

// The slow path of one cell: a null, or a value that must be converted to its column's type.
void Writer::State::put_converted(std::size_t c, std::size_t row, const Value& v) {
  if (v.is_null()) {
    chunk->set_null(c, row);
    return;
  }
  const Field& f = schema.field(c);
  Value declared;
  try {
    declared = detail::declared_value(v, f);
  } catch (const DataError& e) {
    fail(row, e.what());
  }
  switch (f.type) {
    case DataType::boolean:
      chunk->data<bool>(c)[row] = declared.as_bool();
      break;
    case DataType::int64:
      chunk->data<std::int64_t>(c)[row] = declared.as_int();
      break;
    case DataType::float64:
      chunk->data<double>(c)[row] = declared.as_double();
      break;
    case DataType::date:
      chunk->data<std::int32_t>(c)[row] =
          static_cast<std::int32_t>(declared.as_date().time_since_epoch().count());
      break;
    case DataType::timestamp:
      chunk->data<std::int64_t>(c)[row] = declared.as_timestamp().time_since_epoch().count();
      break;
    case DataType::decimal:
      put_decimal(c, row, declared.as_decimal());
      break;
    case DataType::string:
      put_string(c, row, declared.as_string());
      break;
    case DataType::json:
      chunk->set_text(c, row, declared.as_json().text);
      break;
    case DataType::null:
      chunk->set_null(c, row);
      break;
  }
}

// Values of the column's own type go straight into the chunk's vector; the rest take
// put_converted.
template <typename T, typename Get>
void Writer::State::fill_fixed(std::size_t c, const Value* cells, std::size_t count, DataType type,
                               Get get) {
  T* out = chunk->data<T>(c);
  for (std::size_t r = 0; r < count; ++r) {
    const Value& v = cells[r];
    if (v.type() == type) {
      out[r] = get(v);
    } else {
      put_converted(c, r, v);
    }
  }
}

void Writer::State::fill_column(std::size_t c, const Value* cells, std::size_t count) {
  const Field& f = schema.field(c);
  switch (f.type) {
    case DataType::boolean:
      fill_fixed<bool>(c, cells, count, f.type, [](const Value& v) { return v.as_bool(); });
      return;
    case DataType::int64:
      fill_fixed<std::int64_t>(c, cells, count, f.type, [](const Value& v) { return v.as_int(); });
      return;
    case DataType::float64:
      fill_fixed<double>(c, cells, count, f.type, [](const Value& v) { return v.as_double(); });
      return;
    case DataType::date:
      fill_fixed<std::int32_t>(c, cells, count, f.type, [](const Value& v) {
        return static_cast<std::int32_t>(v.as_date().time_since_epoch().count());
      });
      return;
    case DataType::timestamp:
      fill_fixed<std::int64_t>(c, cells, count, f.type, [](const Value& v) {
        return static_cast<std::int64_t>(v.as_timestamp().time_since_epoch().count());
      });
      return;
    case DataType::decimal:
      if (f.precision > 0) {
        // A decimal at the column's scale with at most `precision` digits needs no conversion.
        const __int128 bound = bounds[c];
        auto* out = chunk->data<duckdb_hugeint>(c);
        for (std::size_t r = 0; r < count; ++r) {
          const Value& v = cells[r];
          if (v.type() == DataType::decimal) {
            const Decimal d = v.as_decimal();
            if (d.scale() == f.scale && d.unscaled() < bound && -d.unscaled() < bound) {
              out[r] = to_hugeint(d.unscaled());
              continue;
            }
          }
          put_converted(c, r, v);
        }
        return;
      }
      break;
    case DataType::string:
      for (std::size_t r = 0; r < count; ++r) {
        const Value& v = cells[r];
        if (v.type() == DataType::string) {
          put_string(c, r, v.as_string());
        } else {
          put_converted(c, r, v);
        }
      }
      return;
    default:
      break;
  }
  for (std::size_t r = 0; r < count; ++r) put_converted(c, r, cells[r]);
}

void Writer::State::fill(const Table& batch, const std::vector<std::size_t>& from,
                         std::size_t begin, std::size_t count) {
  row_base = rows + begin;
  for (std::size_t c = 0; c < schema.size(); ++c) {
    if (from[c] == Schema::npos) {
      for (std::size_t r = 0; r < count; ++r) chunk->set_null(c, r);
    } else {
      fill_column(c, batch.column(from[c]).data() + begin, count);
    }
  }
}

void Writer::append(const Table& batch) {
  State& s = *state_;
  if (s.finished) throw DestinationError(fmt::format("parquet '{}': written already", s.path));
  std::vector<std::size_t> from(s.schema.size(), Schema::npos);
  for (std::size_t b = 0; b < batch.num_columns(); ++b) {
    const std::string& name = batch.schema().field(b).name;
    auto c = s.schema.find(name);
    if (!c) {
      throw DataError(fmt::format("parquet '{}': column '{}' is not in the schema ({})", s.path,
                                  name, s.schema.to_string()));
    }
    from[*c] = b;
  }
  const std::size_t capacity = duckdb::Chunk::capacity();
  for (std::size_t begin = 0; begin < batch.num_rows(); begin += capacity) {
    const std::size_t count = std::min(capacity, batch.num_rows() - begin);
    s.chunk->reset();
    s.fill(batch, from, begin, count);
    s.chunk->set_size(count);
    s.appender->append(*s.chunk);
  }
  s.rows += batch.num_rows();
}

std::string Writer::State::copy_sql() const {
  std::string select;
  for (std::size_t c = 0; c < schema.size(); ++c) {
    const Field& f = schema.field(c);
    std::string column = fmt::format("c{}", c);
    if (f.type == DataType::json) {
      column = fmt::format("CAST({} AS JSON)", column);
    } else if (f.type == DataType::decimal && f.precision > 0) {
      column = fmt::format("CAST({} AS DECIMAL({},{}))", column, f.precision, f.scale);
    } else if (f.type == DataType::decimal) {
      if (max_whole[c] + max_scale[c] > Decimal::kMaxDigits) {
        throw DataError(fmt::format(
            "parquet '{}': column '{}' holds decimals with {} digits before the point and "
            "others with {} after it, more than the 38 digits of a Parquet decimal: declare the "
            "column's precision and scale",
            path, f.name, max_whole[c], max_scale[c]));
      }
      column = fmt::format("CAST({} AS DECIMAL({},{}))", column, Decimal::kMaxDigits, max_scale[c]);
    }
    select += fmt::format("{}{} AS {}", c > 0 ? ", " : "", column, sql::quote_identifier(f.name));
  }
  // COPY takes no parameter for its file: the path is a quoted string literal.
  return fmt::format("COPY (SELECT {} FROM staging) TO {} (FORMAT parquet)", select,
                     quote_literal(path));
}

std::uint64_t Writer::finish() {
  State& s = *state_;
  if (s.finished) throw DestinationError(fmt::format("parquet '{}': written already", s.path));
  s.finished = true;
  s.appender->close();
  s.appender.reset();
  s.chunk.reset();
  std::string copy = s.copy_sql();
  s.con->execute(copy);
  return s.rows;
}

std::uint64_t write_file(const std::string& path, const Table& table, const WriteOptions& options) {
  Writer writer(path, table.schema(), options);
  writer.append(table);
  return writer.finish();
}

}  // namespace interloper::parquet
