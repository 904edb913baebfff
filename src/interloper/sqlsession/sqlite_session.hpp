// SqlSession over one SQLite database file (see session.hpp).
//
//   sql::SqliteSession db("/data/warehouse.db");
//   db.run("INSERT INTO t (k) VALUES (?)", {{Value("a")}});
#pragma once

#include <memory>
#include <string>

#include "interloper/sqlite/sqlite.hpp"
#include "interloper/sqlsession/session.hpp"

namespace interloper::sql {

class SqliteDialect final : public Dialect {
 public:
  std::string_view name() const override { return "sqlite"; }
  std::string placeholder(std::size_t) const override { return "?"; }
  std::string type_name(DataType type) const override;
  std::size_t max_identifier() const override { return 0; }
};

class SqliteSession final : public SqlSession {
 public:
  // Opens (creating) `path` for reading and writing, or an existing file read-only.
  explicit SqliteSession(std::string path,
                         sqlite::Database::Mode mode = sqlite::Database::Mode::read_write);
  ~SqliteSession() override;

  const Dialect& dialect() const override { return dialect_; }
  const std::string& display() const override { return db_.path(); }
  void execute(std::string_view sql) override;
  std::int64_t run(std::string_view sql, std::span<const Value> params = {}) override;
  void query(std::string_view sql, std::span<const Value> params, const Schema& columns,
             const std::function<void(Table&&)>& sink, std::size_t batch_rows = 0) override;
  using SqlSession::query;
  void begin(Access access = Access::write) override;
  void commit() override;
  void rollback() noexcept override;
  bool in_transaction() const override;
  void lock(std::string_view, std::span<const std::string>) override {}
  std::unique_ptr<Appender> append(std::string_view schema, std::string_view table,
                                   const std::vector<std::string>& columns,
                                   const std::vector<DataType>& types) override;
  Table guarded_query(const GuardedQuery& query, const DeclaredType& declared) override;

  // The connection, for what only SQLite has (PRAGMA data_version, temporary tables).
  sqlite::Database& database() { return db_; }
  // Rethrows the DestinationError being handled as an SqlError of the kind SQLite's last code
  // says.
  [[noreturn]] void rethrow() const;

 private:
  class Inserter;
  struct Guard;
  SqliteDialect dialect_;
  sqlite::Database db_;
  std::unique_ptr<Guard> guard_;  // the read-only connection of guarded queries, once used
};

}  // namespace interloper::sql
