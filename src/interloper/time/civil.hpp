// Internal: civil-calendar arithmetic on day counts (Howard Hinnant's algorithms) and the
// hand-written ISO date/timestamp formatting and parsing used by the hot paths. Every layer
// that writes or reads "YYYY-MM-DD" / "YYYY-MM-DDTHH:MM:SS" text goes through here, so dates
// print the same whether they come from a TimePoint, a Value or a destination.
//
//   char buf[detail::kMaxIsoChars];
//   std::string text(buf, detail::put_timestamp(buf, t.epoch_seconds()));
#pragma once

#include <cstddef>
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

// Room for any put_date / put_timestamp output (a year of an int64 day count has at most 17
// digits and a sign; one of an int64 second count, 12).
constexpr std::size_t kMaxIsoChars = 32;

// Writes "YYYY-MM-DD" for the day `days` since 1970-01-01 at p; returns the end.
inline char* put_date(char* p, std::int64_t days) {
  const Civil c = civil_from_days(days);
  p = put_year(p, c.year);
  *p++ = '-';
  p = put_digits(p, c.month, 2);
  *p++ = '-';
  return put_digits(p, c.day, 2);
}

// Writes "HH:MM:SS" for `seconds` (0..86399) into a day at p; returns the end.
inline char* put_time_of_day(char* p, unsigned seconds) {
  p = put_digits(p, seconds / 3600, 2);
  *p++ = ':';
  p = put_digits(p, seconds / 60 % 60, 2);
  *p++ = ':';
  return put_digits(p, seconds % 60, 2);
}

// Writes "YYYY-MM-DDTHH:MM:SS" for `seconds` since the epoch at p; returns the end.
inline char* put_timestamp(char* p, std::int64_t seconds) {
  const std::int64_t days = floor_div(seconds, kSecondsPerDay);
  p = put_date(p, days);
  *p++ = 'T';
  return put_time_of_day(p, static_cast<unsigned>(seconds - days * kSecondsPerDay));
}

// Reads "YYYY-MM-DD" from the 10 characters at s; false unless it names a real day.
inline bool get_date(const char* s, std::int64_t& days) {
  unsigned y, m, d;
  if (!get_digits(s, 4, y) || s[4] != '-' || !get_digits(s + 5, 2, m) || s[7] != '-' ||
      !get_digits(s + 8, 2, d) || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m)) {
    return false;
  }
  days = days_from_civil(y, m, d);
  return true;
}

// Reads "HH:MM:SS" from the 8 characters at s as seconds into the day; false unless valid.
inline bool get_time_of_day(const char* s, std::int64_t& seconds) {
  unsigned h, m, sec;
  if (!get_digits(s, 2, h) || s[2] != ':' || !get_digits(s + 3, 2, m) || s[5] != ':' ||
      !get_digits(s + 6, 2, sec) || h > 23 || m > 59 || sec > 59) {
    return false;
  }
  seconds = h * 3600 + m * 60 + sec;
  return true;
}

}  // namespace interloper::detail
