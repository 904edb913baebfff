#include "interloper/cron.hpp"

#include <array>
#include <bit>
#include <cctype>
#include <limits>
#include <stdexcept>
#include <vector>

#include "interloper/time/civil.hpp"

namespace interloper {

namespace {

constexpr std::int64_t kMinutesPerDay = 1440;

struct FieldSpec {
  const char* name;
  unsigned min;
  unsigned max;  // the largest value written (7 for the day of week, which means Sunday)
  const char* const* names;  // names[i] is value min + i, or nullptr
  std::size_t name_count;
};

constexpr const char* kMonthNames[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr const char* kDayNames[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

constexpr FieldSpec kFields[] = {
    {"minute", 0, 59, nullptr, 0},       {"hour", 0, 23, nullptr, 0},
    {"day of month", 1, 31, nullptr, 0}, {"month", 1, 12, kMonthNames, 12},
    {"day of week", 0, 7, kDayNames, 7},
};

struct Macro {
  const char* name;
  const char* expansion;
};

constexpr Macro kMacros[] = {
    {"@hourly", "0 * * * *"},   {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"},
    {"@weekly", "0 0 * * 0"},   {"@monthly", "0 0 1 * *"}, {"@yearly", "0 0 1 1 *"},
    {"@annually", "0 0 1 1 *"},
};

// `N/STEP` in the day of week, read as croniter reads it: 7 becomes Sunday (0) first, the span
// ends on Saturday, and `6/STEP` spans Saturday to Saturday, which croniter takes as the whole
// week from Sunday (as it takes `sun-sun`).
void weekday_step_span(unsigned& lo, unsigned& hi) {
  lo %= 7;
  hi = 6;
  if (lo == 6) lo = 0;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  [[noreturn]] void fail(std::size_t position, const std::string& what) const {
    throw CronSyntaxError("invalid cron expression '" + std::string(text_) + "': " + what,
                          position);
  }

  // A value: digits, or a name for fields that have names.
  unsigned value(std::string_view token, std::size_t position, const FieldSpec& f) const {
    if (token.empty()) fail(position, std::string(f.name) + " value missing");
    if (std::isdigit(static_cast<unsigned char>(token.front()))) {
      unsigned v = 0;
      for (const char ch : token) {
        if (!std::isdigit(static_cast<unsigned char>(ch))) {
          fail(position,
               std::string(f.name) + " value '" + std::string(token) + "' is not a number");
        }
        v = v * 10 + static_cast<unsigned>(ch - '0');
        if (v > 1000) break;
      }
      if (v < f.min || v > f.max) {
        fail(position, std::string(f.name) + " " + std::string(token) + " is out of range " +
                           std::to_string(f.min) + "-" + std::to_string(f.max));
      }
      return v;
    }
    for (std::size_t i = 0; i < f.name_count; ++i) {
      if (token.size() == 3 &&
          std::tolower(static_cast<unsigned char>(token[0])) == f.names[i][0] &&
          std::tolower(static_cast<unsigned char>(token[1])) == f.names[i][1] &&
          std::tolower(static_cast<unsigned char>(token[2])) == f.names[i][2]) {
        return f.min + static_cast<unsigned>(i);
      }
    }
    fail(position, "unknown " + std::string(f.name) + " '" + std::string(token) + "'");
  }

  // The set of values of one field, as bits.
  std::uint64_t field(std::string_view text, std::size_t position, const FieldSpec& f) const {
    std::uint64_t bits = 0;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = text.find(',', start);
      const std::string_view item = text.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      bits |= this->item(item, position + start, f);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return bits;
  }

  std::uint64_t item(std::string_view item, std::size_t position, const FieldSpec& f) const {
    if (item.empty()) fail(position, "empty item in the " + std::string(f.name) + " field");
    std::string_view base = item;
    unsigned step = 1;
    bool stepped = false;
    if (const std::size_t slash = item.find('/'); slash != std::string_view::npos) {
      base = item.substr(0, slash);
      const std::string_view s = item.substr(slash + 1);
      if (s.empty())
        fail(position, std::string(f.name) + " step missing in '" + std::string(item) + "'");
      step = 0;
      for (const char ch : s) {
        if (!std::isdigit(static_cast<unsigned char>(ch))) {
          fail(position, std::string(f.name) + " step '" + std::string(s) + "' is not a number");
        }
        step = std::min(step * 10 + static_cast<unsigned>(ch - '0'), 1000u);
      }
      if (step == 0) fail(position, std::string(f.name) + " step must not be 0");
      stepped = true;
    }
    unsigned lo = f.min;
    unsigned hi = f.max;
    if (base == "*") {
      if (f.max == 7) hi = 6;  // `*` in the day of week: Sunday once
    } else {
      const std::size_t dash = base.find('-');
      if (dash == std::string_view::npos) {
        lo = value(base, position, f);
        hi = stepped ? f.max : lo;
        if (stepped && f.max == 7) weekday_step_span(lo, hi);
      } else {
        lo = value(base.substr(0, dash), position, f);
        hi = value(base.substr(dash + 1), position, f);
        if (hi < lo) {
          fail(position, std::string(f.name) + " range '" + std::string(base) + "' is backwards");
        }
      }
    }
    std::uint64_t bits = 0;
    for (unsigned v = lo; v <= hi; v += step) bits |= std::uint64_t{1} << (f.max == 7 ? v % 7 : v);
    return bits;
  }

 private:
  std::string_view text_;
};

bool is_space(char ch) { return ch == ' ' || ch == '\t'; }

// The largest day of month m (1..12) in any year.
constexpr unsigned longest_month(unsigned m) {
  return m == 2 ? 29 : detail::days_in_month(2001, m);
}

// 0 = Sunday .. 6 = Saturday for a day count since 1970-01-01 (a Thursday).
constexpr unsigned weekday_from_sunday(std::int64_t days) {
  return static_cast<unsigned>(detail::floor_mod(days + 4, 7));
}

constexpr std::uint64_t kAllDays = 0xFFFFFFFEull;  // bits 1..31

}  // namespace

CronSchedule CronSchedule::parse(std::string_view text) {
  const Parser parser(text);
  std::size_t begin = 0, end = text.size();
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  std::string_view body = text.substr(begin, end - begin);
  std::size_t base = begin;  // offset of body in text
  if (!body.empty() && body.front() == '@') {
    const Macro* macro = nullptr;
    for (const Macro& m : kMacros) {
      if (body == m.name) macro = &m;
    }
    if (macro == nullptr) {
      parser.fail(begin, "unknown macro '" + std::string(body) +
                             "' (expected @hourly, @daily, @midnight, @weekly, @monthly, "
                             "@yearly or @annually)");
    }
    CronSchedule s = parse(macro->expansion);
    s.text_.assign(text);
    return s;
  }
  std::vector<std::pair<std::string_view, std::size_t>> fields;
  std::size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && is_space(body[i])) ++i;
    const std::size_t start = i;
    while (i < body.size() && !is_space(body[i])) ++i;
    if (i > start) fields.emplace_back(body.substr(start, i - start), base + start);
  }
  if (fields.size() != 5) {
    parser.fail(begin, "expected 5 fields (minute hour day-of-month month day-of-week), got " +
                           std::to_string(fields.size()));
  }
  CronSchedule s;
  s.text_.assign(text);
  s.minutes_ = parser.field(fields[0].first, fields[0].second, kFields[0]);
  s.hours_ =
      static_cast<std::uint32_t>(parser.field(fields[1].first, fields[1].second, kFields[1]));
  s.days_ = static_cast<std::uint32_t>(parser.field(fields[2].first, fields[2].second, kFields[2]));
  s.months_ =
      static_cast<std::uint16_t>(parser.field(fields[3].first, fields[3].second, kFields[3]));
  s.weekdays_ =
      static_cast<std::uint8_t>(parser.field(fields[4].first, fields[4].second, kFields[4]));
  const std::string_view hour_text = fields[1].first;
  s.every_hour_ = hour_text.front() == '*' || hour_text.find('/') != std::string_view::npos ||
                  s.hours_ == 0xFFFFFF;
  const bool days_restricted = s.days_ != kAllDays;
  const bool weekdays_restricted = s.weekdays_ != 0x7F;
  s.day_or_ = days_restricted && weekdays_restricted;
  if (days_restricted && !weekdays_restricted) {
    bool fires = false;
    for (unsigned m = 1; m <= 12; ++m) {
      const std::uint64_t possible = (std::uint64_t{2} << longest_month(m)) - 2;
      if ((s.months_ >> m & 1) && (s.days_ & possible) != 0) fires = true;
    }
    if (!fires) {
      parser.fail(fields[2].second, "day of month '" + std::string(fields[2].first) +
                                        "' never occurs in month '" + std::string(fields[3].first) +
                                        "', so it never fires");
    }
  }
  return s;
}

bool CronSchedule::day_matches(std::int64_t days) const {
  const detail::Civil c = detail::civil_from_days(days);
  const bool dom = (days_ >> c.day) & 1;
  const bool dow = (weekdays_ >> weekday_from_sunday(days)) & 1;
  return (months_ >> c.month & 1) && (day_or_ ? (dom || dow) : (dom && dow));
}

bool CronSchedule::matches(TimePoint civil) const {
  const std::int64_t minute = detail::floor_div(civil.epoch_seconds(), 60);
  const std::int64_t days = detail::floor_div(minute, kMinutesPerDay);
  const auto of_day = static_cast<unsigned>(minute - days * kMinutesPerDay);
  return day_matches(days) && (hours_ >> (of_day / 60) & 1) && (minutes_ >> (of_day % 60) & 1);
}

std::uint64_t CronSchedule::days_matching(std::int64_t year, unsigned month) const {
  const unsigned dim = detail::days_in_month(year, month);
  const std::uint64_t valid = (std::uint64_t{2} << dim) - 2;
  // Bit k (0..6) is set when day k + 1 of the month falls on a weekday of the expression; the
  // month's weeks repeat it.
  const unsigned w1 = weekday_from_sunday(detail::days_from_civil(year, month, 1));
  std::uint64_t week = 0;
  for (unsigned k = 0; k < 7; ++k) week |= std::uint64_t{(weekdays_ >> ((w1 + k) % 7)) & 1u} << k;
  const std::uint64_t by_weekday = (week | week << 7 | week << 14 | week << 21 | week << 28) << 1;
  const std::uint64_t by_day = days_;
  return (day_or_ ? (by_day | by_weekday) : (by_day & by_weekday)) & valid;
}

namespace {

// The civil minute the search for the next fire stands on. Moving to a later day, month or
// hour lands on the first hour and minute of the expression within it.
struct CronCursor {
  std::int64_t year;
  unsigned month, day, hour, minute;
  unsigned first_hour, first_minute;

  void start_of_hour(unsigned h) {
    hour = h;
    minute = first_minute;
  }
  void start_of_day(unsigned d) {
    day = d;
    start_of_hour(first_hour);
  }
  void start_of_month(unsigned m) {
    month = m;
    start_of_day(1);
  }
  void next_month() {
    if (month == 12) ++year;
    start_of_month(month % 12 + 1);
  }
};

}  // namespace

std::int64_t CronSchedule::next_match(std::int64_t civil) const {
  const std::int64_t minute = detail::floor_div(civil, 60) + 1;
  const std::int64_t days = detail::floor_div(minute, kMinutesPerDay);
  const auto of_day = static_cast<unsigned>(minute - days * kMinutesPerDay);
  const detail::Civil c = detail::civil_from_days(days);
  CronCursor at{c.year,
                c.month,
                c.day,
                of_day / 60,
                of_day % 60,
                static_cast<unsigned>(std::countr_zero(hours_)),
                static_cast<unsigned>(std::countr_zero(minutes_))};
  // Fires exist (parse checks), so the loop ends within a leap-year cycle of months.
  for (int guard = 0; guard < 12 * 400; ++guard) {
    if (!(months_ >> at.month & 1)) {
      const unsigned later = months_ & ~((2u << at.month) - 1);
      if (later == 0) ++at.year;
      at.start_of_month(static_cast<unsigned>(std::countr_zero(later != 0 ? later : months_)));
    }
    const std::uint64_t days_left =
        days_matching(at.year, at.month) & ~((std::uint64_t{1} << at.day) - 1);
    if (days_left == 0) {
      at.next_month();
      continue;
    }
    if (const auto d = static_cast<unsigned>(std::countr_zero(days_left)); d != at.day) {
      at.start_of_day(d);
    }
    const std::uint32_t hours_left = at.hour > 23 ? 0 : hours_ & ~((1u << at.hour) - 1);
    if (hours_left == 0) {
      if (at.day == detail::days_in_month(at.year, at.month)) {
        at.next_month();
      } else {
        at.start_of_day(at.day + 1);
      }
      continue;
    }
    if (const auto h = static_cast<unsigned>(std::countr_zero(hours_left)); h != at.hour) {
      at.start_of_hour(h);
    }
    const std::uint64_t minutes_left =
        at.minute > 59 ? 0 : minutes_ & ~((std::uint64_t{1} << at.minute) - 1);
    if (minutes_left == 0) {
      at.start_of_hour(at.hour + 1);
      continue;
    }
    at.minute = static_cast<unsigned>(std::countr_zero(minutes_left));
    return (detail::days_from_civil(at.year, at.month, at.day) * kMinutesPerDay + at.hour * 60 +
            at.minute) *
           60;
  }
  throw std::logic_error("cron expression '" + text_ + "' found no fire in 400 years");
}

TimePoint CronSchedule::next_fire(TimePoint after, std::string_view zone) const {
  return every_hour_ ? next_fire_on_the_clock(after, zone) : next_fire_once(after, zone);
}

TimePoint CronSchedule::next_fire_once(TimePoint after, std::string_view zone) const {
  const std::int64_t limit = after.epoch_seconds();
  std::int64_t wall = to_local(after, zone).epoch_seconds();
  // Wall times after `after`'s own can still lie before it when clocks went back and `after` is
  // in the repeated span; those fired at their first occurrence already.
  for (int guard = 0; guard < 100000; ++guard) {
    wall = next_match(wall);
    const LocalTime local = from_local(TimePoint::from_epoch_seconds(wall), zone);
    if (local.first.epoch_seconds() > limit) return local.first;
  }
  throw std::logic_error("cron expression '" + text_ + "' found no fire after " +
                         after.to_string());
}

// The first instant after `after` whose wall time matches. Wall times are visited in order and
// their instants are not: when clocks are about to go back, a wall time earlier than `after`'s
// own comes round again after it, so the walk starts that far back, keeps the earliest second
// occurrence seen, and stops at the first wall time that cannot happen before it.
TimePoint CronSchedule::next_fire_on_the_clock(TimePoint after, std::string_view zone) const {
  const std::int64_t limit = after.epoch_seconds();
  std::int64_t wall = to_local(after, zone).epoch_seconds();
  if (const LocalTime here = from_local(TimePoint::from_epoch_seconds(wall), zone);
      here.kind == LocalTime::Kind::repeated && here.first == after) {
    wall -= here.second.epoch_seconds() - here.first.epoch_seconds();
  }
  std::int64_t best = std::numeric_limits<std::int64_t>::max();
  for (int guard = 0; guard < 100000; ++guard) {
    wall = next_match(wall);
    const LocalTime local = from_local(TimePoint::from_epoch_seconds(wall), zone);
    // Later wall times happen no earlier than this one's first instant.
    const std::int64_t first = local.first.epoch_seconds();
    if (first >= best) return TimePoint::from_epoch_seconds(best);
    if (local.kind == LocalTime::Kind::skipped) continue;  // not on the clock today
    if (first > limit) return local.first;
    const std::int64_t second = local.second.epoch_seconds();
    if (local.kind == LocalTime::Kind::repeated && second > limit) best = std::min(best, second);
  }
  throw std::logic_error("cron expression '" + text_ + "' found no fire after " +
                         after.to_string());
}

}  // namespace interloper
