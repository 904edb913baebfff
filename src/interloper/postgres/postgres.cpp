#include "interloper/postgres/postgres.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace interloper::postgres {

namespace {

// The password's raw and percent-decoded spellings, both of which libpq may echo.
std::vector<std::string> spellings(const std::string& password) {
  std::vector<std::string> out;
  if (password.empty()) return out;
  out.push_back(password);
  std::string decoded;
  for (std::size_t i = 0; i < password.size(); ++i) {
    if (password[i] == '%' && i + 2 < password.size()) {
      decoded += static_cast<char>(std::strtol(password.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      decoded += password[i];
    }
  }
  if (decoded != password) out.push_back(decoded);
  return out;
}

// `text` with every spelling of the password replaced by ***.
std::string scrub_secret(std::string text, const std::string& password) {
  for (const std::string& secret : spellings(password)) {
    for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3)) {
      text.replace(at, secret.size(), "***");
    }
  }
  return text;
}

// One line, the password replaced by ***.
std::string scrub(std::string text, const std::string& password) {
  text = scrub_secret(std::move(text), password);
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

// Where the user-info part of `url` ends ('@'), or npos; `start` is after "://". The authority
// ends at the first of `ends`: libpq's reading by default.
std::size_t userinfo_end(std::string_view url, std::size_t start, const char* ends = "/?") {
  std::size_t authority_end = url.find_first_of(ends, start);
  std::string_view authority = url.substr(start, authority_end - start);
  auto at = authority.rfind('@');
  return at == std::string_view::npos ? std::string_view::npos : start + at;
}

}  // namespace

std::string Url::get(std::string_view name, std::string_view fallback) const {
  for (const auto& [key, value] : own) {
    if (key == name) return value;
  }
  return std::string(fallback);
}

std::string redact(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  std::size_t start = scheme_end + 3;
  std::size_t at = userinfo_end(url, start);
  if (at == std::string_view::npos) return std::string(url);
  auto colon = url.substr(start, at - start).find(':');
  if (colon == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, start + colon + 1)) + "***" + std::string(url.substr(at));
}

std::string hide_password(std::string message, std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return message;
  const std::size_t start = scheme_end + 3;
  // libpq reads the user-info up to the last '@' before a '/' or '?'; a URL parser that follows
  // RFC 3986 also stops at a '#'. Whatever the part quoted in `message` was cut by, neither
  // reading's password shows.
  for (const char* ends : {"/?", "/?#"}) {
    const std::size_t at = userinfo_end(url, start, ends);
    if (at == std::string_view::npos) continue;
    const std::string_view info = url.substr(start, at - start);
    const auto colon = info.find(':');
    if (colon == std::string_view::npos || colon + 1 == info.size()) continue;
    message = scrub_secret(std::move(message), std::string(info.substr(colon + 1)));
  }
  return message;
}

Url parse_url(std::string_view text, const std::vector<std::string>& own_parameters) {
  Url url;
  url.redacted = redact(text);
  auto fail = [&](std::string_view why) -> void {
    throw DestinationError(fmt::format("postgresql URL '{}': {}", url.redacted,
                                       scrub(std::string(why), url.password)));
  };
  if (text.rfind("postgresql://", 0) != 0 && text.rfind("postgres://", 0) != 0) {
    fail("must start with postgresql:// or postgres://");
  }
  std::size_t start = text.find("://") + 3;
  if (std::size_t at = userinfo_end(text, start); at != std::string_view::npos) {
    std::string_view info = text.substr(start, at - start);
    if (auto colon = info.find(':'); colon != std::string_view::npos) {
      url.password = std::string(info.substr(colon + 1));
    }
  }
  std::string_view base = text;
  std::string_view query;
  if (auto q = text.find('?'); q != std::string_view::npos) {
    base = text.substr(0, q);
    query = text.substr(q + 1);
  }
  std::string kept;
  bool has_timeout = std::getenv("PGCONNECT_TIMEOUT") != nullptr;
  while (!query.empty()) {
    std::string_view item = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), item.size() + 1));
    if (item.empty()) continue;
    auto eq = item.find('=');
    std::string name(item.substr(0, eq));
    if (eq == std::string_view::npos) fail(fmt::format("parameter '{}' has no value", name));
    if (std::find(own_parameters.begin(), own_parameters.end(), name) != own_parameters.end()) {
      url.own.emplace_back(name, std::string(item.substr(eq + 1)));
      continue;
    }
    has_timeout = has_timeout || name == "connect_timeout";
    kept += (kept.empty() ? "" : "&") + std::string(item);
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
