// Time-zone conversion through Abseil's time-zone library (cctz). It reads the system's TZif
// files and, past the last transition they store, applies the POSIX TZ rule at their end, so
// instants after 2037 convert as exactly as earlier ones.
#include <absl/time/civil_time.h>
#include <absl/time/time.h>
#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "interloper/time.hpp"

namespace interloper {

namespace {

constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::min();

// Per-thread cache of the last zone looked up and the last offset interval used in it, so a
// schedule evaluating many instants in one zone does neither a name search nor a transition
// search per call.
struct ZoneCache {
  std::string name;
  absl::TimeZone zone;
  bool loaded = false;
  std::int64_t begin = 0;  // [begin, end) in UTC seconds where `offset` holds
  std::int64_t end = 0;
  std::int64_t offset = 0;
  std::int64_t offset_before = 0;  // the offset of the interval ending at `begin`
  std::int64_t offset_after = 0;   // the offset of the interval starting at `end`
};

ZoneCache& cache() {
  thread_local ZoneCache c;
  return c;
}

// IANA names only: the library would also read a file path, a "Fixed/UTC+hh" name or the
// machine's local zone, none of which may reach it through a pipeline file.
bool plausible_name(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.front() == ':' || name == "localtime" ||
      name.starts_with("Fixed/") || name.find("..") != std::string_view::npos) {
    return false;
  }
  for (const char ch : name) {
    const bool ok = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                    (ch >= '0' && ch <= '9') || ch == '/' || ch == '_' || ch == '-' || ch == '+';
    if (!ok) return false;
  }
  return true;
}

const absl::TimeZone& find_zone(ZoneCache& c, std::string_view name) {
  if (c.loaded && name == c.name) return c.zone;
  absl::TimeZone zone;
  if (!plausible_name(name) || !absl::LoadTimeZone(std::string(name), &zone)) {
    throw std::invalid_argument("unknown time zone '" + std::string(name) + "'");
  }
  c.name.assign(name);
  c.zone = zone;
  c.loaded = true;
  c.begin = c.end = 0;
  return c.zone;
}

bool is_utc(std::string_view zone) { return zone == "UTC" || zone == "Etc/UTC"; }

absl::Time instant(std::int64_t seconds) { return absl::FromUnixSeconds(seconds); }
std::int64_t seconds(absl::Time t) { return absl::ToUnixSeconds(t); }

const absl::CivilSecond kEpoch(1970, 1, 1, 0, 0, 0);

// The UTC instant of the transition whose clocks jump to civil time `to`.
std::int64_t transition_instant(const absl::TimeZone& tz, const absl::CivilSecond& to) {
  return seconds(tz.At(to).trans);
}

// Fills c's interval with the one holding UTC second s.
void load_interval(ZoneCache& c, std::int64_t s) {
  const absl::TimeZone& tz = c.zone;
  c.offset = tz.At(instant(s)).offset;
  absl::TimeZone::CivilTransition t;
  // The interval starts at the last transition at or before s, and ends at the next one.
  c.begin = tz.PrevTransition(instant(s + 1), &t) ? transition_instant(tz, t.to) : kNever;
  c.end = tz.NextTransition(instant(s), &t) ? transition_instant(tz, t.to) : kForever;
  c.offset_before = c.begin == kNever ? c.offset : tz.At(instant(c.begin - 1)).offset;
  c.offset_after = c.end == kForever ? c.offset : tz.At(instant(c.end)).offset;
}

}  // namespace

TimePoint to_local(TimePoint utc_instant, std::string_view zone) {
  if (is_utc(zone)) return utc_instant;
  ZoneCache& c = cache();
  find_zone(c, zone);
  const std::int64_t s = utc_instant.epoch_seconds();
  if (!(c.begin <= s && s < c.end)) load_interval(c, s);
  return TimePoint::from_epoch_seconds(s + c.offset);
}

std::string to_local_text(TimePoint utc_instant, std::string_view zone) {
  const TimePoint local = to_local(utc_instant, zone);
  std::int64_t offset = local.epoch_seconds() - utc_instant.epoch_seconds();
  const char sign = offset < 0 ? '-' : '+';
  if (offset < 0) offset = -offset;
  std::string text =
      fmt::format("{}{}{:02}:{:02}", local.to_string(), sign, offset / 3600, offset / 60 % 60);
  if (offset % 60 != 0) text += fmt::format(":{:02}", offset % 60);
  return text;
}

LocalTime from_local(TimePoint civil, std::string_view zone) {
  const std::int64_t s = civil.epoch_seconds();
  if (is_utc(zone)) return {LocalTime::Kind::unique, civil, civil};
  ZoneCache& c = cache();
  const absl::TimeZone& tz = find_zone(c, zone);
  // Fast path: the civil time lies inside the cached interval's local span and in neither of
  // its neighbours' spans, so it names exactly one instant.
  if (c.begin != c.end) {
    const std::int64_t lo =
        c.begin == kNever ? kNever : c.begin + std::max(c.offset, c.offset_before);
    const std::int64_t hi =
        c.end == kForever ? kForever : c.end + std::min(c.offset, c.offset_after);
    if (lo <= s && s < hi) {
      const TimePoint t = TimePoint::from_epoch_seconds(s - c.offset);
      return {LocalTime::Kind::unique, t, t};
    }
  }
  const absl::TimeZone::TimeInfo info = tz.At(kEpoch + s);
  switch (info.kind) {
    case absl::TimeZone::TimeInfo::SKIPPED: {
      const TimePoint after = TimePoint::from_epoch_seconds(seconds(info.trans));
      return {LocalTime::Kind::skipped, after, after};
    }
    case absl::TimeZone::TimeInfo::REPEATED:
      return {LocalTime::Kind::repeated, TimePoint::from_epoch_seconds(seconds(info.pre)),
              TimePoint::from_epoch_seconds(seconds(info.post))};
    default: {
      const TimePoint t = TimePoint::from_epoch_seconds(seconds(info.pre));
      if (!(c.begin <= seconds(info.pre) && seconds(info.pre) < c.end)) {
        load_interval(c, seconds(info.pre));
      }
      return {LocalTime::Kind::unique, t, t};
    }
  }
}

}  // namespace interloper
