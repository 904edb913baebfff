// Errors, logical types, databases and connections.
#include <fmt/format.h>

#include <memory>

#include "interloper/duckdb/duckdb.hpp"

namespace interloper::duckdb {
namespace {

constexpr std::size_t kStatementShown = 300;

std::string describe(std::string_view database, std::string_view what, std::string_view message,
                     std::string_view statement) {
  std::string text = fmt::format("duckdb '{}': {}: {}", database, what, message);
  if (!statement.empty()) {
    std::string_view shown = statement.substr(0, kStatementShown);
    text += fmt::format(" (statement: {}{})", shown, shown.size() < statement.size() ? "..." : "");
  }
  return text;
}

}  // namespace

Error::Error(std::string_view database, std::string_view what, std::string_view message,
             std::string statement, duckdb_error_type type)
    : DestinationError(describe(database, what, message, statement)),
      statement_(std::move(statement)),
      message_(message),
      type_(type) {}

LogicalType::LogicalType(duckdb_type id) : type_(duckdb_create_logical_type(id)) {}

LogicalType LogicalType::decimal(std::uint8_t width, std::uint8_t scale) {
  return LogicalType(duckdb_create_decimal_type(width, scale));
}

LogicalType::~LogicalType() {
  if (type_ != nullptr) duckdb_destroy_logical_type(&type_);
}

LogicalType& LogicalType::operator=(LogicalType&& other) noexcept {
  if (this != &other) {
    if (type_ != nullptr) duckdb_destroy_logical_type(&type_);
    type_ = std::exchange(other.type_, nullptr);
  }
  return *this;
}

std::string LogicalType::alias() const {
  char* alias = duckdb_logical_type_get_alias(type_);
  if (alias == nullptr) return {};
  std::string out(alias);
  duckdb_free(alias);
  return out;
}

Database::Database(std::string path,
                   const std::vector<std::pair<std::string, std::string>>& options)
    : path_(std::move(path)) {
  duckdb_config config = nullptr;
  if (duckdb_create_config(&config) != DuckDBSuccess) {
    throw Error(path_, "open", "cannot create a configuration");
  }
  std::unique_ptr<duckdb_config, void (*)(duckdb_config*)> owned(&config, duckdb_destroy_config);
  for (const auto& [name, value] : options) {
    if (duckdb_set_config(config, name.c_str(), value.c_str()) != DuckDBSuccess) {
      throw Error(path_, "open", fmt::format("setting {} = '{}' is refused", name, value));
    }
  }
  char* message = nullptr;
  const char* file = path_ == ":memory:" ? nullptr : path_.c_str();
  if (duckdb_open_ext(file, &db_, config, &message) != DuckDBSuccess) {
    std::string text = message != nullptr ? message : "unknown error";
    duckdb_free(message);
    db_ = nullptr;
    throw Error(path_, "open", text);
  }
}

Database::~Database() {
  if (db_ != nullptr) duckdb_close(&db_);
}

Connection::Connection(Database& db) : database_(db.path()) {
  if (duckdb_connect(db.get(), &con_) != DuckDBSuccess) {
    con_ = nullptr;
    throw Error(database_, "connect", "cannot connect");
  }
}

Connection::~Connection() {
  if (con_ != nullptr) duckdb_disconnect(&con_);
}

void Connection::execute(std::string_view sql) {
  std::string text(sql);
  duckdb_result result;
  duckdb_state state = duckdb_query(con_, text.c_str(), &result);
  if (state != DuckDBSuccess) {
    const char* message = duckdb_result_error(&result);
    Error error(database_, "query failed", message != nullptr ? message : "unknown error",
                std::move(text), duckdb_result_error_type(&result));
    duckdb_destroy_result(&result);
    throw error;
  }
  duckdb_destroy_result(&result);
}

Result Connection::query(std::string_view sql) {
  Statement statement = prepare(sql);
  Result result = statement.execute();
  // The result keeps the prepared statement alive until it is read.
  result.statement_owned_ = std::exchange(statement.stmt_, nullptr);
  return result;
}

Statement Connection::prepare(std::string_view sql) {
  Statement statement(database_, std::string(sql));
  if (duckdb_prepare(con_, statement.sql_.c_str(), &statement.stmt_) != DuckDBSuccess) {
    const char* message = duckdb_prepare_error(statement.stmt_);
    throw Error(database_, "prepare failed", message != nullptr ? message : "unknown error",
                statement.sql_);
  }
  return statement;
}

}  // namespace interloper::duckdb
