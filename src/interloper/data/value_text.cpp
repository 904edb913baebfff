// Values as text: integers, doubles, dates and timestamps written the way every format writes them.
#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <ostream>

#include "interloper/data/format.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {
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

char* put_timestamp_micros(char* p, std::int64_t micros) {
  const std::int64_t seconds = floor_div(micros, 1000000);
  p = put_timestamp(p, seconds);
  const auto fraction = static_cast<unsigned>(micros - seconds * 1000000);
  if (fraction == 0) return p;
  *p++ = '.';
  return put_digits(p, fraction, 6);
}

void append_timestamp(std::string& out, Value::Timestamp t) {
  char buf[kMaxIsoChars];
  out.append(buf, put_timestamp_micros(buf, t.time_since_epoch().count()));
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
  }
  out.append(s.data() + start, s.size() - start);
  out.push_back('"');
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
    case DataType::decimal:
      out += v.as_decimal().to_string();
      break;
    case DataType::json:
      out += v.as_json().text;
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

}  // namespace detail
}  // namespace interloper
