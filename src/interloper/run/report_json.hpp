// The JSON that the command line prints and `interloper serve` answers alike: a job's fire has
// one shape wherever it is shown (a queued backfill's is queue/queue_json.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "interloper/schedule.hpp"

namespace interloper {

// One fire of `job` at the UTC instant `fire`: {"job", "fire" (the job's wall clock with its
// UTC offset), "fire_utc" ("...Z"), "window" (its text, or null when the assets' start leaves
// nothing to run)}.
nlohmann::ordered_json fire_json(const Job& job, TimePoint fire);

}  // namespace interloper
