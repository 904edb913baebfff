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

}  // namespace interloper
