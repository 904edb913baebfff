#include "interloper/queue/queue_json.hpp"

namespace interloper::queue {

nlohmann::ordered_json backfill_json(const BackfillStatus& status,
                                     const std::vector<RunningTask>& running) {
  using json = nlohmann::ordered_json;
  const Counts& c = status.counts;
  json tasks = json::array();
  for (const RunningTask& t : running) {
    if (t.backfill != status.info.id) continue;
    tasks.push_back({{"asset", t.asset},
                     {"partition", t.partition},
                     {"worker", t.owner},
                     {"seconds", t.seconds},
                     {"lease_seconds_left", t.lease_left},
                     {"attempts", t.attempts}});
  }
  const BackfillRequest& request = status.info.spec.request;
  return json{{"backfill", status.info.id},
              {"window", request.window_text()},
              {"assets", request.asset_names()},
              {"created", status.info.created},
              {"canceled", status.info.canceled},
              {"queued", c.queued},
              {"running", c.running},
              {"succeeded", c.succeeded},
              {"failed", c.failed},
              {"canceled_tasks", c.canceled},
              {"running_tasks", tasks}};
}

}  // namespace interloper::queue
