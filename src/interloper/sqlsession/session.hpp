// SqlSession: one connection to a SQL engine, as the SQL destination and the SQL state store use
// it. Statements with bound values, transactions, bulk append, an advisory lock, the read-only
// guard of `sql:` asset bodies, and a Dialect for what differs in the text of statements. One
// implementation per engine (sqlite_session.hpp, postgres_session.hpp); nothing above this layer
// names an engine's API.
//
//   sql::SqliteSession db("/data/warehouse.db");
//   sql::Transaction tx(db);
//   db.lock("shop__orders", keys);
//   db.run("DELETE FROM " + db.dialect().quote("t") + " WHERE d >= " +
//          db.dialect().placeholder(1), {{Value(day)}});
//   auto append = db.append("t", {"d", "n"}, {DataType::date, DataType::int64});
//   append->add(cells, 0, rows);
//   append->finish();
//   tx.commit();
//
// A session is used by one thread at a time. Every failure is an SqlError (a DestinationError)
// naming the database (a file's path, a URL with its password redacted) and the engine's words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/error.hpp"

namespace interloper::sql {

// A failure of a statement, with what kind of failure it was where a caller acts on it.
class SqlError : public DestinationError {
 public:
  enum class Kind : std::uint8_t {
    other,
    constraint,  // a unique, primary key, not-null or check constraint refused a row
    conflict,    // the database was busy or the transaction lost a race: running again may pass
    timeout,     // a statement ran past its time and was stopped
  };
  SqlError(const std::string& message, Kind kind = Kind::other)
      : DestinationError(message), kind_(kind) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

// What differs between engines in the text of a statement.
class Dialect {
 public:
  virtual ~Dialect() = default;
  // "sqlite", "postgresql": how messages name the engine.
  virtual std::string_view name() const = 0;
  // `name` as an identifier that names exactly itself.
  virtual std::string quote(std::string_view name) const;
  // The placeholder of the `index`-th (from 1) bound value: "?" or "$1".
  virtual std::string placeholder(std::size_t index) const = 0;
  // The column type values of `type` are stored as ("" where the engine takes untyped columns).
  virtual std::string type_name(DataType type) const = 0;
  // The longest identifier the engine keeps whole, in bytes (0: no limit).
  virtual std::size_t max_identifier() const = 0;
  // An INSERT of one row into `table` with `columns` as placeholders 1..n, which replaces the
  // other columns of the row whose first `keys` columns are equal (does nothing when every
  // column is a key).
  virtual std::string upsert(std::string_view table, const std::vector<std::string>& columns,
                             std::size_t keys) const;
};

// Rows appended to one table in bulk (INSERT of prepared rows, PostgreSQL's binary COPY). No other
// statement runs on the session while an Appender is open. finish() ends it; destroying it
// unfinished abandons what it sent (the caller's transaction then rolls back).
class Appender {
 public:
  // One column of values per appended column, in the order the Appender was opened with.
  using Columns = std::vector<const std::vector<Value>*>;
  virtual ~Appender() = default;
  // Appends rows [begin, end) of `cells`.
  virtual void add(const Columns& cells, std::size_t begin, std::size_t end) = 0;
  // Appends the rows of `cells` numbered in `rows`, in that order.
  virtual void add(const Columns& cells, std::span<const std::size_t> rows) = 0;
  virtual void finish() = 0;
};

// A `sql:` body run under the engine's read-only guard.
struct GuardedQuery {
  std::string_view sql;  // exactly one statement; named parameters are written ":name"
  std::vector<std::pair<std::string, Value>> params;
  // The tables the statement may read (every table when nullopt).
  std::optional<std::vector<std::string>> readable;
  std::string asset;   // names the asset in messages ("asset 'NAME': ..."), when not empty
  std::string schema;  // where unqualified names are looked up first, on engines with schemas
  double timeout_seconds = 0;  // 0: no limit
};

class SqlSession {
 public:
  enum class Access : std::uint8_t { write, read };

  virtual ~SqlSession() = default;
  virtual const Dialect& dialect() const = 0;
  // The database as messages name it: a file's path, a URL with its password redacted.
  virtual const std::string& display() const = 0;

  // Runs statements without parameters or results (schema changes), one or several.
  virtual void execute(std::string_view sql) = 0;
  // Runs one statement with `params` bound to placeholders 1..n; returns the rows it changed.
  virtual std::int64_t run(std::string_view sql, std::span<const Value> params = {}) = 0;
  // Runs one query and hands its rows to `sink` in tables of at most `batch_rows` rows (all in
  // one when 0; at least one table, empty when no row matched). Column c is named and typed
  // by `columns.field(c)`: a value is read as that type (DataType::null: as the engine types
  // it); an empty `columns` takes names and types from the result.
  virtual void query(std::string_view sql, std::span<const Value> params, const Schema& columns,
                     const std::function<void(Table&&)>& sink, std::size_t batch_rows = 0) = 0;
  // The whole result of query() as one table.
  Table query(std::string_view sql, std::span<const Value> params = {},
              const Schema& columns = Schema());

  // Transactions do not nest. begin(write) takes the engine's write lock where it has one
  // (SQLite's BEGIN IMMEDIATE); begin(read) reads one snapshot where the engine gives one.
  virtual void begin(Access access = Access::write) = 0;
  virtual void commit() = 0;
  // Never throws: a rollback that fails leaves the engine to abandon the transaction.
  virtual void rollback() noexcept = 0;
  virtual bool in_transaction() const = 0;

  // Takes, in a write transaction and until it ends, a lock on each of `keys` within `scope`,
  // in sorted order, so that writers of one key take turns and writers of overlapping sets
  // never wait on each other in a cycle. Engines whose write transaction already excludes
  // every other writer take nothing.
  virtual void lock(std::string_view scope, std::span<const std::string> keys) = 0;

  // Opens a bulk append of `columns` to `table` (quoted here, qualified when `schema` is not
  // empty); `types[c]` is the type column c is stored as, so that an int goes into a double
  // column and a date into a timestamp column as that type.
  virtual std::unique_ptr<Appender> append(std::string_view schema, std::string_view table,
                                           const std::vector<std::string>& columns,
                                           const std::vector<DataType>& types) = 0;

  // Runs a `sql:` body read-only: one statement that writes nothing, changes no schema, runs no
  // transaction control, reads only `query.readable`, and stops after `query.timeout_seconds`.
  // Result columns that come straight from a table are typed as `declared` says of that
  // column; others as the engine types them.
  using DeclaredType =
      std::function<std::optional<DataType>(const std::string& table, const std::string& column)>;
  virtual Table guarded_query(const GuardedQuery& query, const DeclaredType& declared) = 0;
};

// A transaction for the scope of a block: rolled back when left without commit().
class Transaction {
 public:
  explicit Transaction(SqlSession& session, SqlSession::Access access = SqlSession::Access::write)
      : session_(session) {
    session_.begin(access);
  }
  ~Transaction() {
    if (!done_) session_.rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    session_.commit();
    done_ = true;
  }

 private:
  SqlSession& session_;
  bool done_ = false;
};

}  // namespace interloper::sql
