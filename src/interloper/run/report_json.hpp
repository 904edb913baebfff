// The JSON that the command line prints and `interloper serve` answers alike: a job's fire and
// a queued backfill's progress have one shape wherever they are shown.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "interloper/run/queue.hpp"
#include "interloper/schedule.hpp"

namespace interloper {

// One fire of `job` at the UTC instant `fire`: {"job", "fire" (the job's wall clock with its
// UTC offset), "fire_utc" ("...Z"), "window" (its text, or null when the assets' start leaves
// nothing to run)}.
nlohmann::ordered_json fire_json(const Job& job, TimePoint fire);

namespace queue {

// One backfill: {"backfill", "window", "assets", "created", "canceled", "queued", "running",
// "succeeded", "failed", "canceled_tasks", "running_tasks"}, the last holding the tasks of
// `running` that belong to it, each {"asset", "partition", "worker", "seconds", "attempts"}.
nlohmann::ordered_json backfill_json(const BackfillStatus& status,
                                     const std::vector<RunningTask>& running);

}  // namespace queue
}  // namespace interloper
