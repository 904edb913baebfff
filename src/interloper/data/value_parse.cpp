// Values from text: numbers, UTF-8 checks, exact integers and doubles, and declared values.
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
struct DecimalText {
  bool negative = false;
  std::string digits;
  long exponent = 0;
  friend bool operator==(const DecimalText&, const DecimalText&) = default;
};

std::optional<DecimalText> decimal_of(std::string_view s) {
  DecimalText d;
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
    if (timestamp_too_precise(text)) return convert(Value(std::move(text)), DataType::timestamp);
  }
  return Value(std::move(text));
}

namespace {

// `v`, a decimal, at the scale of `field` when it declares one; throws when it does not fit.
// `from_double` says the digits are a double's, whose binary error shows past the point.
Value sized_decimal(Value v, const Field& field, bool from_double) {
  if (field.precision == 0 || v.is_null()) return v;
  const Decimal d = v.as_decimal();
  if (!d.fits(field.precision, field.scale))
    throw DataError(
        std::string(from_double ? "double " : "decimal ") + d.to_string() + " does not fit " +
        type_text(field) + " (" + std::to_string(field.precision - field.scale) +
        " digits before the point and " + std::to_string(field.scale) + " after it at most)" +
        (from_double ? "; a double is not exact: round it to the column's scale, or "
                       "compute the value in integers or decimals"
                     : ""));
  return Value(*d.rescaled(field.scale));
}

}  // namespace

Value declared_value(const Value& v, const Field& field) {
  if (v.is_null() || (v.type() == field.type && field.type != DataType::decimal)) return v;
  try {
    Value out = v.type() == field.type ? v : convert(v, field.type);
    return field.type == DataType::decimal
               ? sized_decimal(std::move(out), field, v.type() == DataType::float64)
               : out;
  } catch (const DataError& e) {
    throw DataError("column '" + field.name + "': " + e.what());
  }
}

std::string row_prefix(std::size_t row, std::size_t line) {
  return "row " + std::to_string(row) + " (line " + std::to_string(line) + "): ";
}

}  // namespace detail
}  // namespace interloper
