// Prepared statements and their results.
#include <fmt/format.h>

#include "interloper/duckdb/duckdb.hpp"

namespace interloper::duckdb {
namespace {

duckdb_hugeint to_hugeint(__int128 v) noexcept {
  const auto u = static_cast<unsigned __int128>(v);
  return {static_cast<std::uint64_t>(u), static_cast<std::int64_t>(u >> 64)};
}

}  // namespace

Statement::~Statement() {
  if (stmt_ != nullptr) duckdb_destroy_prepare(&stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : database_(std::move(other.database_)),
      sql_(std::move(other.sql_)),
      stmt_(std::exchange(other.stmt_, nullptr)) {}

std::string Statement::column_name(std::size_t column) const {
  const char* name = duckdb_prepared_statement_column_name(stmt_, column);
  if (name == nullptr) return {};
  std::string out(name);
  duckdb_free(const_cast<char*>(name));
  return out;
}

LogicalType Statement::column_type(std::size_t column) const {
  return LogicalType::adopt(duckdb_prepared_statement_column_logical_type(stmt_, column));
}

void Statement::check(duckdb_state state, std::size_t index) {
  if (state != DuckDBSuccess) {
    const char* message = duckdb_prepare_error(stmt_);
    throw Error(database_, fmt::format("binding parameter {} failed", index),
                message != nullptr ? message : "no such parameter or a wrong type", sql_);
  }
}

void Statement::bind_null(std::size_t index) { check(duckdb_bind_null(stmt_, index), index); }

void Statement::bind_bool(std::size_t index, bool value) {
  check(duckdb_bind_boolean(stmt_, index, value), index);
}

void Statement::bind_int(std::size_t index, std::int64_t value) {
  check(duckdb_bind_int64(stmt_, index, value), index);
}

void Statement::bind_double(std::size_t index, double value) {
  check(duckdb_bind_double(stmt_, index, value), index);
}

void Statement::bind_text(std::size_t index, std::string_view value) {
  check(duckdb_bind_varchar_length(stmt_, index, value.data(), value.size()), index);
}

void Statement::bind_decimal(std::size_t index, __int128 unscaled, std::uint8_t width,
                             std::uint8_t scale) {
  check(duckdb_bind_decimal(stmt_, index, duckdb_decimal{width, scale, to_hugeint(unscaled)}),
        index);
}

void Statement::bind_date(std::size_t index, std::int32_t days) {
  check(duckdb_bind_date(stmt_, index, duckdb_date{days}), index);
}

void Statement::bind_timestamp(std::size_t index, std::int64_t micros) {
  check(duckdb_bind_timestamp_tz(stmt_, index, duckdb_timestamp{micros}), index);
}

void Statement::clear_bindings() { check(duckdb_clear_bindings(stmt_), 0); }

Result Statement::execute() {
  Result result(database_, sql_);
  // A streaming result: rows are produced as they are fetched, never all held at once.
  duckdb_pending_result pending = nullptr;
  duckdb_state state = duckdb_pending_prepared_streaming(stmt_, &pending);
  if (state != DuckDBSuccess) {
    const char* message = duckdb_pending_error(pending);
    Error error(database_, "query failed", message != nullptr ? message : "unknown error", sql_);
    duckdb_destroy_pending(&pending);
    throw error;
  }
  state = duckdb_execute_pending(pending, &result.result_);
  duckdb_destroy_pending(&pending);
  result.valid_ = true;
  if (state != DuckDBSuccess) {
    const char* message = duckdb_result_error(&result.result_);
    throw Error(database_, "query failed", message != nullptr ? message : "unknown error", sql_,
                duckdb_result_error_type(&result.result_));
  }
  return result;
}

Result::~Result() {
  if (valid_) duckdb_destroy_result(&result_);
  if (statement_owned_ != nullptr) duckdb_destroy_prepare(&statement_owned_);
}

Result::Result(Result&& other) noexcept
    : database_(std::move(other.database_)),
      statement_(std::move(other.statement_)),
      result_(other.result_),
      valid_(std::exchange(other.valid_, false)),
      statement_owned_(std::exchange(other.statement_owned_, nullptr)) {}

std::size_t Result::column_count() { return duckdb_column_count(&result_); }

std::string Result::column_name(std::size_t column) {
  const char* name = duckdb_column_name(&result_, column);
  return name != nullptr ? name : "";
}

LogicalType Result::column_type(std::size_t column) {
  return LogicalType::adopt(duckdb_column_logical_type(&result_, column));
}

std::uint64_t Result::rows_changed() { return duckdb_rows_changed(&result_); }

std::optional<Chunk> Result::next() {
  duckdb_data_chunk chunk = duckdb_fetch_chunk(result_);
  if (chunk == nullptr) {
    const char* message = duckdb_result_error(&result_);
    if (message != nullptr && *message != '\0') {
      throw Error(database_, "reading rows failed", message, statement_,
                  duckdb_result_error_type(&result_));
    }
    return std::nullopt;
  }
  Chunk out(chunk);
  if (out.size() == 0) return std::nullopt;  // an empty chunk also ends the rows
  return out;
}

}  // namespace interloper::duckdb
