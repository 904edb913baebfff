// Which assets a command runs and over which window.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interloper/dag.hpp"
#include "interloper/partitioning.hpp"

namespace interloper::cli {

// Bad command-line input; the tool exits with status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

struct Selection {
  std::unique_ptr<PartitionWindow> window;  // nullptr: a run without a window
  std::vector<std::string> assets;          // in topological order
  // Assets left out when no --asset was given, with the reason.
  std::vector<std::pair<std::string, std::string>> left_out;
  // Unpartitioned assets not selected that read (directly or not) what a windowed run of the
  // selected assets writes: they keep their old rows until run without a window.
  std::vector<std::string> refresh_after;
  // Without --asset, assets of another kind that read the same window text their own way (a
  // list holding the value "2026" where time assets read the year 2026): each a selection of
  // its own, run after this one. Their left_out and refresh_after are empty.
  std::vector<Selection> also;
  // With `also`: how each kind read the window, for an info line ("each kind of asset reads
  // the window its own way: time assets as the year 2026 (events, yearly); list(region) assets
  // as the value 2026 (regions)"); empty otherwise.
  std::string readings;
};

// Short description of a partitioning: "day", "month", "list(region)", "none".
std::string describe_partitioning(const PartitionConfig* config);

// The window a command was given: a window text ("a..b"), one partition key (never split at
// "..", so a list value such as ".." or "a..b" can be named), a window already computed
// (--lookback), or none.
struct WindowArgument {
  std::string text;  // as given; for a computed window, its to_string() (for messages)
  bool single_key = false;
  std::optional<TimePartitionWindow> computed;

  static WindowArgument key(std::string key) { return {std::move(key), true, std::nullopt}; }
  static WindowArgument window(std::string text) { return {std::move(text), false, std::nullopt}; }
  static WindowArgument from(TimePartitionWindow window) {
    std::string text = window.to_string();
    return {std::move(text), false, std::move(window)};
  }
  bool empty() const { return text.empty() && !computed; }
};

// Picks the assets and reads the window with their partitioning (a text is read by each
// partitioning, PartitionConfig::read_window; a computed time window is taken by time partitionings
// as it is and refused by the others). With `explicit_assets`, those assets are validated strictly;
// otherwise every enabled asset whose partitioning accepts the window's kind and granularity is
// chosen (unpartitioned ones only without a window). With `need_window` (backfills, which run one
// partition at a time) the window is validated partition by partition rather than as one run.
// Throws UsageError naming the problem, and
// PartitionError (from validation) listing every asset that cannot serve the window.
Selection select(const DAG& dag, const WindowArgument& window,
                 const std::vector<std::string>& explicit_assets, bool need_window);

// What a line about a task shows as its partition: "-" for an unpartitioned asset (whose task
// sees the run's window but has no partition of it) or a task without a window.
std::string shown_partition(const DAG& dag, const std::string& asset, const std::string& window);

// Expands dbt-style selectors: "NAME" is the asset, "NAME+" adds every asset downstream of
// it, "+NAME" every asset upstream, "+NAME+" both, "*" every asset. Duplicates are dropped.
// Throws UsageError naming an unknown asset, or a "tag:" selector (assets have no tags).
std::vector<std::string> expand_selectors(const DAG& dag, const std::vector<std::string>& names);
// An asset's own partitions covered by a window text, as the status model reads it
// (window_share in run/asset_status.hpp): a time window of any granularity gives a
// time-partitioned asset its partitions overlapping the window's bounds, clamped to its start
// (a day window gives an hourly asset 24 hours, a monthly one its month); other windows are
// parsed by the partitioning. Throws std::invalid_argument or PartitionError naming the problem.
std::unique_ptr<PartitionWindow> own_window(const PartitionConfig& config,
                                            const std::string& window_text);
// The window `--lookback N --offset K --time-zone Z` covers now, for the granularity of the
// first selected (or enabled) time-partitioned asset. nullopt when nothing is left after
// clamping to its start. Throws UsageError when no such asset is selected or the arguments are
// out of range.
std::optional<TimePartitionWindow> lookback_window(const DAG& dag,
                                                   const std::vector<std::string>& explicit_assets,
                                                   long lookback, long offset,
                                                   const std::string& time_zone, TimePoint now);

}  // namespace interloper::cli
