// Fuzz target: cron expressions.
// Invariants: whatever parses parses again from its own text to the same schedule, and its next
// fire in a DST zone lies after the instant asked about, on a wall time that matches unless the
// fire ends a DST gap.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "interloper/interloper.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const il::CronSchedule c = il::CronSchedule::parse(text);
    if (!(il::CronSchedule::parse(c.text()) == c)) std::abort();
    il::TimePoint after = il::TimePoint::parse("2026-03-29T00:30:00");
    for (int i = 0; i < 4; ++i) {
      const il::TimePoint fire = c.next_fire(after, "Europe/Berlin");
      if (!(after < fire)) std::abort();
      const il::TimePoint wall = il::to_local(fire, "Europe/Berlin");
      const il::TimePoint just_before = il::to_local(
          il::TimePoint::from_epoch_seconds(fire.epoch_seconds() - 1), "Europe/Berlin");
      const bool ends_gap = just_before.epoch_seconds() + 1 != wall.epoch_seconds();
      if (!c.matches(wall) && !ends_gap) std::abort();
      after = fire;
    }
  } catch (const il::CronSyntaxError& e) {
    if (e.position() > text.size()) std::abort();
  }
  return 0;
}
