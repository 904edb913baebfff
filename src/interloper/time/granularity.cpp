#include <ostream>
#include <stdexcept>

#include "interloper/time.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {

namespace {

using detail::floor_div;
using detail::kSecondsPerDay;
using Unit = TimeGranularity::Unit;

constexpr std::int64_t kSecondsPerWeek = 7 * kSecondsPerDay;

std::int64_t day_of(TimePoint t) { return floor_div(t.epoch_seconds(), kSecondsPerDay); }

TimePoint from_days(std::int64_t days) {
  return TimePoint::from_epoch_seconds(days * kSecondsPerDay);
}

// Months since year 0, January: a linear index on which months and quarters are arithmetic.
std::int64_t month_index(TimePoint t) {
  const auto c = detail::civil_from_days(day_of(t));
  return c.year * 12 + (c.month - 1);
}

TimePoint from_month_index(std::int64_t mi) {
  const std::int64_t y = floor_div(mi, 12);
  const auto m = static_cast<unsigned>(mi - y * 12 + 1);
  return from_days(detail::days_from_civil(y, m, 1));
}

[[noreturn]] void bad_key(TimeGranularity g, std::string_view key, const char* expected) {
  throw std::invalid_argument("invalid " + std::string(g.name()) + " key '" + std::string(key) +
                              "' (expected " + expected + ")");
}

}  // namespace

std::string_view TimeGranularity::name() const {
  switch (unit_) {
    case Unit::hour: return "hour";
    case Unit::day: return "day";
    case Unit::week: return "week";
    case Unit::month: return "month";
    case Unit::quarter: return "quarter";
    case Unit::year: return "year";
  }
  return "day";
}

TimeGranularity TimeGranularity::from_name(std::string_view name) {
  for (auto g : {HOUR, DAY, WEEK, MONTH, QUARTER, YEAR}) {
    if (g.name() == name) return g;
  }
  throw std::invalid_argument("unknown time granularity '" + std::string(name) +
                              "' (expected hour, day, week, month, quarter or year)");
}

TimePoint TimeGranularity::truncate(TimePoint t) const {
  const std::int64_t s = t.epoch_seconds();
  switch (unit_) {
    case Unit::hour: return TimePoint::from_epoch_seconds(floor_div(s, 3600) * 3600);
    case Unit::day: return from_days(day_of(t));
    case Unit::week: {
      const std::int64_t d = day_of(t);
      return from_days(d - detail::iso_weekday(d));
    }
    case Unit::month: return from_month_index(month_index(t));
    case Unit::quarter: return from_month_index(floor_div(month_index(t), 3) * 3);
    case Unit::year: {
      const auto c = detail::civil_from_days(day_of(t));
      return from_days(detail::days_from_civil(c.year, 1, 1));
    }
  }
  return t;
}

TimePoint TimeGranularity::advance(TimePoint t, std::int64_t n) const {
  switch (unit_) {
    case Unit::hour:
      return TimePoint::from_epoch_seconds(truncate(t).epoch_seconds() + n * 3600);
    case Unit::day: return from_days(day_of(t) + n);
    case Unit::week:
      return TimePoint::from_epoch_seconds(truncate(t).epoch_seconds() + n * kSecondsPerWeek);
    case Unit::month: return from_month_index(month_index(t) + n);
    case Unit::quarter: return from_month_index((floor_div(month_index(t), 3) + n) * 3);
    case Unit::year: {
      const auto c = detail::civil_from_days(day_of(t));
      return from_days(detail::days_from_civil(c.year + n, 1, 1));
    }
  }
  return t;
}

Bounds TimeGranularity::bounds(TimePoint t) const { return {truncate(t), advance(t, 1)}; }

std::int64_t TimeGranularity::periods_between(TimePoint a, TimePoint b) const {
  switch (unit_) {
    case Unit::hour:
      return floor_div(b.epoch_seconds(), 3600) - floor_div(a.epoch_seconds(), 3600);
    case Unit::day: return day_of(b) - day_of(a);
    case Unit::week:
      return (truncate(b).epoch_seconds() - truncate(a).epoch_seconds()) / kSecondsPerWeek;
    case Unit::month: return month_index(b) - month_index(a);
    case Unit::quarter: return floor_div(month_index(b), 3) - floor_div(month_index(a), 3);
    case Unit::year:
      return detail::civil_from_days(day_of(b)).year - detail::civil_from_days(day_of(a)).year;
  }
  return 0;
}

std::vector<TimePoint> TimeGranularity::period_range(TimePoint a, TimePoint b) const {
  std::vector<TimePoint> out;
  const std::int64_t n = periods_between(a, b);
  if (n < 0) return out;
  out.reserve(static_cast<std::size_t>(n) + 1);
  const TimePoint first = truncate(a);
  for (std::int64_t i = 0; i <= n; ++i) out.push_back(advance(first, i));
  return out;
}

std::string TimeGranularity::format(TimePoint t) const {
  char buf[40];
  char* p = buf;
  const std::int64_t days = day_of(t);
  if (unit_ == Unit::week) {
    // The ISO week-year is the year of the week's Thursday.
    const std::int64_t monday = days - detail::iso_weekday(days);
    const std::int64_t year = detail::civil_from_days(monday + 3).year;
    const auto week = static_cast<unsigned>((monday - detail::iso_week1_start(year)) / 7 + 1);
    p = detail::put_year(p, year);
    *p++ = '-';
    *p++ = 'W';
    p = detail::put_digits(p, week, 2);
    return std::string(buf, p);
  }
  const auto c = detail::civil_from_days(days);
  p = detail::put_year(p, c.year);
  switch (unit_) {
    case Unit::year: break;
    case Unit::quarter:
      *p++ = '-';
      *p++ = 'Q';
      *p++ = static_cast<char>('1' + (c.month - 1) / 3);
      break;
    case Unit::month:
      *p++ = '-';
      p = detail::put_digits(p, c.month, 2);
      break;
    case Unit::day:
    case Unit::hour:
    case Unit::week:
      *p++ = '-';
      p = detail::put_digits(p, c.month, 2);
      *p++ = '-';
      p = detail::put_digits(p, c.day, 2);
      if (unit_ == Unit::hour) {
        *p++ = 'T';
        const auto hour = static_cast<unsigned>(
            detail::floor_mod(t.epoch_seconds(), kSecondsPerDay) / 3600);
        p = detail::put_digits(p, hour, 2);
      }
      break;
  }
  return std::string(buf, p);
}

TimePoint TimeGranularity::parse(std::string_view key) const {
  const char* s = key.data();
  const std::size_t n = key.size();
  unsigned y = 0;
  switch (unit_) {
    case Unit::year:
      if (n != 4 || !detail::get_digits(s, 4, y)) bad_key(*this, key, "YYYY");
      return from_days(detail::days_from_civil(y, 1, 1));
    case Unit::quarter: {
      unsigned q = 0;
      if (n != 7 || !detail::get_digits(s, 4, y) || s[4] != '-' || s[5] != 'Q' ||
          !detail::get_digits(s + 6, 1, q) || q < 1 || q > 4) {
        bad_key(*this, key, "YYYY-Qn with n in 1..4");
      }
      return from_days(detail::days_from_civil(y, (q - 1) * 3 + 1, 1));
    }
    case Unit::month: {
      unsigned m = 0;
      if (n != 7 || !detail::get_digits(s, 4, y) || s[4] != '-' ||
          !detail::get_digits(s + 5, 2, m) || m < 1 || m > 12) {
        bad_key(*this, key, "YYYY-MM");
      }
      return from_days(detail::days_from_civil(y, m, 1));
    }
    case Unit::week: {
      unsigned w = 0;
      if (n != 8 || !detail::get_digits(s, 4, y) || s[4] != '-' || s[5] != 'W' ||
          !detail::get_digits(s + 6, 2, w) || w < 1 || w > detail::iso_weeks_in_year(y)) {
        bad_key(*this, key, "YYYY-Www, an ISO week that exists in that year");
      }
      return from_days(detail::iso_week1_start(y) + (w - 1) * 7);
    }
    case Unit::day:
    case Unit::hour: {
      unsigned m = 0, d = 0, h = 0;
      const bool hourly = unit_ == Unit::hour;
      if (n != (hourly ? 13u : 10u) || !detail::get_digits(s, 4, y) || s[4] != '-' ||
          !detail::get_digits(s + 5, 2, m) || s[7] != '-' || !detail::get_digits(s + 8, 2, d) ||
          m < 1 || m > 12 || d < 1 || d > detail::days_in_month(y, m) ||
          (hourly && (s[10] != 'T' || !detail::get_digits(s + 11, 2, h) || h > 23))) {
        bad_key(*this, key, hourly ? "YYYY-MM-DDTHH" : "YYYY-MM-DD");
      }
      return TimePoint::from_epoch_seconds(detail::days_from_civil(y, m, d) * kSecondsPerDay +
                                           h * 3600);
    }
  }
  bad_key(*this, key, "a key");
}

std::optional<TimeGranularity> TimeGranularity::infer(std::string_view key) {
  switch (key.size()) {
    case 4: return YEAR;
    case 7:
      if (key[4] != '-') return std::nullopt;
      return key[5] == 'Q' ? QUARTER : MONTH;
    case 8:
      if (key[4] == '-' && key[5] == 'W') return WEEK;
      return std::nullopt;
    case 10: return DAY;
    case 13:
      if (key[10] == 'T') return HOUR;
      return std::nullopt;
    default: return std::nullopt;
  }
}

std::ostream& operator<<(std::ostream& out, TimeGranularity g) { return out << g.name(); }

}  // namespace interloper
