// interloper/cron.hpp — cron expressions and when they fire on a time zone's wall clock.
//
// A CronSchedule is a standard five-field cron expression (minute, hour, day of month, month,
// day of week) or one of @hourly @daily @midnight @weekly @monthly @yearly @annually. It fires
// at the local wall times of a zone that it matches, as cron(8) does when clocks change:
//
//   * an expression whose hour field is `*`, a step (`*/2`, `1-23/2`) or every hour runs on the
//     clock as it reads: a wall time that happens twice (clocks going back) fires at both
//     instants, one that does not exist (clocks going forward) does not fire;
//   * any other expression names fixed hours and fires each matching wall time once: a
//     repeated one at its first occurrence, a skipped one at the first instant after the gap
//     (several skipped wall times may share that one instant).
//
//   const auto nightly = il::CronSchedule::parse("0 3 * * *");
//   nightly.next_fire(il::TimePoint::parse("2026-03-28T02:00:00"), "Europe/Berlin");
//   // 2026-03-29T01:00:00 (UTC), 03:00 in Berlin
//
// next_fire works by field arithmetic (month, then day, then hour, then minute), never by
// scanning minutes, and costs a few hundred nanoseconds. A CronSchedule is an immutable value,
// safe to share between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "interloper/time.hpp"

namespace interloper {

// A cron expression that does not parse or never fires. position() is the offset in the text
// of the field (or item) at fault, for callers that point at it in a file.
class CronSyntaxError : public std::invalid_argument {
 public:
  CronSyntaxError(const std::string& message, std::size_t position)
      : std::invalid_argument(message), position_(position) {}
  std::size_t position() const { return position_; }

 private:
  std::size_t position_;
};

class CronSchedule {
 public:
  // Parses an expression. Fields: minute 0-59, hour 0-23, day of month 1-31, month 1-12 or
  // jan-dec, day of week 0-7 or sun-sat (0 and 7 are Sunday); names are case-insensitive. Each
  // field is a comma-separated list of `*`, `N`, `N-M`, each optionally followed by `/STEP`
  // (`N/STEP` means N up to the field's maximum). When the day of month and the day of week
  // both leave out some values, a day matching either fires; otherwise a day must match both.
  // Throws CronSyntaxError naming the bad field for anything else, for backwards ranges, zero
  // steps, and for expressions that never fire (`* * 31 2 *`, `0 0 30 2 *`).
  static CronSchedule parse(std::string_view text);

  // The first fire strictly after the UTC instant `after` on the wall clock of `zone`, as a
  // UTC instant. Throws std::invalid_argument naming an unknown zone.
  TimePoint next_fire(TimePoint after, std::string_view zone) const;

  // True when the wall time `civil` (its seconds ignored) matches the expression.
  bool matches(TimePoint civil) const;

  // The text the schedule was parsed from.
  const std::string& text() const { return text_; }

  friend bool operator==(const CronSchedule& a, const CronSchedule& b) {
    return a.minutes_ == b.minutes_ && a.hours_ == b.hours_ && a.days_ == b.days_ &&
           a.months_ == b.months_ && a.weekdays_ == b.weekdays_ && a.day_or_ == b.day_or_ &&
           a.every_hour_ == b.every_hour_;
  }

 private:
  CronSchedule() = default;
  // The first matching wall minute strictly after the wall time `civil`, in seconds.
  std::int64_t next_match(std::int64_t civil) const;
  // next_fire for expressions with every_hour_ (every occurrence) and without (the first).
  TimePoint next_fire_on_the_clock(TimePoint after, std::string_view zone) const;
  TimePoint next_fire_once(TimePoint after, std::string_view zone) const;
  bool day_matches(std::int64_t days) const;
  // Bit d (1..31) is set for each day d of month `month` of `year` that fires.
  std::uint64_t days_matching(std::int64_t year, unsigned month) const;

  std::string text_;
  std::uint64_t minutes_ = 0;  // bit m: minute m
  std::uint32_t hours_ = 0;    // bit h: hour h
  std::uint32_t days_ = 0;     // bit d: day of month d (1..31)
  std::uint16_t months_ = 0;   // bit m: month m (1..12)
  std::uint8_t weekdays_ = 0;  // bit w: weekday w (0 = Sunday .. 6)
  bool day_or_ = false;        // both day fields restricted: either matches
  bool every_hour_ = false;    // the hour field is `*`, a step or every hour: fire on the clock
};

}  // namespace interloper
