#include "interloper/run/report_json.hpp"

namespace interloper {

nlohmann::ordered_json fire_json(const Job& job, TimePoint fire) {
  using json = nlohmann::ordered_json;
  const std::optional<TimePartitionWindow> window = job.window(fire);
  return json{{"job", job.name},
              {"fire", to_local_text(fire, job.time_zone)},
              {"fire_utc", fire.to_string() + "Z"},
              {"window", window ? json(window->to_string()) : json(nullptr)}};
}

namespace queue {

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
  return json{{"backfill", status.info.id},
              {"window", status.info.spec.window},
              {"assets", status.info.spec.assets},
              {"created", status.info.created},
              {"canceled", status.info.canceled},
              {"queued", c.queued},
              {"running", c.running},
              {"succeeded", c.succeeded},
              {"failed", c.failed},
              {"canceled_tasks", c.canceled},
              {"running_tasks", tasks}};
}

}  // namespace queue
}  // namespace interloper
