// The JSON of an asset's shown status (status_json.hpp).
#include "interloper/serve/status_json.hpp"

#include <algorithm>
#include <array>

namespace interloper::serve {

using json = nlohmann::ordered_json;

ordered_json ranges_json(const std::vector<PartitionRange>& ranges) {
  json out = json::array();
  for (const PartitionRange& r : ranges) out.push_back({r.first, r.last});
  return out;
}

// Counts of each state per bucket of consecutive partitions, from the ranges alone (stale ones
// count as materialized, and again as stale).
ordered_json buckets_json(const AssetStatus& shown) {
  const PartitionWindow& window = *shown.window;
  const WindowStatus& status = shown.status;
  const std::size_t n = window.size();
  const std::size_t width = (n + kBuckets - 1) / kBuckets;
  const std::size_t count = (n + width - 1) / width;
  std::vector<std::array<std::size_t, 4>> counts(count, {0, 0, 0, 0});
  auto add = [&](const std::vector<PartitionRange>& ranges, std::size_t state) {
    for (const PartitionRange& r : ranges) {
      for (std::size_t b = r.first / width; b <= r.last / width; ++b) {
        const std::size_t lo = std::max(r.first, b * width);
        const std::size_t hi = std::min(r.last, b * width + width - 1);
        counts[b][state] += hi - lo + 1;
      }
    }
  };
  add(status.materialized, 0);
  add(status.failed, 1);
  add(status.missing, 2);
  add(shown.stale, 3);
  json out = json::array();
  for (std::size_t b = 0; b < count; ++b) {
    const std::size_t last = std::min(n - 1, b * width + width - 1);
    out.push_back({{"first", window.partition_at(b * width)->key()},
                   {"last", window.partition_at(last)->key()},
                   {"materialized", counts[b][0]},
                   {"failed", counts[b][1]},
                   {"missing", counts[b][2]},
                   {"stale", counts[b][3]}});
  }
  return out;
}

// One cell per partition: key and state (materialized, stale, failed or missing).
ordered_json cells_json(const AssetStatus& shown) {
  const PartitionWindow& window = *shown.window;
  std::vector<const char*> state(window.size(), "missing");
  auto mark = [&](const std::vector<PartitionRange>& ranges, const char* name) {
    for (const auto& r : ranges)
      std::fill(state.begin() + r.first, state.begin() + r.last + 1, name);
  };
  mark(shown.status.materialized, "materialized");
  mark(shown.stale, "stale");
  mark(shown.status.failed, "failed");
  json out = json::array();
  const std::vector<std::string> keys = window.keys();
  for (std::size_t i = 0; i < keys.size(); ++i)
    out.push_back({{"key", keys[i]}, {"state", state[i]}});
  return out;
}

ordered_json failure_json(const PartitionWindow& window, const FailedRange& f) {
  const std::string first = window.partition_at(f.range.first)->key();
  return {{"partitions", f.range.first == f.range.last
                             ? first
                             : first + ".." + window.partition_at(f.range.last)->key()},
          {"run_id", f.record.run_id},
          {"finished", f.record.finished.to_string()},
          {"error", f.record.error}};
}

// The failure of the shown window that ended last, or null. The store keeps no time for
// materialized partitions, only for failed ones.
ordered_json last_failure_json(const AssetStatus& shown) {
  const auto last = std::max_element(shown.failures.begin(), shown.failures.end(),
                                     [](const FailedRange& a, const FailedRange& b) {
                                       return a.record.finished < b.record.finished;
                                     });
  return last == shown.failures.end() ? json(nullptr) : failure_json(*shown.window, *last);
}


}  // namespace interloper::serve
