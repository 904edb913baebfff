// The JSON that the command line prints and `interloper serve` answers alike: a job's fire and a
// run have one shape wherever they are shown (a queued backfill's is queue/queue_json.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "interloper/schedule.hpp"
#include "interloper/store.hpp"

namespace interloper {

// One fire of `job` at the UTC instant `fire`: {"job", "fire" (the job's wall clock with its
// UTC offset), "fire_utc" ("...Z"), "window" (its text, or null when the assets' start leaves
// nothing to run)}.
nlohmann::ordered_json fire_json(const Job& job, TimePoint fire);

// One run of the history, as `runs --json`, the summary of `--json` runs and serve's API show
// it: {"run_id", "pipeline", "command_line", "window" (null for none), "started", "finished",
// "status", "partitions", "succeeded", "failed", "canceled", "skipped", "seconds"}.
nlohmann::ordered_json run_json(const RunRecord& run);

}  // namespace interloper
