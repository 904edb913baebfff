// Exact decimals: an unscaled 128-bit integer of at most 38 digits and a scale.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

#include "interloper/data.hpp"

namespace interloper {

namespace {

using int128 = __int128;
using uint128 = unsigned __int128;

// 10^k for k in 0..38.
uint128 power_of_ten(int k) noexcept {
  uint128 p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

const uint128 kLimit = power_of_ten(Decimal::kMaxDigits);  // first 39-digit number

uint128 magnitude(int128 v) noexcept {
  return v < 0 ? static_cast<uint128>(0) - static_cast<uint128>(v) : static_cast<uint128>(v);
}

}  // namespace

Decimal::Decimal(__int128 unscaled, int scale) {
  if (magnitude(unscaled) >= kLimit || scale < 0 || scale > kMaxDigits) {
    throw DataError("decimal of scale " + std::to_string(scale) +
                    " does not fit 38 digits with a scale of 0 to 38");
  }
  const auto bits = static_cast<uint128>(unscaled);
  lo_ = static_cast<std::uint64_t>(bits);
  hi_ = static_cast<std::int64_t>(bits >> 64);
  scale_ = static_cast<std::uint8_t>(scale);
}

Decimal Decimal::of(std::int64_t i) noexcept {
  Decimal d;
  d.lo_ = static_cast<std::uint64_t>(i);
  d.hi_ = i < 0 ? -1 : 0;
  return d;
}

std::optional<Decimal> Decimal::parse(std::string_view s) noexcept {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  uint128 unscaled = 0;
  int digits = 0, fraction = 0;
  bool any = false, point = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    any = true;
    if (point) ++fraction;
    if (unscaled == 0 && c == '0') continue;  // leading zeros are no digits
    if (++digits > kMaxDigits) return std::nullopt;
    unscaled = unscaled * 10 + static_cast<unsigned>(c - '0');
  }
  if (!any) return std::nullopt;
  int exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && s[i] == '+') ++i;
    auto r = std::from_chars(s.data() + i, s.data() + s.size(), exponent);
    if (r.ec != std::errc() || r.ptr == s.data() + i) return std::nullopt;
    i = static_cast<std::size_t>(r.ptr - s.data());
  }
  if (i != s.size() || exponent > 1000 || exponent < -1000) return std::nullopt;
  int scale = fraction - exponent;
  if (scale < 0) {  // 1.5e3: the exponent adds zeros before the point
    if (unscaled != 0 && digits - scale > kMaxDigits) return std::nullopt;
    unscaled *= power_of_ten(-scale);
    scale = 0;
  }
  if (scale > kMaxDigits) return std::nullopt;
  const auto value = static_cast<int128>(unscaled);
  return Decimal(negative ? -value : value, scale);
}

int Decimal::digits() const noexcept {
  uint128 m = magnitude(unscaled());
  int n = 1;
  while (m >= 10) {
    m /= 10;
    ++n;
  }
  return n;
}

std::optional<Decimal> Decimal::rescaled(int scale) const noexcept {
  if (scale < 0 || scale > kMaxDigits) return std::nullopt;
  const int128 v = unscaled();
  if (scale >= scale_) {
    const uint128 factor = power_of_ten(scale - scale_);
    if (magnitude(v) >= kLimit / factor + (kLimit % factor != 0 ? 1 : 0)) return std::nullopt;
    return Decimal(v * static_cast<int128>(factor), scale);
  }
  const auto factor = static_cast<int128>(power_of_ten(scale_ - scale));
  if (v % factor != 0) return std::nullopt;
  return Decimal(v / factor, scale);
}

bool Decimal::fits(int precision, int scale) const noexcept {
  std::optional<Decimal> at = rescaled(scale);
  return at && magnitude(at->unscaled()) < power_of_ten(precision);
}

double Decimal::to_double() const noexcept {
  // Through the text, so that the double is the nearest one (from_chars rounds correctly).
  const std::string text = to_string();
  double d = 0;
  std::from_chars(text.data(), text.data() + text.size(), d);
  return d;
}

std::string Decimal::to_string() const {
  uint128 m = magnitude(unscaled());
  std::string digits;
  do {
    digits.push_back(static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  } while (m != 0);
  while (digits.size() <= scale_) digits.push_back('0');  // a zero before the point
  if (scale_ > 0) digits.insert(digits.begin() + scale_, '.');
  if (unscaled() < 0) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

bool operator==(const Decimal& a, const Decimal& b) noexcept {
  if (a.scale_ == b.scale_) return a.unscaled() == b.unscaled();
  const Decimal& fine = a.scale_ > b.scale_ ? a : b;
  const Decimal& coarse = a.scale_ > b.scale_ ? b : a;
  // The coarser one at the finer scale; one that cannot be is larger than any 38-digit number.
  std::optional<Decimal> up = coarse.rescaled(fine.scale_);
  return up && up->unscaled() == fine.unscaled();
}

}  // namespace interloper
