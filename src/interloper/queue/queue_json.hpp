// A queued backfill's progress as JSON, one shape for `status --queue --json` and `serve`.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "interloper/queue/queue.hpp"

namespace interloper::queue {

// One backfill: {"backfill", "window", "assets", "created", "canceled", "queued", "running",
// "succeeded", "failed", "canceled_tasks", "running_tasks"}, the last holding the tasks of
// `running` that belong to it, each {"asset", "partition", "worker", "seconds", "attempts"}.
nlohmann::ordered_json backfill_json(const BackfillStatus& status,
                                     const std::vector<RunningTask>& running);

}  // namespace interloper::queue
