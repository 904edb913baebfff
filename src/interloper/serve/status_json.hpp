// The JSON of an asset's shown status that the serve API's pages draw: ranges, buckets of a
// large window, one cell per partition, failures.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

#include "interloper/run/asset_status.hpp"

namespace interloper::serve {

using ordered_json = nlohmann::ordered_json;

// Windows larger than kMaxCells come in at most this many buckets.
inline constexpr std::size_t kBuckets = 1000;

ordered_json ranges_json(const std::vector<PartitionRange>& ranges);
// Counts of each state per bucket of consecutive partitions, from the ranges alone (stale ones
// count as materialized, and again as stale).
ordered_json buckets_json(const AssetStatus& shown);
// One cell per partition: key and state (materialized, stale, failed or missing).
ordered_json cells_json(const AssetStatus& shown);
ordered_json failure_json(const PartitionWindow& window, const FailedRange& f);
// The failure of the shown window that ended last, or null.
ordered_json last_failure_json(const AssetStatus& shown);

}  // namespace interloper::serve
