#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
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

namespace {

// Reads the zone designator of an RFC 3339 time ("Z", "+02:00", "-0530") as seconds east of
// UTC; false for anything else.
bool get_offset(std::string_view s, std::int64_t& seconds) {
  if (s == "Z" || s == "z") {
    seconds = 0;
    return true;
  }
  if (s.size() != 6 && s.size() != 5) return false;
  if (s[0] != '+' && s[0] != '-') return false;
  std::string_view minutes_text = s.size() == 6 ? s.substr(4) : s.substr(3);
  if (s.size() == 6 && s[3] != ':') return false;
  int h = 0, m = 0;
  auto digits = [](std::string_view d, int& out) {
    if (d.size() != 2 || d[0] < '0' || d[0] > '9' || d[1] < '0' || d[1] > '9') return false;
    out = (d[0] - '0') * 10 + (d[1] - '0');
    return true;
  };
  if (!digits(s.substr(1, 2), h) || !digits(minutes_text, m) || h > 23 || m > 59) return false;
  seconds = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60);
  return true;
}

}  // namespace

std::optional<Value::Timestamp> parse_timestamp(std::string_view s) noexcept {
  std::int64_t days, seconds;
  if (s.size() < 19 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !detail::get_date(s.data(), days) || !detail::get_time_of_day(s.data() + 11, seconds))
    return std::nullopt;
  std::string_view rest = s.substr(19);
  // Fractional seconds: a Timestamp holds whole seconds, so the digits are checked and dropped
  // (which floors the instant, since the fraction only ever adds to it).
  if (!rest.empty() && rest[0] == '.') {
    std::size_t n = 1;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n == 1) return std::nullopt;
    rest.remove_prefix(n);
  }
  std::int64_t offset = 0;
  if (!rest.empty() && !get_offset(rest, offset)) return std::nullopt;
  return Value::Timestamp(std::chrono::seconds(days * detail::kSecondsPerDay + seconds - offset));
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

}  // namespace interloper
