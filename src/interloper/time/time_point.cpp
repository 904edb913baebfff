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

[[noreturn]] void bad_time_point(std::string_view text) {
  throw std::invalid_argument("invalid time point '" + std::string(text) +
                              "' (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS)");
}

}  // namespace

std::string TimePoint::to_string() const {
  char buf[detail::kMaxIsoChars];
  return std::string(buf, detail::put_timestamp(buf, seconds_));
}

std::string TimePoint::date_string() const {
  char buf[detail::kMaxIsoChars];
  return std::string(buf, detail::put_date(buf, detail::floor_div(seconds_, kSecondsPerDay)));
}

TimePoint TimePoint::parse(std::string_view text) {
  std::string_view s = text;
  if (!s.empty() && s.back() == 'Z') s.remove_suffix(1);
  if (s.size() != 10 && s.size() != 19) bad_time_point(text);
  if (s.size() == 10 && s.size() != text.size()) {
    bad_time_point(text);  // "2026-05-20Z": a zone marker needs a time of day
  }
  std::int64_t days = 0, seconds = 0;
  if (!detail::get_date(s.data(), days) ||
      (s.size() == 19 &&
       ((s[10] != 'T' && s[10] != ' ') || !detail::get_time_of_day(s.data() + 11, seconds)))) {
    bad_time_point(text);
  }
  return from_epoch_seconds(days * kSecondsPerDay + seconds);
}

std::ostream& operator<<(std::ostream& out, const TimePoint& t) { return out << t.to_string(); }

Clock::~Clock() = default;

TimePoint SystemClock::now() const {
  return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
}

}  // namespace interloper
