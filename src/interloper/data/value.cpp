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

constexpr std::string_view kTypeNames[] = {"null", "bool",      "int",     "double", "string",
                                           "date", "timestamp", "decimal", "json"};

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
  throw DataError(
      "unknown data type '" + std::string(name) +
      "' (expected null, bool, int, double, string, date, timestamp, decimal(p,s) or json)");
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
  if (auto* p = std::get_if<Decimal>(&v_)) return p->to_double();
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
Decimal Value::as_decimal() const {
  if (auto* p = std::get_if<Decimal>(&v_)) return *p;
  if (auto* p = std::get_if<std::int64_t>(&v_)) return Decimal::of(*p);
  wrong_type(DataType::decimal, *this);
}
const Json& Value::as_json() const {
  if (auto* p = std::get_if<Json>(&v_)) return *p;
  wrong_type(DataType::json, *this);
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
  if (s.size() != 6 && s.size() != 5 && s.size() != 3) return false;
  if (s[0] != '+' && s[0] != '-') return false;
  std::string_view minutes_text = s.size() == 6 ? s.substr(4) : s.size() == 5 ? s.substr(3) : "00";
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

namespace {

// A timestamp's parts: whole seconds since the epoch (before the offset is applied), the
// fraction in microseconds, how many fractional digits were written, and the offset. False for
// text that is not an RFC 3339 timestamp, whatever its fraction's length.
struct TimestampParts {
  std::int64_t seconds = 0;
  std::int64_t micros = 0;
  std::size_t fraction_digits = 0;
  std::int64_t offset = 0;
};

bool timestamp_parts(std::string_view s, TimestampParts& parts) noexcept {
  std::int64_t days, seconds;
  if (s.size() < 19 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
      !detail::get_date(s.data(), days) || !detail::get_time_of_day(s.data() + 11, seconds))
    return false;
  parts.seconds = days * detail::kSecondsPerDay + seconds;
  std::string_view rest = s.substr(19);
  if (!rest.empty() && rest[0] == '.') {
    std::size_t n = 1;
    for (; n < rest.size() && rest[n] >= '0' && rest[n] <= '9'; ++n) {
      if (n <= 6) parts.micros = parts.micros * 10 + (rest[n] - '0');
    }
    if (n == 1) return false;
    parts.fraction_digits = n - 1;
    for (std::size_t k = parts.fraction_digits; k < 6; ++k) parts.micros *= 10;
    rest.remove_prefix(n);
  }
  return rest.empty() || get_offset(rest, parts.offset);
}

}  // namespace

std::optional<Value::Timestamp> parse_timestamp(std::string_view s) noexcept {
  TimestampParts parts;
  if (!timestamp_parts(s, parts) || parts.fraction_digits > 6) return std::nullopt;
  return Value::Timestamp(std::chrono::seconds(parts.seconds - parts.offset) +
                          std::chrono::microseconds(parts.micros));
}

bool timestamp_too_precise(std::string_view s) noexcept {
  TimestampParts parts;
  return timestamp_parts(s, parts) && parts.fraction_digits > 6;
}

namespace {

// `s` read as `type`, or nullopt when it does not read as one.
std::optional<Value> string_as(const std::string& s, DataType type) {
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
      if (timestamp_too_precise(s))
        throw DataError("timestamp \"" + s +
                        "\" has more than six fractional digits (a timestamp holds microseconds; "
                        "it is refused rather than rounded)");
      break;
    case DataType::decimal:
      if (auto d = Decimal::parse(s)) return Value(*d);
      break;
    default:
      break;
  }
  return std::nullopt;
}

// A double's decimal: the digits of its shortest round-trip form, which is what was written.
std::optional<Value> double_as_decimal(double d) {
  if (!std::isfinite(d)) return std::nullopt;
  std::string text;
  detail::append_double(text, d);
  if (auto x = Decimal::parse(text)) return Value(*x);
  return std::nullopt;
}

// `v` as a JSON value: a string is a JSON string, other scalars their JSON literal.
Value json_of(const Value& v) {
  std::string text;
  if (v.type() == DataType::string) {
    detail::append_json_string(text, v.as_string());
  } else if (v.type() == DataType::date || v.type() == DataType::timestamp) {
    detail::append_json_string(text, v.to_string());
  } else {
    detail::append_value(text, v);
  }
  return Value(Json{std::move(text)});
}

}  // namespace

Value convert(const Value& v, DataType type) {
  DataType from = v.type();
  if (from == type || from == DataType::null) return v;
  if (type == DataType::string) return Value(v.to_string());
  if (from == DataType::int64 && type == DataType::float64) return Value(v.as_double());
  if (from == DataType::date && type == DataType::timestamp) return Value(v.as_timestamp());
  if (from == DataType::int64 && type == DataType::decimal) return Value(v.as_decimal());
  if (from == DataType::decimal && type == DataType::float64)
    return Value(v.as_decimal().to_double());
  if (from == DataType::float64 && type == DataType::decimal) {
    if (auto d = double_as_decimal(v.as_double())) return *d;
  }
  if (type == DataType::json && !(from == DataType::float64 && !std::isfinite(v.as_double())))
    return json_of(v);
  if (from == DataType::string) {
    if (auto out = string_as(v.as_string(), type)) return *out;
  }
  throw DataError("cannot convert " + detail::describe(v) + " to " + std::string(type_name(type)));
}

std::string type_text(const Field& field) {
  if (field.type != DataType::decimal || field.precision == 0)
    return std::string(type_name(field.type));
  return "decimal(" + std::to_string(field.precision) + "," + std::to_string(field.scale) + ")";
}

Field field_of_type(std::string name, std::string_view text) {
  constexpr std::string_view kDecimal = "decimal(";
  if (text.size() <= kDecimal.size() || text.substr(0, kDecimal.size()) != kDecimal ||
      text.back() != ')')
    return Field{std::move(name), type_from_name(text), 0, 0};
  const std::string_view inside = text.substr(kDecimal.size(), text.size() - kDecimal.size() - 1);
  const std::size_t comma = inside.find(',');
  auto number = [](std::string_view digits, int& out) {
    while (!digits.empty() && digits.front() == ' ') digits.remove_prefix(1);
    while (!digits.empty() && digits.back() == ' ') digits.remove_suffix(1);
    auto r = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    return !digits.empty() && r.ec == std::errc() && r.ptr == digits.data() + digits.size();
  };
  int precision = 0, scale = 0;
  const bool ok = number(inside.substr(0, comma), precision) &&
                  (comma == std::string_view::npos || number(inside.substr(comma + 1), scale));
  if (!ok || precision < 1 || precision > Decimal::kMaxDigits || scale < 0 || scale > precision)
    throw DataError("invalid type '" + std::string(text) +
                    "': a decimal is decimal(p,s) with 1 <= p <= 38 digits in all and "
                    "0 <= s <= p after the point");
  return Field{std::move(name), DataType::decimal, static_cast<std::uint8_t>(precision),
               static_cast<std::uint8_t>(scale)};
}

}  // namespace interloper
