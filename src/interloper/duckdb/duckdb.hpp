// RAII wrappers over DuckDB's C API (duckdb.h): databases, connections, prepared statements with
// bound values, results read chunk by chunk, data chunks built in place, and appenders.
//
// Every failure throws duckdb::Error, a DestinationError naming the database, what was being
// done, the statement and DuckDB's own message:
//
//   duckdb::Database db(":memory:", {{"memory_limit", "64MB"}});
//   duckdb::Connection con(db);
//   con.execute("CREATE TABLE t (k BIGINT, v VARCHAR)");
//   duckdb::Statement insert = con.prepare("INSERT INTO t VALUES (?, ?)");
//   insert.bind_int(1, 7);
//   insert.bind_text(2, "seven");
//   insert.execute();
//   duckdb::Result result = con.query("SELECT k, v FROM t");
//   while (std::optional<duckdb::Chunk> chunk = result.next()) {
//     const int64_t* k = chunk->data<int64_t>(0);
//     for (idx_t row = 0; row < chunk->size(); ++row) use(k[row], chunk->text(1, row));
//   }
//
// A Database may be shared by connections on several threads; a Connection, and everything made
// from it (statements, results, appenders), belongs to one thread at a time and must not outlive
// its Connection, which must not outlive its Database.
#pragma once

#include <duckdb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interloper/error.hpp"

namespace interloper::duckdb {

// A failure reported by DuckDB. what(): "duckdb 'PATH': WHAT: MESSAGE (statement: SQL)", the
// statement shortened to its first 300 bytes.
class Error : public DestinationError {
 public:
  Error(std::string_view database, std::string_view what, std::string_view message,
        std::string statement = {}, duckdb_error_type type = DUCKDB_ERROR_INVALID);
  // The SQL text that failed ("" when none, e.g. opening a database).
  const std::string& statement() const noexcept { return statement_; }
  // DuckDB's class of the error (DUCKDB_ERROR_CATALOG, DUCKDB_ERROR_INVALID_INPUT, ...).
  duckdb_error_type type() const noexcept { return type_; }
  // DuckDB's message alone.
  const std::string& message() const noexcept { return message_; }

 private:
  std::string statement_;
  std::string message_;
  duckdb_error_type type_;
};

// An owned duckdb_logical_type.
class LogicalType {
 public:
  explicit LogicalType(duckdb_type id);
  // DECIMAL(width, scale); width 1..38, scale 0..width.
  static LogicalType decimal(std::uint8_t width, std::uint8_t scale);
  // Takes ownership of `type` (from duckdb_column_logical_type and the like).
  static LogicalType adopt(duckdb_logical_type type) noexcept { return LogicalType(type); }
  ~LogicalType();
  LogicalType(LogicalType&& other) noexcept : type_(std::exchange(other.type_, nullptr)) {}
  LogicalType& operator=(LogicalType&& other) noexcept;
  LogicalType(const LogicalType&) = delete;
  LogicalType& operator=(const LogicalType&) = delete;

  duckdb_logical_type get() const noexcept { return type_; }
  duckdb_type id() const noexcept { return duckdb_get_type_id(type_); }
  // Of a DECIMAL: its width, its scale and how a value is held (SMALLINT, INTEGER, BIGINT or
  // HUGEINT).
  std::uint8_t decimal_width() const noexcept { return duckdb_decimal_width(type_); }
  std::uint8_t decimal_scale() const noexcept { return duckdb_decimal_scale(type_); }
  duckdb_type decimal_storage() const noexcept { return duckdb_decimal_internal_type(type_); }
  // The alias a type is known by ("JSON" for the JSON type, a VARCHAR), or "".
  std::string alias() const;

 private:
  explicit LogicalType(duckdb_logical_type type) noexcept : type_(type) {}
  duckdb_logical_type type_ = nullptr;
};

class Connection;

class Database {
 public:
  // Opens (creating) the database file `path`, or an in-memory database for ":memory:". Each
  // option is a DuckDB setting given at start ("memory_limit", "temp_directory", "threads",
  // ...). Throws Error naming the path and DuckDB's message.
  explicit Database(std::string path = ":memory:",
                    const std::vector<std::pair<std::string, std::string>>& options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  duckdb_database get() const noexcept { return db_; }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
  duckdb_database db_ = nullptr;
};

class Chunk;
class Result;
class Statement;

class Connection {
 public:
  explicit Connection(Database& db);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  duckdb_connection get() const noexcept { return con_; }
  const std::string& database() const noexcept { return database_; }
  // Runs `sql` (one statement or several separated by ';'), discarding any rows.
  void execute(std::string_view sql);
  // Runs one statement and returns its rows, read chunk by chunk as DuckDB produces them.
  Result query(std::string_view sql);
  // Prepares one statement with `?` (or `$1`) parameters.
  Statement prepare(std::string_view sql);

 private:
  std::string database_;
  duckdb_connection con_ = nullptr;
};

// The rows of a statement, pulled one chunk (at most duckdb_vector_size() rows) at a time.
class Result {
 public:
  ~Result();
  Result(Result&& other) noexcept;
  Result& operator=(Result&&) = delete;
  Result(const Result&) = delete;

  std::size_t column_count();
  std::string column_name(std::size_t column);
  LogicalType column_type(std::size_t column);
  // Rows an INSERT, UPDATE or DELETE changed.
  std::uint64_t rows_changed();
  // The next chunk, or nullopt when every row was read. Throws Error when the statement fails
  // while its rows are produced (a corrupt file it reads, a failed cast).
  std::optional<Chunk> next();

 private:
  friend class Connection;
  friend class Statement;
  Result(std::string database, std::string statement) noexcept
      : database_(std::move(database)), statement_(std::move(statement)) {}
  std::string database_;
  std::string statement_;
  duckdb_result result_{};
  bool valid_ = false;
  duckdb_prepared_statement statement_owned_ = nullptr;  // Connection::query's statement
};

// A prepared statement. Parameters are numbered from 1. Bindings stay until rebound or cleared,
// so one statement runs many times.
class Statement {
 public:
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;

  duckdb_prepared_statement get() const noexcept { return stmt_; }
  const std::string& sql() const noexcept { return sql_; }
  std::size_t parameter_count() const noexcept { return duckdb_nparams(stmt_); }
  // The type of result column `column` as prepared (before running).
  std::size_t column_count() const noexcept {
    return duckdb_prepared_statement_column_count(stmt_);
  }
  std::string column_name(std::size_t column) const;
  LogicalType column_type(std::size_t column) const;

  void bind_null(std::size_t index);
  void bind_bool(std::size_t index, bool value);
  void bind_int(std::size_t index, std::int64_t value);
  void bind_double(std::size_t index, double value);
  void bind_text(std::size_t index, std::string_view value);
  // A DECIMAL(width, scale) whose unscaled value is `unscaled`.
  void bind_decimal(std::size_t index, __int128 unscaled, std::uint8_t width, std::uint8_t scale);
  // Days since 1970-01-01.
  void bind_date(std::size_t index, std::int32_t days);
  // Microseconds since 1970-01-01 00:00:00 UTC, as a TIMESTAMP WITH TIME ZONE.
  void bind_timestamp(std::size_t index, std::int64_t micros);
  void clear_bindings();

  // Runs the statement with its bindings; the rows are produced as they are read.
  Result execute();

 private:
  friend class Connection;
  Statement(std::string database, std::string sql) noexcept
      : database_(std::move(database)), sql_(std::move(sql)) {}
  void check(duckdb_state state, std::size_t index);
  std::string database_;
  std::string sql_;
  duckdb_prepared_statement stmt_ = nullptr;
};

// A data chunk: up to duckdb_vector_size() rows of typed columns, each a vector of values laid
// out as DuckDB holds them (BIGINT as int64_t, DOUBLE as double, BOOLEAN as bool, DATE as
// int32_t days, TIMESTAMP WITH TIME ZONE as int64_t microseconds, DECIMAL by its storage type,
// VARCHAR as duckdb_string_t) and a validity mask.
class Chunk {
 public:
  // An empty chunk with these column types, to fill and append.
  explicit Chunk(const std::vector<LogicalType>& types);
  // A chunk DuckDB owns (a table function's output), used in place and never destroyed.
  static Chunk borrow(duckdb_data_chunk chunk) noexcept {
    Chunk out(chunk);
    out.owned_ = false;
    return out;
  }
  ~Chunk();
  Chunk(Chunk&& other) noexcept
      : chunk_(std::exchange(other.chunk_, nullptr)), owned_(other.owned_) {}
  Chunk& operator=(Chunk&& other) noexcept;
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;

  duckdb_data_chunk get() const noexcept { return chunk_; }
  static std::size_t capacity() noexcept { return duckdb_vector_size(); }
  std::size_t size() const noexcept { return duckdb_data_chunk_get_size(chunk_); }
  std::size_t column_count() const noexcept { return duckdb_data_chunk_get_column_count(chunk_); }
  // Sets the number of filled rows.
  void set_size(std::size_t rows) noexcept { duckdb_data_chunk_set_size(chunk_, rows); }
  // Empties the chunk for refilling (every row valid again, strings released).
  void reset() noexcept { duckdb_data_chunk_reset(chunk_); }
  duckdb_vector vector(std::size_t column) const noexcept {
    return duckdb_data_chunk_get_vector(chunk_, column);
  }
  template <typename T>
  T* data(std::size_t column) const noexcept {
    return static_cast<T*>(duckdb_vector_get_data(vector(column)));
  }

  bool is_null(std::size_t column, std::size_t row) const noexcept {
    std::uint64_t* validity = duckdb_vector_get_validity(vector(column));
    return validity != nullptr && !duckdb_validity_row_is_valid(validity, row);
  }
  void set_null(std::size_t column, std::size_t row) noexcept;
  // A VARCHAR cell; the bytes are copied into the chunk. `text` must be valid UTF-8.
  void set_text(std::size_t column, std::size_t row, std::string_view text) noexcept {
    duckdb_vector_assign_string_element_len(vector(column), row, text.data(), text.size());
  }
  // A VARCHAR (or BLOB) cell, valid while the chunk lives unchanged.
  std::string_view text(std::size_t column, std::size_t row) const noexcept {
    duckdb_string_t* s = data<duckdb_string_t>(column) + row;
    return {duckdb_string_t_data(s), duckdb_string_t_length(*s)};
  }

 private:
  friend class Result;
  explicit Chunk(duckdb_data_chunk chunk) noexcept : chunk_(chunk) {}
  duckdb_data_chunk chunk_ = nullptr;
  bool owned_ = true;
};

// Appends rows to one table, a chunk at a time (DuckDB's fastest way in). Rows become visible
// to the connection as it flushes (every few chunks, at flush() and at close()). Destruction
// without close() drops the rows not yet flushed.
class Appender {
 public:
  // The table `table` of `schema` (the default schema when "").
  Appender(Connection& con, std::string_view table, std::string_view schema = {});
  ~Appender();
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;

  std::size_t column_count() const noexcept { return duckdb_appender_column_count(app_); }
  // The type of the table's column `column`.
  LogicalType column_type(std::size_t column) const;
  // Appends the chunk's rows; a column whose type differs from the table's is cast. Throws
  // Error (a constraint, a failed cast), after which the appender is unusable.
  void append(const Chunk& chunk);
  void flush();
  // Flushes and releases the appender.
  void close();

 private:
  Error error(std::string_view what) const;
  std::string database_;
  std::string table_;
  duckdb_appender app_ = nullptr;
};

}  // namespace interloper::duckdb
