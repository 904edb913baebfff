// RAII wrappers over libpq, shared by the PostgreSQL destination and store.
//
// Every failure becomes a DestinationError "postgresql 'URL': WHAT: MESSAGE" on one line, where
// URL is the connection URL with its password replaced by *** — libpq's own messages are
// scrubbed of the password too, so no error built here can leak it.
//
//   postgres::Url url = postgres::parse_url("postgresql://me:secret@db/warehouse?schema=raw");
//   postgres::Pool pool(url);
//   auto conn = pool.acquire();                 // returned to the pool when it goes out of scope
//   postgres::Transaction tx(*conn);
//   postgres::Params params;
//   params.text("2026-01-01", postgres::oid::date);
//   conn->exec("DELETE FROM raw.\"t\" WHERE d >= $1", params);
//   tx.commit();
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "interloper/error.hpp"
#include "interloper/locator.hpp"

namespace interloper::postgres {

// Type OIDs of the built-in types we bind and read (pg_type.h is a server header).
namespace oid {
constexpr Oid unknown = 0;
constexpr Oid boolean = 16;
constexpr Oid int8 = 20;
constexpr Oid int2 = 21;
constexpr Oid int4 = 23;
constexpr Oid text = 25;
constexpr Oid float4 = 700;
constexpr Oid float8 = 701;
constexpr Oid varchar = 1043;
constexpr Oid date = 1082;
constexpr Oid timestamp = 1114;
constexpr Oid timestamptz = 1184;
constexpr Oid numeric = 1700;
constexpr Oid json = 114;
constexpr Oid jsonb = 3802;
}  // namespace oid

// A connection URL taken apart. `postgresql://` and `postgres://` URLs as libpq reads them
// (user, password, host, port, database, and every libpq parameter in the query string), plus
// our own parameters, which libpq never sees.
struct Url {
  std::string conninfo;  // what libpq connects with
  std::string redacted;  // the URL as given, password replaced by ***
  std::string password;  // as written in the URL ("" when none); scrubbed from messages
  std::vector<std::pair<std::string, std::string>> own;  // our parameters, in order
  // The value of our parameter `name`, or `fallback` when absent.
  std::string get(std::string_view name, std::string_view fallback = "") const;
};

// Reads `url` (a Locator of scheme postgresql or postgres); `own_parameters` are the query
// parameters that belong to us (e.g. "schema"). Adds connect_timeout=5 unless the URL or
// PGCONNECT_TIMEOUT sets one, so an unreachable host fails quickly. Throws DestinationError
// naming the redacted URL when libpq cannot read it.
Url parse_url(const Locator& url, const std::vector<std::string>& own_parameters);
// The same, from text (parse_locator first).
Url parse_url(std::string_view url, const std::vector<std::string>& own_parameters);
// The locator's redaction (locator.hpp), under the names this layer's callers know.
using interloper::hide_password;
using interloper::redact;

// Parameters for a query, all sent as text with an explicit type (or inferred by the server when
// the type is oid::unknown).
class Params {
 public:
  void text(std::string value, Oid type = oid::unknown);
  void null(Oid type = oid::unknown);
  std::size_t size() const { return values_.size(); }

 private:
  friend class Connection;
  // The values as libpq takes them (nullptr for NULL), valid while this lives.
  std::vector<const char*> pointers() const;
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
  std::vector<Oid> types_;
};

// An owned PGresult.
class Result {
 public:
  Result() = default;
  explicit Result(PGresult* result) : result_(result) {}
  Result(Result&& other) noexcept : result_(other.result_) { other.result_ = nullptr; }
  Result& operator=(Result&& other) noexcept;
  ~Result();
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;

  PGresult* get() const { return result_; }
  int rows() const { return result_ ? PQntuples(result_) : 0; }
  int columns() const { return result_ ? PQnfields(result_) : 0; }
  bool is_null(int row, int column) const { return PQgetisnull(result_, row, column) != 0; }
  std::string_view value(int row, int column) const {
    return {PQgetvalue(result_, row, column),
            static_cast<std::size_t>(PQgetlength(result_, row, column))};
  }
  std::int64_t int_value(int row, int column) const;

 private:
  PGresult* result_ = nullptr;
};

class Connection {
 public:
  // Connects (blocking, bounded by connect_timeout). Throws DestinationError "cannot connect".
  explicit Connection(std::shared_ptr<const Url> url);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  PGconn* get() const { return conn_; }
  const std::string& display() const { return url_->redacted; }
  // Whether the connection is still usable (the server did not go away).
  bool ok() const { return PQstatus(conn_) == CONNECTION_OK; }

  // Runs one or more statements without parameters. Throws on failure.
  Result exec(std::string_view sql);
  // Runs one statement with `params`; `binary` asks for binary result values. Throws on
  // failure (any status but COMMAND_OK / TUPLES_OK).
  Result exec(std::string_view sql, const Params& params, bool binary = false);
  // As exec(sql, params), for a statement run often: the first call on this connection prepares
  // it under a name (the parameter types of that call are kept for it), later ones execute it
  // by name, so the server parses it once and may keep its plan.
  Result exec_prepared(std::string_view sql, const Params& params);
  // Prepares `sql` (one statement) as the unnamed statement with the types of `params` and
  // describes it without running it: the result has no rows, and PQnfields, PQftype, PQfmod,
  // PQfname, PQnparams and PQparamtype give its columns and parameters. Throws on failure
  // (a syntax error, several statements).
  Result describe(std::string_view sql, const Params& params);

  // COPY ... FROM STDIN: start (the statement), put data, end. A failed end throws with the
  // server's message (a constraint, a bad value).
  void copy_start(std::string_view sql);
  void copy_put(const char* data, std::size_t size);
  void copy_end();

  // The message for `what` with libpq's error, on one line, scrubbed of the password.
  std::string message(std::string_view what, const PGresult* result = nullptr) const;
  [[noreturn]] void fail(std::string_view what, const PGresult* result = nullptr) const;

  // The SQLSTATE and the server's own words (its primary message, and its hint when it gave
  // one; no statement text, no position) of the last statement run on this connection, when it
  // failed; both empty after a statement that succeeded.
  const std::string& last_sqlstate() const { return last_sqlstate_; }
  const std::string& last_error() const { return last_error_; }

 private:
  Result check(PGresult* result, std::string_view sql);
  std::string last_sqlstate_, last_error_;
  std::shared_ptr<const Url> url_;
  PGconn* conn_ = nullptr;
  std::unordered_map<std::string, std::string> prepared_;  // statement text -> its name
};

// BEGIN on construction; ROLLBACK on destruction unless commit() ran.
class Transaction {
 public:
  // `mode` is appended to BEGIN ("ISOLATION LEVEL SERIALIZABLE", "READ ONLY"...).
  explicit Transaction(Connection& conn, std::string_view mode = "");
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Connection& conn_;
  bool done_ = false;
};

// A few open connections to one server, shared by threads. acquire() hands out an idle
// connection or opens a new one; a lease returns it when destroyed, unless it broke (the server
// went away), in which case it is closed. Thread-safe.
class Pool {
 public:
  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<Connection> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Connection& operator*() const { return *conn_; }
    Connection* operator->() const { return conn_.get(); }

   private:
    Pool* pool_;
    std::unique_ptr<Connection> conn_;
  };

  explicit Pool(Url url, std::size_t max_idle = 4);
  const Url& url() const { return *url_; }
  Lease acquire();

 private:
  std::shared_ptr<const Url> url_;
  std::size_t max_idle_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

// A single-quoted literal ('it''s'), for the few statements that take no parameters (DDL).
std::string literal(std::string_view text);

// Binary COPY encoding helpers (network byte order).
void put_u16(std::string& out, std::uint16_t v);
void put_u32(std::string& out, std::uint32_t v);
void put_u64(std::string& out, std::uint64_t v);
std::uint16_t get_u16(const char* p);
std::uint32_t get_u32(const char* p);
std::uint64_t get_u64(const char* p);

}  // namespace interloper::postgres
