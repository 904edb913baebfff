// Internal: civil-calendar arithmetic on day counts (Howard Hinnant's algorithms) and the
// hand-written digit formatting/parsing used by the hot paths.
#pragma once

#include <cstdint>

namespace interloper::detail {

constexpr std::int64_t kSecondsPerDay = 86400;

constexpr std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

constexpr std::int64_t floor_mod(std::int64_t a, std::int64_t b) { return a - floor_div(a, b) * b; }

// Days since 1970-01-01 of the proleptic Gregorian date y-m-d (m in 1..12, d in 1..31).
constexpr std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = floor_div(y, 400);
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
  std::int64_t year;
  unsigned month;
  unsigned day;
};

constexpr Civil civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = floor_div(z, 146097);
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

constexpr bool is_leap(std::int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

constexpr unsigned days_in_month(std::int64_t y, unsigned m) {
  constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// 0 = Monday ... 6 = Sunday, for a day count since 1970-01-01 (a Thursday).
constexpr unsigned iso_weekday(std::int64_t days) {
  return static_cast<unsigned>(floor_mod(days + 3, 7));
}

// Day count of the Monday that starts ISO week 1 of ISO year y (the week holding January 4).
constexpr std::int64_t iso_week1_start(std::int64_t y) {
  const std::int64_t jan4 = days_from_civil(y, 1, 4);
  return jan4 - iso_weekday(jan4);
}

constexpr unsigned iso_weeks_in_year(std::int64_t y) {
  return static_cast<unsigned>((iso_week1_start(y + 1) - iso_week1_start(y)) / 7);
}

// Writes `width` zero-padded decimal digits of v (v >= 0, fits) at p; returns p + width.
inline char* put_digits(char* p, unsigned v, int width) {
  for (int i = width - 1; i >= 0; --i) {
    p[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  return p + width;
}

// Writes a year: four digits for 0..9999, otherwise a sign-aware decimal with at least four.
inline char* put_year(char* p, std::int64_t y) {
  if (y >= 0 && y <= 9999) return put_digits(p, static_cast<unsigned>(y), 4);
  char tmp[24];
  int n = 0;
  const bool negative = y < 0;
  auto u = negative ? 0 - static_cast<std::uint64_t>(y) : static_cast<std::uint64_t>(y);
  do {
    tmp[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  while (n < 4) tmp[n++] = '0';
  if (negative) *p++ = '-';
  while (n > 0) *p++ = tmp[--n];
  return p;
}

// Reads exactly `width` decimal digits at s; false if any is not a digit.
inline bool get_digits(const char* s, int width, unsigned& out) {
  unsigned v = 0;
  for (int i = 0; i < width; ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - '0';
    if (d > 9) return false;
    v = v * 10 + d;
  }
  out = v;
  return true;
}

}  // namespace interloper::detail
