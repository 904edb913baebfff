#include <cassert>
#include <charconv>
#include <cmath>
#include <ostream>

#include "interloper/data/format.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {

namespace {

constexpr std::string_view kTypeNames[] = {"null",   "bool", "int",      "double",
                                           "string", "date", "timestamp"};

[[noreturn]] void wrong_type(DataType expected, const Value& actual) {
  throw DataError("value " + detail::describe(actual) + " is not a " +
                  std::string(type_name(expected)) + " (it is a " +
                  std::string(type_name(actual.type())) + ")");
}

}  // namespace

std::string_view type_name(DataType type) noexcept {
  auto i = static_cast<std::size_t>(type);
  return i < std::size(kTypeNames) ? kTypeNames[i] : std::string_view("?");
}

DataType type_from_name(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kTypeNames); ++i)
    if (kTypeNames[i] == name) return static_cast<DataType>(i);
  throw DataError("unknown data type '" + std::string(name) +
                  "' (expected null, bool, int, double, string, date or timestamp)");
}

Value::Value(const char* s) {
  assert(s != nullptr && "Value(const char*) needs a string; use Value() for null");
  v_ = std::string(s == nullptr ? "" : s);
}

Value::Value(std::chrono::year_month_day ymd) {
  if (!ymd.ok()) {
    throw DataError("invalid date " + std::to_string(static_cast<int>(ymd.year())) + "-" +
                    std::to_string(static_cast<unsigned>(ymd.month())) + "-" +
                    std::to_string(static_cast<unsigned>(ymd.day())));
  }
  v_ = Date(ymd);
}

bool Value::as_bool() const {
  if (auto* p = std::get_if<bool>(&v_)) return *p;
  wrong_type(DataType::boolean, *this);
}
std::int64_t Value::as_int() const {
  if (auto* p = std::get_if<std::int64_t>(&v_)) return *p;
  wrong_type(DataType::int64, *this);
}
double Value::as_double() const {
  if (auto* p = std::get_if<double>(&v_)) return *p;
  if (auto* p = std::get_if<std::int64_t>(&v_)) return static_cast<double>(*p);
  wrong_type(DataType::float64, *this);
}
const std::string& Value::as_string() const {
  if (auto* p = std::get_if<std::string>(&v_)) return *p;
  wrong_type(DataType::string, *this);
}
Value::Date Value::as_date() const {
  if (auto* p = std::get_if<Date>(&v_)) return *p;
  wrong_type(DataType::date, *this);
}
Value::Timestamp Value::as_timestamp() const {
  if (auto* p = std::get_if<Timestamp>(&v_)) return *p;
  if (auto* p = std::get_if<Date>(&v_)) return Timestamp(*p);
  wrong_type(DataType::timestamp, *this);
}

std::string Value::to_string() const {
  std::string out;
  detail::append_value(out, *this);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Value& v) { return os << v.to_string(); }
std::ostream& operator<<(std::ostream& os, DataType t) { return os << type_name(t); }

std::optional<Value::Date> parse_date(std::string_view s) noexcept {
  std::int64_t days;
  if (s.size() != 10 || !detail::get_date(s.data(), days)) return std::nullopt;
  return Value::Date(std::chrono::days(days));
}

std::optional<Value::Timestamp> parse_timestamp(std::string_view s) noexcept {
  if (s.size() == 20 && s[19] == 'Z') s.remove_suffix(1);
  std::int64_t days, seconds;
  if (s.size() != 19 || (s[10] != 'T' && s[10] != ' ') || !detail::get_date(s.data(), days) ||
      !detail::get_time_of_day(s.data() + 11, seconds))
    return std::nullopt;
  return Value::Timestamp(std::chrono::seconds(days * detail::kSecondsPerDay + seconds));
}

Value convert(const Value& v, DataType type) {
  DataType from = v.type();
  if (from == type || from == DataType::null) return v;
  if (type == DataType::string) return Value(v.to_string());
  if (from == DataType::int64 && type == DataType::float64) return Value(v.as_double());
  if (from == DataType::date && type == DataType::timestamp) return Value(v.as_timestamp());
  if (from == DataType::string) {
    const std::string& s = v.as_string();
    switch (type) {
      case DataType::boolean:
        if (s == "true") return Value(true);
        if (s == "false") return Value(false);
        break;
      case DataType::int64: {
        std::int64_t i;
        if (detail::parse_int(s, i)) return Value(static_cast<long long>(i));
        break;
      }
      case DataType::float64: {
        double d;
        if (detail::parse_double(s, d)) return Value(d);
        break;
      }
      case DataType::date:
        if (auto d = parse_date(s)) return Value(*d);
        break;
      case DataType::timestamp:
        if (auto t = parse_timestamp(s)) return Value(*t);
        if (auto d = parse_date(s)) return Value(Value::Timestamp(*d));
        break;
      default:
        break;
    }
  }
  throw DataError("cannot convert " + detail::describe(v) + " to " + std::string(type_name(type)));
}

namespace detail {

void append_int(std::string& out, std::int64_t i) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, i);
  out.append(buf, r.ptr);
}

void append_double(std::string& out, double d) {
  if (std::isnan(d)) {
    out += "nan";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-inf" : "inf";
    return;
  }
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
  out += s;
  if (s.find_first_of(".e") == std::string_view::npos) out += ".0";
}

void append_date(std::string& out, Value::Date d) {
  char buf[kMaxIsoChars];
  out.append(buf, put_date(buf, d.time_since_epoch().count()));
}

void append_timestamp(std::string& out, Value::Timestamp t) {
  char buf[kMaxIsoChars];
  out.append(buf, put_timestamp(buf, t.time_since_epoch().count()));
}

void append_value(std::string& out, const Value& v) {
  switch (v.type()) {
    case DataType::null:
      out += "null";
      break;
    case DataType::boolean:
      out += v.as_bool() ? "true" : "false";
      break;
    case DataType::int64:
      append_int(out, v.as_int());
      break;
    case DataType::float64:
      append_double(out, v.as_double());
      break;
    case DataType::string:
      out += v.as_string();
      break;
    case DataType::date:
      append_date(out, v.as_date());
      break;
    case DataType::timestamp:
      append_timestamp(out, v.as_timestamp());
      break;
  }
}

std::string describe(const Value& v) {
  if (v.is_null()) return "null";
  std::string out(type_name(v.type()));
  out += ' ';
  if (v.type() == DataType::string) {
    out += '"';
    out += v.as_string();
    out += '"';
  } else {
    append_value(out, v);
  }
  return out;
}

bool parse_int(std::string_view s, std::int64_t& out) noexcept {
  if (s.empty()) return false;
  const char* b = s.data();
  if (*b == '+') return false;
  auto r = std::from_chars(b, b + s.size(), out);
  return r.ec == std::errc() && r.ptr == b + s.size();
}

bool parse_double(std::string_view s, double& out) noexcept {
  if (s.empty()) return false;
  // from_chars accepts "nan"/"inf"; a data file holding them as text means a string.
  char c = s[0] == '-' ? (s.size() > 1 ? s[1] : '\0') : s[0];
  if (!((c >= '0' && c <= '9') || c == '.')) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace detail
}  // namespace interloper
