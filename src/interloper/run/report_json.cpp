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

nlohmann::ordered_json run_json(const RunRecord& run) {
  using json = nlohmann::ordered_json;
  return json{{"run_id", run.run_id},
              {"pipeline", run.pipeline},
              {"command_line", run.command_line},
              {"window", run.window.empty() ? json(nullptr) : json(run.window)},
              {"started", run.started.to_string()},
              {"finished", run.finished.to_string()},
              {"status", run_state_name(run.state)},
              {"partitions", run.partitions},
              {"succeeded", run.succeeded},
              {"failed", run.failed},
              {"canceled", run.canceled},
              {"skipped", run.skipped},
              {"seconds", (run.finished.seconds() - run.started.seconds()).count()}};
}

}  // namespace interloper
