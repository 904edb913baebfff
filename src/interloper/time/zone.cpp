// Time-zone conversion through Howard Hinnant's date/tz (libstdc++ 12 has no chrono zones).
#include <date/tz.h>

#include <stdexcept>
#include <string>

#include "interloper/time.hpp"

namespace interloper {

namespace {

// Per-thread cache of the last zone looked up and the last offset interval used in it, so a
// schedule evaluating many instants in one zone does neither a name search nor a transition
// search per call.
struct ZoneCache {
  std::string name;
  const date::time_zone* zone = nullptr;
  std::int64_t begin = 0;  // [begin, end) in UTC seconds where `offset` holds
  std::int64_t end = 0;
  std::int64_t offset = 0;
};

ZoneCache& cache() {
  thread_local ZoneCache c;
  return c;
}

const date::time_zone* find_zone(ZoneCache& c, std::string_view name) {
  if (c.zone != nullptr && name == c.name) return c.zone;
  const date::time_zone* zone = nullptr;
  try {
    zone = date::locate_zone(std::string(name));
  } catch (const std::exception&) {
    throw std::invalid_argument("unknown time zone '" + std::string(name) + "'");
  }
  c.name.assign(name);
  c.zone = zone;
  c.begin = c.end = 0;
  return zone;
}

bool is_utc(std::string_view zone) { return zone == "UTC" || zone == "Etc/UTC"; }

}  // namespace

TimePoint to_local(TimePoint utc_instant, std::string_view zone) {
  if (is_utc(zone)) return utc_instant;
  ZoneCache& c = cache();
  const date::time_zone* tz = find_zone(c, zone);
  const std::int64_t s = utc_instant.epoch_seconds();
  if (!(c.begin <= s && s < c.end)) {
    const date::sys_info info = tz->get_info(utc_instant.seconds());
    c.begin = info.begin.time_since_epoch().count();
    c.end = info.end.time_since_epoch().count();
    c.offset = info.offset.count();
  }
  return TimePoint::from_epoch_seconds(s + c.offset);
}

LocalTime from_local(TimePoint civil, std::string_view zone) {
  const std::int64_t s = civil.epoch_seconds();
  if (is_utc(zone)) return {LocalTime::Kind::unique, civil, civil};
  const date::time_zone* tz = find_zone(cache(), zone);
  const date::local_info info =
      tz->get_info(date::local_seconds{std::chrono::seconds{s}});
  switch (info.result) {
    case date::local_info::nonexistent: {
      const TimePoint after = info.second.begin;
      return {LocalTime::Kind::skipped, after, after};
    }
    case date::local_info::ambiguous:
      return {LocalTime::Kind::repeated, TimePoint::from_epoch_seconds(s - info.first.offset.count()),
              TimePoint::from_epoch_seconds(s - info.second.offset.count())};
    default: {
      const TimePoint t = TimePoint::from_epoch_seconds(s - info.first.offset.count());
      return {LocalTime::Kind::unique, t, t};
    }
  }
}

}  // namespace interloper
