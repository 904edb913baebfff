#include "interloper/destination/sqlite.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

namespace interloper::sqlite {

Database::Database(std::string path) : path_(std::move(path)) {
  std::filesystem::path file(path_);
  if (file.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec) {
      throw DestinationError(fmt::format("sqlite '{}': cannot create directory '{}': {}", path_,
                                         file.parent_path().string(), ec.message()));
    }
  }
  int rc =
      sqlite3_open_v2(path_.c_str(), &db_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw DestinationError(fmt::format("sqlite '{}': cannot open: {}", path_, message));
  }
  sqlite3_busy_timeout(db_, 10000);
  exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
}

Database::~Database() { sqlite3_close_v2(db_); }

void Database::exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw DestinationError(fmt::format("sqlite '{}': {}: {}", path_, sql, message));
  }
}

void Database::fail(std::string_view what) const {
  throw DestinationError(fmt::format("sqlite '{}': {}: {}", path_, what, sqlite3_errmsg(db_)));
}

Statement::Statement(Database& db, std::string_view sql) : db_(&db) {
  if (sqlite3_prepare_v2(db.get(), sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK) {
    db.fail(fmt::format("cannot prepare '{}'", sql));
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check(int rc, std::string_view what) {
  if (rc != SQLITE_OK) db_->fail(fmt::format("{} in '{}'", what, sqlite3_sql(stmt_)));
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail(fmt::format("cannot run '{}'", sqlite3_sql(stmt_)));
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

void Statement::bind_null(int index) { check(sqlite3_bind_null(stmt_, index), "bind"); }
void Statement::bind_int(int index, std::int64_t value) {
  check(sqlite3_bind_int64(stmt_, index, value), "bind");
}
void Statement::bind_double(int index, double value) {
  check(sqlite3_bind_double(stmt_, index, value), "bind");
}
void Statement::bind_text(int index, std::string_view text, bool copy) {
  check(sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                          copy ? SQLITE_TRANSIENT : SQLITE_STATIC),
        "bind");
}

std::string Statement::column_text(int index) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
  return text ? std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index)))
              : std::string();
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

}  // namespace interloper::sqlite
