// interloper/time.hpp — civil time points, granularities and their keys, time zones, clocks.
//
// A TimePoint is a *label* on the civil calendar ("2026-05-20 13:00:00"), not a moment in some
// zone. Partition keys are built from such labels, so the same key means the same thing on
// every machine. Only two places relate labels to real instants:
//
//   * hour partitions: their labels are UTC, so an hour label is also an instant;
//   * to_local / from_local: convert between a UTC instant and the civil time of an IANA zone.
//     from_local never guesses: a civil time that daylight-saving skips or repeats is reported
//     as such (LocalTime::Kind::skipped / repeated), like absl::civil_time does.
//
// A TimeGranularity (HOUR, DAY, WEEK, MONTH, QUARTER, YEAR) owns every piece of calendar
// arithmetic: truncating to a period start, stepping by periods, counting periods, and printing
// and parsing the key of a period. Keys are ISO-8601 prefixes that sort chronologically as plain
// strings and whose shape names the granularity:
//
//   2026 (year)  2026-Q2 (quarter)  2026-05 (month)  2026-W21 (ISO week, Monday start)
//   2026-05-20 (day)  2026-05-20T13 (hour, UTC)
//
// Example:
//
//   using namespace std::chrono;
//   il::TimePoint t = year{2026} / May / 20;
//   auto g = il::TimeGranularity::MONTH;
//   g.truncate(t);                 // 2026-05-01T00:00:00
//   g.advance(t, -1);              // 2026-04-01T00:00:00
//   g.bounds(t);                   // {2026-05-01, 2026-06-01}, half-open
//   g.format(t);                   // "2026-05"
//   g.parse("2026-05");            // 2026-05-01T00:00:00
//   il::TimeGranularity::infer("2026-W21");   // WEEK
//   il::to_local(t, "Europe/Berlin");          // 2026-05-20T02:00:00
//   il::to_local_text(t, "Europe/Berlin");     // "2026-05-20T02:00:00+02:00"
//
// Everything here is a value type without shared state and safe to use from many threads; the
// time-zone functions keep a per-thread cache.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace interloper {

// A zone-less civil date and time with second resolution, stored as seconds since
// 1970-01-01T00:00:00. Implicitly constructible from the chrono calendar types, so
// `il::TimePoint t = 2026y / May / 20;` and comparisons like `t == sys_days{...}` work.
class TimePoint {
 public:
  // The epoch, 1970-01-01T00:00:00.
  constexpr TimePoint() = default;
  constexpr TimePoint(std::chrono::sys_seconds s)  // NOLINT(google-explicit-constructor)
      : seconds_(static_cast<std::int64_t>(s.time_since_epoch().count())) {}
  constexpr TimePoint(std::chrono::sys_days d)  // NOLINT(google-explicit-constructor)
      : seconds_(static_cast<std::int64_t>(d.time_since_epoch().count()) * 86400) {}
  constexpr TimePoint(std::chrono::year_month_day ymd)  // NOLINT(google-explicit-constructor)
      : TimePoint(std::chrono::sys_days(ymd)) {}

  // The same label from its count of seconds since 1970-01-01T00:00:00.
  static constexpr TimePoint from_epoch_seconds(std::int64_t seconds) {
    TimePoint t;
    t.seconds_ = seconds;
    return t;
  }

  constexpr std::chrono::sys_seconds seconds() const {
    return std::chrono::sys_seconds{std::chrono::seconds{seconds_}};
  }
  constexpr std::int64_t epoch_seconds() const { return seconds_; }

  // The calendar date of the label (its time of day dropped).
  std::chrono::year_month_day date() const;
  // True when the time of day is 00:00:00.
  constexpr bool is_midnight() const { return seconds_ % 86400 == 0; }

  // "YYYY-MM-DDTHH:MM:SS", always with the time of day.
  std::string to_string() const;
  // "YYYY-MM-DD".
  std::string date_string() const;

  // Parses "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SS"; a space may replace the T and a trailing Z is
  // accepted (and ignored: labels have no zone). Throws std::invalid_argument naming the text
  // when it has another shape or names an impossible date or time.
  static TimePoint parse(std::string_view text);

  friend constexpr auto operator<=>(const TimePoint&, const TimePoint&) = default;
  friend constexpr bool operator==(const TimePoint&, const TimePoint&) = default;
  // Writes to_string().
  friend std::ostream& operator<<(std::ostream& out, const TimePoint& t);

 private:
  std::int64_t seconds_ = 0;
};

// A half-open range [start, end) of time points.
struct Bounds {
  TimePoint start;
  TimePoint end;
  friend constexpr bool operator==(const Bounds&, const Bounds&) = default;
};

// The length of a time partition, and all calendar arithmetic on periods of that length.
// A cheap value type (one byte). All members are pure functions of their arguments.
class TimeGranularity {
 public:
  enum class Unit : std::uint8_t { hour, day, week, month, quarter, year };

  // Constant values rather than enumerators (which are lower-case across the API): they keep
  // the upper-case names every partition definition uses.
  static const TimeGranularity HOUR;
  static const TimeGranularity DAY;
  static const TimeGranularity WEEK;  // ISO weeks, starting on Monday
  static const TimeGranularity MONTH;
  static const TimeGranularity QUARTER;
  static const TimeGranularity YEAR;

  // DAY.
  constexpr TimeGranularity() = default;
  constexpr explicit TimeGranularity(Unit unit) : unit_(unit) {}

  constexpr Unit unit() const { return unit_; }
  // "hour", "day", "week", "month", "quarter" or "year".
  std::string_view name() const;
  // The inverse of name(). Throws std::invalid_argument naming an unknown name.
  static TimeGranularity from_name(std::string_view name);

  // The start of the period holding t.
  TimePoint truncate(TimePoint t) const;
  // The start of the period n periods after (n < 0: before) the one holding t. Months clamp
  // nothing because period starts are always the first of a month: advancing 2026-03-31 by -1
  // month gives 2026-02-01.
  TimePoint advance(TimePoint t, std::int64_t n) const;
  // {start, end} of the period holding t, half-open; end is the start of the next period.
  Bounds bounds(TimePoint t) const;
  // Whole periods from the period of a to the period of b; negative when b is earlier.
  std::int64_t periods_between(TimePoint a, TimePoint b) const;
  // Period starts from a's period to b's, inclusive, oldest first; empty when b is earlier.
  std::vector<TimePoint> period_range(TimePoint a, TimePoint b) const;

  // The key of the period holding t ("2026-05", "2026-W21", ...). Years outside 0000-9999 are
  // written with more digits or a sign, and such keys do not parse.
  std::string format(TimePoint t) const;
  // The start of the period named by key, which must have exactly this granularity's shape.
  // Throws std::invalid_argument naming the key for another shape, an impossible date
  // (2026-02-30, 2026-13, 2026-W53 in a 52-week year, 2026-Q5), missing zero padding or
  // trailing text.
  TimePoint parse(std::string_view key) const;
  // The granularity whose key shape `key` has, or nullopt. Looks at the shape only: a key it
  // accepts may still be rejected by parse (for instance "2026-13").
  static std::optional<TimeGranularity> infer(std::string_view key);

  friend constexpr bool operator==(TimeGranularity, TimeGranularity) = default;

 private:
  Unit unit_ = Unit::day;
};

inline constexpr TimeGranularity TimeGranularity::HOUR{TimeGranularity::Unit::hour};
inline constexpr TimeGranularity TimeGranularity::DAY{TimeGranularity::Unit::day};
inline constexpr TimeGranularity TimeGranularity::WEEK{TimeGranularity::Unit::week};
inline constexpr TimeGranularity TimeGranularity::MONTH{TimeGranularity::Unit::month};
inline constexpr TimeGranularity TimeGranularity::QUARTER{TimeGranularity::Unit::quarter};
inline constexpr TimeGranularity TimeGranularity::YEAR{TimeGranularity::Unit::year};

// Writes name().
std::ostream& operator<<(std::ostream& out, TimeGranularity g);

// ---- Time zones (IANA names, read from the system time-zone database) ----

// The civil time in `zone` at the UTC instant `utc_instant` (a TimePoint read as UTC).
// Throws std::invalid_argument naming an unknown zone.
TimePoint to_local(TimePoint utc_instant, std::string_view zone);

// The same civil time as RFC 3339 text with the zone's UTC offset at that instant:
// "2026-03-29T03:00:00+02:00" for 01:00 UTC in Europe/Berlin; an offset with seconds (some
// zones before 1900) adds ":SS". Throws std::invalid_argument naming an unknown zone.
std::string to_local_text(TimePoint utc_instant, std::string_view zone);

// The UTC instant(s) at which the clocks of a zone show a given civil time.
struct LocalTime {
  enum class Kind {
    unique,    // one instant: first == second
    skipped,   // the civil time falls in a gap (clocks jumped forward); first == second == the
               // instant the gap ends, i.e. the first instant after it
    repeated,  // the civil time happens twice (clocks went back); first is the earlier instant
  };
  Kind kind = Kind::unique;
  TimePoint first;
  TimePoint second;
};

// Resolves the civil time `civil` in `zone` to UTC instants, reporting DST gaps and overlaps
// instead of guessing. Throws std::invalid_argument naming an unknown zone.
LocalTime from_local(TimePoint civil, std::string_view zone);

// ---- Clocks: logic asks a Clock for "now", so tests can pin it ----

class Clock {
 public:
  virtual ~Clock();
  // The current UTC instant, truncated to the second. Thread-safe for the clocks below.
  virtual TimePoint now() const = 0;
};

// The system's real-time clock.
class SystemClock final : public Clock {
 public:
  TimePoint now() const override;
};

// A clock that shows whatever it was last set to. Not synchronized: set it before sharing.
class FixedClock final : public Clock {
 public:
  explicit FixedClock(TimePoint now = {}) : now_(now) {}
  TimePoint now() const override { return now_; }
  void set(TimePoint now) { now_ = now; }

 private:
  TimePoint now_;
};

}  // namespace interloper
