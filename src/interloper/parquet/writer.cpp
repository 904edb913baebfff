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
#include "interloper/parquet/writer_state.hpp"
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
  std::vector<duckdb::LogicalType> types;
  s.streamed = true;
  for (const Field& f : s.schema.fields()) {
    types.push_back(staging_type(f));
    if (f.type == DataType::decimal && f.precision == 0) s.streamed = false;
  }
  if (s.streamed) {
    s.types = std::move(types);
    s.start_stream();
    return;
  }
  // A temporary table: DuckDB neither compresses nor checkpoints it, and spills it past the limit.
  std::string create = "CREATE TEMPORARY TABLE staging (";
  for (std::size_t c = 0; c < s.schema.size(); ++c) {
    create += fmt::format("{}c{} {}", c > 0 ? ", " : "", c, sql_type(s.schema.field(c)));
  }
  create += ")";
  s.con->execute(create);
  s.appender.emplace(*s.con, "staging");
  s.staging_chunk.emplace(types);
  s.chunk = &*s.staging_chunk;
}

Writer::~Writer() = default;

std::uint64_t Writer::rows() const noexcept { return state_->rows; }

void Writer::append(const Table& batch) {
  State& s = *state_;
  if (s.finished || s.broken) {
    throw DestinationError(fmt::format("parquet '{}': the writer is finished or failed", s.path));
  }
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
  try {
    append_rows(batch, from);
  } catch (...) {
    s.broken = true;  // rows of the batch may be written: finish() must not end the file
    throw;
  }
}

void Writer::append_rows(const Table& batch, const std::vector<std::size_t>& from) {
  State& s = *state_;
  if (s.streamed) {
    s.hand_over(batch, from);
    s.rows += batch.num_rows();
    return;
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

std::string Writer::State::copy_sql(std::string_view source) const {
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
  return fmt::format("COPY (SELECT {} FROM {}) TO {} (FORMAT parquet)", select, source,
                     quote_literal(path));
}

std::uint64_t Writer::finish() {
  State& s = *state_;
  if (s.finished || s.broken) {
    throw DestinationError(fmt::format("parquet '{}': the writer is finished or failed", s.path));
  }
  s.finished = true;
  if (s.streamed) {
    s.end_stream();
    return s.rows;
  }
  s.appender->close();
  s.appender.reset();
  s.chunk = nullptr;
  s.staging_chunk.reset();
  std::string copy = s.copy_sql("staging");
  try {
    s.con->execute(copy);
  } catch (...) {
    std::error_code ec;
    fs::remove(s.path, ec);  // no half-written file stays behind
    throw;
  }
  return s.rows;
}

std::uint64_t write_file(const std::string& path, const Table& table, const WriteOptions& options) {
  Writer writer(path, table.schema(), options);
  writer.append(table);
  return writer.finish();
}

}  // namespace interloper::parquet
