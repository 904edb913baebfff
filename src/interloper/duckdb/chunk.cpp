// Data chunks and appenders.
#include <fmt/format.h>

#include "interloper/duckdb/duckdb.hpp"

namespace interloper::duckdb {

Chunk::Chunk(const std::vector<LogicalType>& types) {
  std::vector<duckdb_logical_type> raw;
  raw.reserve(types.size());
  for (const LogicalType& t : types) raw.push_back(t.get());
  chunk_ = duckdb_create_data_chunk(raw.data(), raw.size());
}

Chunk::~Chunk() {
  if (chunk_ != nullptr && owned_) duckdb_destroy_data_chunk(&chunk_);
}

Chunk& Chunk::operator=(Chunk&& other) noexcept {
  if (this != &other) {
    if (chunk_ != nullptr && owned_) duckdb_destroy_data_chunk(&chunk_);
    chunk_ = std::exchange(other.chunk_, nullptr);
    owned_ = other.owned_;
  }
  return *this;
}

void Chunk::set_null(std::size_t column, std::size_t row) noexcept {
  duckdb_vector v = vector(column);
  duckdb_vector_ensure_validity_writable(v);
  duckdb_validity_set_row_invalid(duckdb_vector_get_validity(v), row);
}

Appender::Appender(Connection& con, std::string_view table, std::string_view schema)
    : database_(con.database()), table_(table) {
  std::string schema_name(schema);
  if (duckdb_appender_create(con.get(), schema.empty() ? nullptr : schema_name.c_str(),
                             table_.c_str(), &app_) != DuckDBSuccess) {
    Error e = error("creating an appender failed");
    if (app_ != nullptr) duckdb_appender_destroy(&app_);
    throw e;
  }
}

Appender::~Appender() {
  if (app_ != nullptr) duckdb_appender_destroy(&app_);
}

LogicalType Appender::column_type(std::size_t column) const {
  return LogicalType::adopt(duckdb_appender_column_type(app_, column));
}

Error Appender::error(std::string_view what) const {
  duckdb_error_data data = duckdb_appender_error_data(app_);
  std::string message = "unknown error";
  duckdb_error_type type = DUCKDB_ERROR_INVALID;
  if (data != nullptr) {
    if (duckdb_error_data_has_error(data)) {
      message = duckdb_error_data_message(data);
      type = duckdb_error_data_error_type(data);
    }
    duckdb_destroy_error_data(&data);
  }
  return Error(database_, fmt::format("{} (table {})", what, table_), message, {}, type);
}

void Appender::append(const Chunk& chunk) {
  if (duckdb_append_data_chunk(app_, chunk.get()) != DuckDBSuccess) throw error("appending failed");
}

void Appender::flush() {
  if (duckdb_appender_flush(app_) != DuckDBSuccess) throw error("flushing appended rows failed");
}

void Appender::close() {
  if (duckdb_appender_close(app_) != DuckDBSuccess) throw error("closing the appender failed");
  duckdb_appender_destroy(&app_);
  app_ = nullptr;
}

}  // namespace interloper::duckdb
