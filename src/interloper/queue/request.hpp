// A backfill request as a value: what `backfill --queue` asks for and what every worker plans the
// backfill from, stored in the queue as a JSON document. Workers never read command-line text:
// the request window is rebuilt from its granularity (or its partitioning) and its first and
// last key, planned, and checked against the shares and the plan fingerprint the request holds.
//
//   BackfillRequest request = make_request(plan, window, {.missing = true, .max_attempts = 3});
//   std::string stored = request.to_json();
//   BackfillRequest back = BackfillRequest::from_json(stored);   // back == request
//   Plan again = plan_request(dag, back);   // throws RunError when the pipeline plans otherwise
//
// A backfill enqueued before requests were typed holds its window as text and its assets by name
// (`legacy_window`); read_window() reads that text against the assets' partitioning, and such a
// backfill is planned and drained like any other.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/plan.hpp"

namespace interloper::queue {

// A window as a value: consecutive time periods (their granularity) or a run of another kind's
// partitions (the kind and the partitioning column, rebuilt by the partitioning of an asset of
// the request), from `first` to `last` key, both inclusive. Empty `first`: no window.
struct WindowValue {
  std::string granularity;  // "hour" ... "year" for time windows, else empty
  std::string kind;         // the kind of a window that is not time ("list"), else empty
  std::string column;       // with `kind`: the partitioning's column
  std::string first, last;
  std::size_t size = 0;  // partitions

  bool empty() const { return first.empty(); }
  bool is_time() const { return !granularity.empty(); }
  // "first..last", or the key alone for a window of one; "" for none.
  std::string to_string() const;
  bool operator==(const WindowValue&) const = default;
};

// The value of `window`; `column` names the partitioning column of a window that is not time.
WindowValue window_value(const PartitionWindow& window, std::string_view column);

// One selected asset and its share of the request window (empty for an unpartitioned asset).
struct AssetShare {
  std::string asset;
  WindowValue window;
  bool operator==(const AssetShare&) const = default;
};

struct RequestOptions {
  bool missing = false;  // enqueued with --missing (what was up to date is not in the queue)
  int max_attempts = 3;  // runs (and expired leases) before a task fails
  bool operator==(const RequestOptions&) const = default;
};

struct BackfillRequest {
  WindowValue window;              // the request window
  std::vector<AssetShare> assets;  // the selected assets in plan order, each with its share
  RequestOptions options;
  std::string plan;           // plan_fingerprint() of the plan enqueued
  std::string legacy_window;  // a backfill enqueued before requests were typed: its window text

  bool typed() const { return legacy_window.empty(); }
  // The window as shown ("2026-01-01..2026-01-31").
  std::string window_text() const;
  std::vector<std::string> asset_names() const;

  // {"version":1,"window":{...},"assets":[{"asset":..,"window":{...}}],"options":{...},"plan":..}
  std::string to_json() const;
  // Throws RunError naming what is malformed.
  static BackfillRequest from_json(std::string_view text);
  // A backfill stored before requests were typed: its window text and asset names.
  static BackfillRequest legacy(std::string window, const std::vector<std::string>& assets,
                                int max_attempts);
  bool operator==(const BackfillRequest&) const = default;
};

// The request of `plan`, planned task by task from `window`.
BackfillRequest make_request(const Plan& plan, const PartitionWindow& window,
                             RequestOptions options);

// What identifies a plan's tasks: each step's asset, share and first task id (skipped tasks
// aside: a worker plans without --missing and runs what the queue holds), as 16 hex digits.
std::string plan_fingerprint(const Plan& plan);

// The request window against the pipeline `dag`: a time window from its granularity and keys,
// another kind's from the partitioning of the request's first asset of that kind, a legacy
// request's text read by the partitioning of its first partitioned asset. The one place the
// queue turns stored keys into a window. Throws RunError naming the request and the problem.
std::unique_ptr<PartitionWindow> read_window(const DAG& dag, const BackfillRequest& request);

// The plan of `request` as a worker runs it (task by task, nothing skipped). A typed request's
// plan must have the fingerprint it was enqueued with: throws RunError naming the difference
// otherwise (the pipeline was changed in a way its hash does not see).
Plan plan_request(const DAG& dag, const BackfillRequest& request);

}  // namespace interloper::queue
