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

namespace detail {

void append_int(std::string& out, std::int64_t i) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, i);
  out.append(buf, r.ptr);
}

namespace {

// Writes at `p` the shortest decimal that reads back as `d`, spelled as std::to_chars spells it
// (fixed or scientific, whichever is shorter, fixed on a tie), when |d| is a decimal of at most
// 15 significant digits and at most 9 places, as prices and measures are; returns the end, or
// nullptr for any other value. Such a decimal is the shortest: two decimals of at most 15
// digits never read as one double. It is found as n / 10^k for the first k whose quotient,
// rounded once, is |d|, which is the check that it reads back as |d|.
char* put_short_decimal(char* p, double d) {
  static constexpr double powers[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
  const double a = std::fabs(d);
  if (!(a > 0) || !(a < 1e15)) return nullptr;
  std::uint64_t n = 0;
  int exponent = 0;  // |d| = n * 10^exponent
  for (int k = 0;; ++k) {
    if (k == 10) return nullptr;
    const double scaled = std::nearbyint(a * powers[k]);
    if (!(scaled < 1e15)) return nullptr;
    if (scaled / powers[k] == a) {
      n = static_cast<std::uint64_t>(scaled);
      exponent = -k;
      break;
    }
  }
  while (n % 10 == 0) {
    n /= 10;
    ++exponent;
  }
  char digits[16];
  const int m = static_cast<int>(std::to_chars(digits, digits + sizeof digits, n).ptr - digits);
  const int scientific_exponent = exponent + m - 1;
  const int fixed_length = exponent >= 0              ? m + exponent
                           : scientific_exponent >= 0 ? m + 1
                                                      : m + 1 - scientific_exponent;
  const int scientific_length = m + (m > 1 ? 1 : 0) + 2 + 2;  // |exponent| < 100 here
  if (d < 0) *p++ = '-';
  if (fixed_length <= scientific_length) {
    if (exponent >= 0) {
      p = std::copy(digits, digits + m, p);
      return std::fill_n(p, exponent, '0');
    }
    if (scientific_exponent >= 0) {
      p = std::copy(digits, digits + scientific_exponent + 1, p);
      *p++ = '.';
      return std::copy(digits + scientific_exponent + 1, digits + m, p);
    }
    *p++ = '0';
    *p++ = '.';
    p = std::fill_n(p, -scientific_exponent - 1, '0');
    return std::copy(digits, digits + m, p);
  }
  *p++ = digits[0];
  if (m > 1) {
    *p++ = '.';
    p = std::copy(digits + 1, digits + m, p);
  }
  *p++ = 'e';
  *p++ = scientific_exponent < 0 ? '-' : '+';
  const int e = scientific_exponent < 0 ? -scientific_exponent : scientific_exponent;
  *p++ = static_cast<char>('0' + e / 10);
  *p++ = static_cast<char>('0' + e % 10);
  return p;
}

}  // namespace

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
  char* end = put_short_decimal(buf, d);
  if (end == nullptr) end = std::to_chars(buf, buf + sizeof buf, d).ptr;
  std::string_view s(buf, static_cast<std::size_t>(end - buf));
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

bool valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    char32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return false;
    i += len;
  }
  return true;
}

bool is_exact_int(std::string_view s, std::int64_t& out) noexcept {
  std::string_view digits = !s.empty() && s[0] == '-' ? s.substr(1) : s;
  if (digits.empty() || (digits[0] == '0' && (digits.size() > 1 || s[0] == '-'))) return false;
  return parse_int(s, out);
}

namespace {

// A decimal number as its significant digits (no leading or trailing zeros) and the power of
// ten of the last one, so that two spellings of one number compare equal. nullopt for text that
// is not a plain decimal (sign, digits, optional fraction, optional exponent).
struct Decimal {
  bool negative = false;
  std::string digits;
  long exponent = 0;
  friend bool operator==(const Decimal&, const Decimal&) = default;
};

std::optional<Decimal> decimal_of(std::string_view s) {
  Decimal d;
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) d.negative = s[i++] == '-';
  bool any = false;
  long fraction = 0;
  for (bool after_point = false; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.' && !after_point) {
      after_point = true;
    } else if (c >= '0' && c <= '9') {
      any = true;
      if (!(d.digits.empty() && c == '0')) d.digits.push_back(c);
      if (after_point) ++fraction;
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  long exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && s[i] == '+') ++i;
    auto r = std::from_chars(s.data() + i, s.data() + s.size(), exponent);
    if (r.ec != std::errc()) return std::nullopt;
    i = static_cast<std::size_t>(r.ptr - s.data());
  }
  if (i != s.size()) return std::nullopt;
  d.exponent = exponent - fraction;
  while (!d.digits.empty() && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exponent;
  }
  if (d.digits.empty()) d.exponent = 0;
  return d;
}

}  // namespace

bool is_exact_double(std::string_view s, double& out) noexcept {
  if (s.find_first_of(".eE") == std::string_view::npos || !parse_double(s, out)) return false;
  // A leading zero before another digit ("007.5") is not how a number is written.
  std::string_view unsigned_part = s[0] == '-' ? s.substr(1) : s;
  if (unsigned_part.size() > 1 && unsigned_part[0] == '0' && unsigned_part[1] >= '0' &&
      unsigned_part[1] <= '9')
    return false;
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, out);
  try {
    auto text = decimal_of(s);
    auto shortest = decimal_of(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
    return text && shortest && *text == *shortest;
  } catch (...) {
    return false;  // allocation failure: not provably exact
  }
}

Value text_value(std::string text, bool time_column) {
  if (time_column && text.size() >= 10 && text[4] == '-') {
    if (auto d = parse_date(text)) return Value(*d);
    if (auto t = parse_timestamp(text)) return Value(*t);
  }
  return Value(std::move(text));
}

Value declared_value(const Value& v, DataType type, std::string_view column) {
  if (v.type() == type || v.is_null()) return v;
  try {
    return convert(v, type);
  } catch (const DataError& e) {
    throw DataError("column '" + std::string(column) + "': " + e.what());
  }
}

std::string row_prefix(std::size_t row, std::size_t line) {
  return "row " + std::to_string(row) + " (line " + std::to_string(line) + "): ";
}

}  // namespace detail
}  // namespace interloper
