// What `interloper status` and `interloper serve` report about an asset: the window it is shown
// over (its default, or its own share of a window text) and its materialized, stale, failed and
// missing partitions there. One model, built from the store's ranges; the command line prints it
// as text or JSON, the server answers it as JSON and draws it as a page.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "interloper/dag.hpp"
#include "interloper/destination.hpp"
#include "interloper/store.hpp"

namespace interloper {

// Time assets without a start are shown over this many periods up to the current one by default.
inline constexpr std::size_t kStatusRecentPeriods = 30;

// An asset's own partitions covered by a window text: a time window of any granularity gives a
// time-partitioned asset its partitions overlapping the window's bounds, clamped to its start
// (a day window gives an hourly asset 24 hours, a monthly one its month); other windows are
// read by the partitioning (PartitionConfig::select_window). The one place the status model
// reads a window text. Throws
// std::invalid_argument or PartitionError naming the problem.
std::unique_ptr<PartitionWindow> window_share(const PartitionConfig& config,
                                              const std::string& window_text);

// What kind of window a text looks like: the granularity name of its first key, or "list".
std::string window_text_shape(const std::string& window_text);

// The window an asset is shown over: without `window_text`, its default at `now` (from its start,
// or the last kStatusRecentPeriods periods, to now for time; every value for a list); else its
// share of the text. When its partitioning does not take the text: nullptr, or with `strict`
// PartitionError "asset 'NAME': bad window 'TEXT': why". An asset with no default window throws
// PartitionError. `asset` must be partitioned.
std::unique_ptr<PartitionWindow> status_window(const Asset& asset, const std::string& window_text,
                                               TimePoint now, bool strict);

// What --verify finds among the materialized partitions: those the destination does not hold
// (never written there, or deleted since), and those whose stored data someone else overwrote or
// truncated since it was written.
struct VerifiedPartitions {
  std::vector<PartitionRange> gone;
  std::vector<PartitionCheck> changed;
};

// One asset's state over its window.
struct AssetStatus {
  const Asset* asset = nullptr;
  // Unpartitioned assets: one state (missing, stale, materialized or failed) and its error.
  std::string state;
  std::string error;
  // Partitioned assets: the window and the ranges of each state in it.
  std::unique_ptr<PartitionWindow> window;
  WindowStatus status;
  std::vector<PartitionRange> stale;  // materialized by an older definition
  std::vector<FailedRange> failures;  // the first `max_failures`
  bool more_failures = false;         // failures beyond those kept
  std::optional<VerifiedPartitions> verified;
};

struct StatusOptions {
  std::size_t max_failures = static_cast<std::size_t>(-1);
  // Ask the destination whether the materialized partitions are there as written.
  bool verify = false;
};

// The state of `asset` over `window` (nullptr for an unpartitioned asset). Throws what the store
// (and, with verify, the destination) throws.
AssetStatus asset_status(MaterializationStore& store, const DAG& dag, const Asset& asset,
                         std::unique_ptr<PartitionWindow> window, const StatusOptions& options);

// The states of `assets` (every asset of the DAG in order when empty; named assets are read
// strictly) over `window_text` as status_window gives each; an asset whose partitioning does not
// take the window is left out. Throws PartitionError when a window is given and no asset takes
// it, or a named asset does not.
std::vector<AssetStatus> status_report(MaterializationStore& store, const DAG& dag,
                                       const std::vector<const Asset*>& assets,
                                       const std::string& window_text, TimePoint now,
                                       const StatusOptions& options);

// "a..b" or "a" for each range, with the window's keys.
nlohmann::ordered_json status_ranges_json(const PartitionWindow& window,
                                          const std::vector<PartitionRange>& ranges);

// The status of one asset as `status --json` prints it and `serve` answers it:
// {"asset", "window" (null when unpartitioned), then "state" (and "error" when failed) for an
// unpartitioned asset, or "partitions", "materialized", "failed", "missing", "stale" (range
// texts), "failures" ({"partitions", "run_id", "finished", "error"}) and, verified, "gone" and
// "changed" ({"partition", "object", "reason"})}.
nlohmann::ordered_json status_json(const AssetStatus& status);

}  // namespace interloper
