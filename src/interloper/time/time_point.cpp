#include <ostream>
#include <stdexcept>

#include "interloper/time.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {

using detail::kSecondsPerDay;

std::chrono::year_month_day TimePoint::date() const {
  const auto c = detail::civil_from_days(detail::floor_div(seconds_, kSecondsPerDay));
  return std::chrono::year_month_day{std::chrono::year{static_cast<int>(c.year)},
                                     std::chrono::month{c.month}, std::chrono::day{c.day}};
}

namespace {

char* put_date(char* p, std::int64_t seconds) {
  const auto c = detail::civil_from_days(detail::floor_div(seconds, kSecondsPerDay));
  p = detail::put_year(p, c.year);
  *p++ = '-';
  p = detail::put_digits(p, c.month, 2);
  *p++ = '-';
  return detail::put_digits(p, c.day, 2);
}

[[noreturn]] void bad_time_point(std::string_view text) {
  throw std::invalid_argument("invalid time point '" + std::string(text) +
                              "' (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)");
}

}  // namespace

std::string TimePoint::to_string() const {
  char buf[48];
  char* p = put_date(buf, seconds_);
  const auto sod = static_cast<unsigned>(detail::floor_mod(seconds_, kSecondsPerDay));
  *p++ = 'T';
  p = detail::put_digits(p, sod / 3600, 2);
  *p++ = ':';
  p = detail::put_digits(p, sod / 60 % 60, 2);
  *p++ = ':';
  p = detail::put_digits(p, sod % 60, 2);
  return std::string(buf, p);
}

std::string TimePoint::date_string() const {
  char buf[32];
  char* p = put_date(buf, seconds_);
  return std::string(buf, p);
}

TimePoint TimePoint::parse(std::string_view text) {
  std::string_view s = text;
  if (!s.empty() && s.back() == 'Z') s.remove_suffix(1);
  if (s.size() != 10 && s.size() != 19) bad_time_point(text);
  unsigned y = 0, m = 0, d = 0, hh = 0, mm = 0, ss = 0;
  const char* p = s.data();
  if (!detail::get_digits(p, 4, y) || p[4] != '-' || !detail::get_digits(p + 5, 2, m) ||
      p[7] != '-' || !detail::get_digits(p + 8, 2, d)) {
    bad_time_point(text);
  }
  if (s.size() == 19) {
    if ((p[10] != 'T' && p[10] != ' ') || !detail::get_digits(p + 11, 2, hh) || p[13] != ':' ||
        !detail::get_digits(p + 14, 2, mm) || p[16] != ':' || !detail::get_digits(p + 17, 2, ss)) {
      bad_time_point(text);
    }
  } else if (s.size() != text.size()) {
    bad_time_point(text);  // "2026-05-20Z": a zone marker needs a time of day
  }
  if (m < 1 || m > 12 || d < 1 || d > detail::days_in_month(y, m) || hh > 23 || mm > 59 ||
      ss > 59) {
    bad_time_point(text);
  }
  return from_epoch_seconds(detail::days_from_civil(y, m, d) * kSecondsPerDay + hh * 3600 +
                            mm * 60 + ss);
}

std::ostream& operator<<(std::ostream& out, const TimePoint& t) { return out << t.to_string(); }

Clock::~Clock() = default;

TimePoint SystemClock::now() const {
  return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
}

}  // namespace interloper
