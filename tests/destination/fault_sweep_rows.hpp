// The window both storage fault sweeps write again and again: two days of an orders dataset,
// rows numbered so that old and new rows (and a mix of them) are told apart.
#pragma once

#include <algorithm>
#include <vector>

#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"

namespace interloper::testing {

inline const TimePartitionConfig& sweep_daily() {
  static const TimePartitionConfig config{
      "day", {.granularity = TimeGranularity::DAY, .allow_window = true}};
  return config;
}
inline const DatasetRef kSweepOrders{"shop", "orders", &sweep_daily()};
inline const TimePartitionWindow kSweepWindow(day(2026, 1, 1), day(2026, 1, 2));

// Rows with ids first..first+n-1 in day 1 and first+100.. in day 2; `extra` adds a column the
// stored schema lacks and makes `v` a double where it was an int (a schema change).
inline Table sweep_rows(int first, int n, bool extra = false) {
  Table t;
  for (unsigned d = 1; d <= 2; ++d) {
    for (int i = 0; i < n; ++i) {
      const int id = first + static_cast<int>(d - 1) * 100 + i;
      if (extra) {
        t.append({{"day", day(2026, 1, d)}, {"id", id}, {"v", id * 0.5}, {"extra", "x"}});
      } else {
        t.append({{"day", day(2026, 1, d)}, {"id", id}, {"v", id}});
      }
    }
  }
  return t;
}

// The ids day `d` (1 or 2) of the window holds, sorted.
inline std::vector<long long> sweep_ids(Destination& destination, unsigned d) {
  const TimePartitionWindow one(day(2026, 1, d), day(2026, 1, d));
  const Table rows = destination.read(kSweepOrders, &one);
  std::vector<long long> ids;
  for (const Value& v : rows.column("id")) ids.push_back(v.as_int());
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace interloper::testing
