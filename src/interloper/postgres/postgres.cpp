#include "interloper/postgres/postgres.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace interloper::postgres {

namespace {

// One line, the password replaced by ***.
std::string scrub(std::string text, const std::string& password) {
  text = scrub_password(std::move(text), password);
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == '\t' || c == '\r' || c == ' ') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string Url::get(std::string_view name, std::string_view fallback) const {
  for (const auto& [key, value] : own) {
    if (key == name) return value;
  }
  return std::string(fallback);
}

Url parse_url(std::string_view text, const std::vector<std::string>& own_parameters) {
  return parse_url(parse_locator(text), own_parameters);
}

Url parse_url(const Locator& at, const std::vector<std::string>& own_parameters) {
  Url url;
  url.redacted = at.redacted();
  url.password = at.password();
  auto fail = [&](std::string_view why) -> void {
    throw DestinationError(fmt::format("postgresql URL '{}': {}", url.redacted,
                                       scrub(std::string(why), url.password)));
  };
  if (!at.is_postgres() || at.secret_text().find("://") == std::string::npos) {
    fail("must start with postgresql:// or postgres://");
  }
  const std::string_view text = at.secret_text();
  const std::string_view base = text.substr(0, text.find('?'));
  std::string kept;
  bool has_timeout = std::getenv("PGCONNECT_TIMEOUT") != nullptr;
  for (const auto& [name, value] : at.options) {
    if (std::find(own_parameters.begin(), own_parameters.end(), name) != own_parameters.end()) {
      url.own.emplace_back(name, value);
      continue;
    }
    has_timeout = has_timeout || name == "connect_timeout";
    kept += (kept.empty() ? "" : "&") + name + "=" + value;
  }
  if (!has_timeout) kept += (kept.empty() ? "" : "&") + std::string("connect_timeout=5");
  url.conninfo = std::string(base) + "?" + kept;
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.conninfo.c_str(), &error);
  if (options == nullptr) {
    std::string why = error ? error : "libpq cannot read it";
    PQfreemem(error);
    fail(why);
  }
  PQconninfoFree(options);
  return url;
}

void Params::text(std::string value, Oid type) {
  values_.push_back(std::move(value));
  nulls_.push_back(false);
  types_.push_back(type);
}

void Params::null(Oid type) {
  values_.emplace_back();
  nulls_.push_back(true);
  types_.push_back(type);
}

std::vector<const char*> Params::pointers() const {
  std::vector<const char*> out(values_.size());
  for (std::size_t i = 0; i < values_.size(); ++i) {
    out[i] = nulls_[i] ? nullptr : values_[i].c_str();
  }
  return out;
}

Result& Result::operator=(Result&& other) noexcept {
  if (this != &other) {
    PQclear(result_);
    result_ = other.result_;
    other.result_ = nullptr;
  }
  return *this;
}

Result::~Result() { PQclear(result_); }

std::int64_t Result::int_value(int row, int column) const {
  return std::strtoll(PQgetvalue(result_, row, column), nullptr, 10);
}

Connection::Connection(std::shared_ptr<const Url> url) : url_(std::move(url)) {
  conn_ = PQconnectdb(url_->conninfo.c_str());
  if (conn_ == nullptr) throw DestinationError("postgresql: out of memory");
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string why = message("cannot connect");
    PQfinish(conn_);
    conn_ = nullptr;
    throw DestinationError(why);
  }
  // Timestamps and dates travel as ISO text in UTC whatever the server's defaults are.
  exec("SET TIME ZONE 'UTC'; SET DateStyle = 'ISO, YMD'; SET client_min_messages = warning");
}

Connection::~Connection() { PQfinish(conn_); }

std::string Connection::message(std::string_view what, const PGresult* result) const {
  std::string why = result ? PQresultErrorMessage(result) : "";
  if (why.empty() && conn_) why = PQerrorMessage(conn_);
  if (why.empty()) why = "unknown error";
  return fmt::format("postgresql '{}': {}: {}", url_->redacted, what, scrub(why, url_->password));
}

void Connection::fail(std::string_view what, const PGresult* result) const {
  throw DestinationError(message(what, result));
}

Result Connection::check(PGresult* raw, std::string_view sql) {
  Result result(raw);
  ExecStatusType status = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  last_sqlstate_.clear();
  last_error_.clear();
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    auto field = [raw](int code) -> std::string {
      const char* text = raw ? PQresultErrorField(raw, code) : nullptr;
      return text ? text : "";
    };
    last_sqlstate_ = field(PG_DIAG_SQLSTATE);
    last_error_ = scrub(field(PG_DIAG_MESSAGE_PRIMARY), url_->password);
    if (const std::string hint = field(PG_DIAG_MESSAGE_HINT); !hint.empty()) {
      last_error_ += " (" + scrub(hint, url_->password) + ")";
    }
    std::string_view shown = sql.substr(0, std::min<std::size_t>(sql.size(), 200));
    fail(fmt::format("{}", shown), raw);
  }
  return result;
}

Result Connection::exec(std::string_view sql) {
  std::string text(sql);
  return check(PQexec(conn_, text.c_str()), sql);
}

Result Connection::exec(std::string_view sql, const Params& params, bool binary) {
  std::string text(sql);
  const std::vector<const char*> values = params.pointers();
  return check(PQexecParams(conn_, text.c_str(), static_cast<int>(params.size()),
                            params.types_.data(), values.data(), nullptr, nullptr, binary ? 1 : 0),
               sql);
}

Result Connection::exec_prepared(std::string_view sql, const Params& params) {
  std::string text(sql);
  auto found = prepared_.find(text);
  if (found == prepared_.end()) {
    std::string name = "il_" + std::to_string(prepared_.size() + 1);
    check(PQprepare(conn_, name.c_str(), text.c_str(), static_cast<int>(params.size()),
                    params.types_.data()),
          sql);
    found = prepared_.emplace(std::move(text), std::move(name)).first;
  }
  const std::vector<const char*> values = params.pointers();
  return check(PQexecPrepared(conn_, found->second.c_str(), static_cast<int>(params.size()),
                              values.data(), nullptr, nullptr, 0),
               sql);
}

Result Connection::describe(std::string_view sql, const Params& params) {
  std::string text(sql);
  check(PQprepare(conn_, "", text.c_str(), static_cast<int>(params.size()), params.types_.data()),
        sql);
  return check(PQdescribePrepared(conn_, ""), sql);
}

void Connection::copy_start(std::string_view sql) {
  std::string text(sql);
  Result result(PQexec(conn_, text.c_str()));
  if (PQresultStatus(result.get()) != PGRES_COPY_IN) fail(sql, result.get());
}

void Connection::copy_put(const char* data, std::size_t size) {
  if (PQputCopyData(conn_, data, static_cast<int>(size)) != 1) fail("COPY");
}

void Connection::copy_end() {
  if (PQputCopyEnd(conn_, nullptr) != 1) fail("COPY");
  Result result(PQgetResult(conn_));
  std::string why;
  if (PQresultStatus(result.get()) != PGRES_COMMAND_OK) why = message("COPY", result.get());
  while (PGresult* more = PQgetResult(conn_)) PQclear(more);
  if (!why.empty()) throw DestinationError(why);
}

Transaction::Transaction(Connection& conn, std::string_view mode) : conn_(conn) {
  conn_.exec(mode.empty() ? std::string("BEGIN") : "BEGIN " + std::string(mode));
}

Transaction::~Transaction() {
  if (done_ || !conn_.ok()) return;
  // Leave a COPY in progress first, or ROLLBACK would be refused.
  if (PQtransactionStatus(conn_.get()) == PQTRANS_ACTIVE) {
    PQputCopyEnd(conn_.get(), "abandoned");
    while (PGresult* more = PQgetResult(conn_.get())) PQclear(more);
  }
  PQclear(PQexec(conn_.get(), "ROLLBACK"));
}

void Transaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

Pool::Pool(Url url, std::size_t max_idle)
    : url_(std::make_shared<const Url>(std::move(url))), max_idle_(max_idle) {}

Pool::Lease Pool::acquire() {
  {
    std::lock_guard lock(mutex_);
    while (!idle_.empty()) {
      std::unique_ptr<Connection> conn = std::move(idle_.back());
      idle_.pop_back();
      if (conn->ok()) return Lease(this, std::move(conn));
    }
  }
  return Lease(this, std::make_unique<Connection>(url_));
}

Pool::Lease::~Lease() {
  if (!conn_ || !conn_->ok() || PQtransactionStatus(conn_->get()) != PQTRANS_IDLE) return;
  std::lock_guard lock(pool_->mutex_);
  if (pool_->idle_.size() < pool_->max_idle_) pool_->idle_.push_back(std::move(conn_));
}

std::string literal(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + '\'';
}

void put_u16(std::string& out, std::uint16_t v) {
  v = htons(v);
  out.append(reinterpret_cast<const char*>(&v), 2);
}

void put_u32(std::string& out, std::uint32_t v) {
  v = htonl(v);
  out.append(reinterpret_cast<const char*>(&v), 4);
}

void put_u64(std::string& out, std::uint64_t v) {
  put_u32(out, static_cast<std::uint32_t>(v >> 32));
  put_u32(out, static_cast<std::uint32_t>(v));
}

std::uint16_t get_u16(const char* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return ntohs(v);
}

std::uint32_t get_u32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return ntohl(v);
}

std::uint64_t get_u64(const char* p) {
  return (static_cast<std::uint64_t>(get_u32(p)) << 32) | get_u32(p + 4);
}

}  // namespace interloper::postgres
