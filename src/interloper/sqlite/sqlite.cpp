#include "interloper/sqlite/sqlite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

namespace interloper::sqlite {

namespace {

// More distinct texts than this (ad hoc queries) empty the cache rather than grow it.
constexpr std::size_t kMaxCached = 64;

// How long a statement waits for another connection's lock before reporting "database is locked".
constexpr std::chrono::milliseconds kBusyTimeout(10000);

// Whether `sql` starts with a statement that changes the schema.
bool changes_schema(std::string_view sql) {
  std::size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i]))) ++i;
  auto starts = [&](std::string_view word) {
    if (sql.size() - i < word.size()) return false;
    for (std::size_t k = 0; k < word.size(); ++k) {
      if (std::toupper(static_cast<unsigned char>(sql[i + k])) != word[k]) return false;
    }
    return true;
  };
  return starts("CREATE") || starts("ALTER") || starts("DROP");
}

}  // namespace

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
  sqlite3_busy_timeout(db_, static_cast<int>(kBusyTimeout.count()));
  configure();
}

void Database::configure() {
  // Switching a fresh file to WAL takes an exclusive lock, and SQLite reports SQLITE_BUSY at once
  // (without calling the busy handler) when another process is opening the same new file at that
  // moment. The switch is idempotent and persists in the file, so retry it until the timeout.
  constexpr const char* kSetup =
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;";
  auto deadline = std::chrono::steady_clock::now() + kBusyTimeout;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    int rc = sqlite3_exec(db_, kSetup, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() >= deadline) {
      fail(kSetup);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

Database::~Database() {
  cache_.clear();  // finalize before closing
  sqlite3_close_v2(db_);
}

void Database::exec(const char* sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &error);
  if (changes_schema(sql)) clear_cache();
  if (rc != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw DestinationError(fmt::format("sqlite '{}': {}: {}", path_, sql, message));
  }
}

void Database::run(std::string_view sql) {
  CachedStatement stmt = cached(sql);
  int rc = sqlite3_step(stmt->get());
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw DestinationError(fmt::format("sqlite '{}': {}: {}", path_, sql, sqlite3_errmsg(db_)));
  }
}

CachedStatement Database::cached(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    if (cache_.size() >= kMaxCached) clear_cache();
    auto statement = std::make_unique<Statement>(*this, sql, true);
    it = cache_.emplace(std::string(sql), Entry{std::move(statement), false}).first;
  } else if (it->second.in_use) {
    auto owned = std::make_unique<Statement>(*this, sql);
    Statement* raw = owned.get();
    return CachedStatement(raw, nullptr, std::move(owned));
  }
  it->second.in_use = true;
  return CachedStatement(it->second.statement.get(), &it->second.in_use, nullptr);
}

void Database::clear_cache() {
  for (auto it = cache_.begin(); it != cache_.end();) {
    it = it->second.in_use ? std::next(it) : cache_.erase(it);
  }
}

void Database::fail(std::string_view what) const {
  throw DestinationError(fmt::format("sqlite '{}': {}: {}", path_, what, sqlite3_errmsg(db_)));
}

Statement::Statement(Database& db, std::string_view sql, bool persistent) : db_(&db) {
  if (sqlite3_prepare_v3(db.get(), sql.data(), static_cast<int>(sql.size()),
                         persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt_,
                         nullptr) != SQLITE_OK) {
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

CachedStatement::CachedStatement(Statement* statement, bool* in_use,
                                 std::unique_ptr<Statement> owned)
    : statement_(statement), in_use_(in_use), owned_(std::move(owned)) {}

CachedStatement::CachedStatement(CachedStatement&& other) noexcept
    : statement_(other.statement_), in_use_(other.in_use_), owned_(std::move(other.owned_)) {
  other.statement_ = nullptr;
  other.in_use_ = nullptr;
}

CachedStatement::~CachedStatement() {
  if (statement_) statement_->reset();
  if (in_use_) *in_use_ = false;
}

Transaction::Transaction(Database& db) : db_(db) { db_.run("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  db_.run("COMMIT");
  done_ = true;
}

}  // namespace interloper::sqlite
