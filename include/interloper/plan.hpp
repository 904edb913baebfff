// interloper/plan.hpp — the plan of a run: tasks of (asset, window) and their dependencies.
//
// A request names a window in some granularity (or a single key, or nothing). It covers the
// half-open range of that window's bounds. Each selected asset's *share* is its own partitions
// overlapping that range, clamped to its start: a request for 2026-11-01..2026-11-30 gives an
// hourly asset 720 hours, a daily asset 30 days and a monthly asset the month 2026-11.
//
// plan() cuts the shares into *tasks*, each one (asset, window):
//
//   * TaskScope::per_partition (backfills): one task per partition of each share;
//   * TaskScope::per_asset (materialize --window, Runner::run): one task per asset covering its
//     whole share, which must then satisfy the asset's allow_window.
//
// A task depends on the tasks of its upstreams (in the plan) holding the partitions it reads,
// as the edge's PartitionMapping (mapping.hpp) says: a day depends on its 24 hours, a day on the
// month holding it, an ISO week on its seven days or on the two months it straddles. An
// unpartitioned task depends on every task of its upstreams, and every task of a downstream
// depends on an unpartitioned upstream. Between two list-partitioned assets (the same list, see
// DAG) a partition depends on the same partition. Upstreams that are not selected are not in
// the plan: their rows are read as stored.
//
// A dependency with an offset or window (DepMapping) reads upstream partitions outside the
// request: in a backfill (per_partition) the upstream's share grows to cover them, and an asset
// reading its own earlier partitions grows back to its start and runs oldest first, each
// partition after the ones it reads. Grown tasks the store records as up to date are skipped
// even without missing_only, so a first backfill comes out complete and later ones redo only
// what the request names. Per asset, a share reading its own earlier partitions must be one
// partition.
//
// Dependencies are never stored as edge lists. A plan holds, per selected asset, its share (a
// PartitionSpan), one mapping per edge and a few ranges; the tasks an edge connects are derived
// on demand by the mapping's arithmetic (for hours and days in constant time). A plan of 10^6
// tasks costs a few hundred bytes plus the skipped ranges.
//
//   il::PlanOptions options;
//   options.missing_only = true;  // skip what the store says is up to date
//   options.store = &store;
//   il::Plan p = il::plan(dag, &window, options);
//   for (const il::Plan::Step& step : p.steps())
//     std::cout << step.asset->name() << ": " << step.tasks << " tasks\n";
//   il::PlanResult result = il::execute(dag, p, {.concurrency = 4});
//
// A built Plan is immutable and safe to share between threads for reading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interloper/mapping.hpp"
#include "interloper/run.hpp"

namespace interloper {

enum class TaskScope : std::uint8_t {
  per_asset,      // one task per asset: its whole share
  per_partition,  // one task per partition of each share
};

struct PlanOptions {
  TaskScope scope = TaskScope::per_partition;
  // The assets to run (empty: every enabled asset). Disabled assets are never planned.
  std::vector<std::string> assets;
  // Skip a task when the store records its (asset, partition) as materialized and none of its
  // upstream tasks in the plan runs. A task that runs makes every task reading it run too, so
  // re-running one hour re-runs its day and month. Needs `store`.
  bool missing_only = false;
  PartitionStates* store = nullptr;  // not owned
};

class Plan {
 public:
  // One selected asset and its share of the request.
  struct Step {
    const Asset* asset = nullptr;
    // The asset's partitions in the plan (nullptr for an unpartitioned asset).
    std::shared_ptr<const PartitionWindow> share;
    // What an unpartitioned asset's context sees: the request window (nullptr: none).
    std::shared_ptr<const PartitionWindow> request;
    std::size_t first_task = 0;         // the id of its first task; ids are contiguous per step
    std::size_t tasks = 0;              // 1 per share (per_asset) or per partition (per_partition)
    std::vector<std::size_t> upstream;  // steps it reads, in plan order
    std::vector<std::size_t> downstream;  // steps reading it
    // Tasks (by index within the step, 0 = oldest) skipped as up to date, as sorted ranges.
    std::vector<PartitionRange> skipped;
  };

  TaskScope scope() const { return scope_; }
  // The steps, in the DAG's topological order.
  const std::vector<Step>& steps() const { return steps_; }
  // All tasks, skipped ones included.
  std::size_t size() const { return tasks_; }
  // Tasks skipped as up to date (missing_only).
  std::size_t skipped() const { return skipped_; }
  // Tasks that will run.
  std::size_t to_run() const { return tasks_ - skipped_; }
  // The request window (nullptr: none).
  const std::shared_ptr<const PartitionWindow>& request() const { return request_; }

  // The step a task id belongs to. Throws std::out_of_range past the end.
  std::size_t step_of(std::size_t task) const;
  // Whether the task runs (false: skipped as up to date).
  bool runs(std::size_t task) const;
  // The task's window: one partition (per_partition), the whole share (per_asset), or the
  // request window for an unpartitioned asset (nullptr when the request has none).
  std::shared_ptr<const PartitionWindow> window(std::size_t task) const;
  // The tasks of step `other` that task `task` depends on (when `other` is one of its step's
  // upstreams) or that depend on it (when `other` is a downstream), as indices within `other`.
  // nullopt when none overlaps. Constant time for fixed-length granularities. For its own step
  // (an asset reading its earlier partitions) these are the tasks it depends on.
  std::optional<PartitionRange> related(std::size_t task, std::size_t other) const;
  // The tasks of step `other` (one of the task's step's downstream steps, possibly its own)
  // that depend on task `task`; nullopt when none.
  std::optional<PartitionRange> readers(std::size_t task, std::size_t other) const;
  // Newest-first rank of a task: the start of its bounds in epoch seconds (the latest possible
  // value for tasks without time bounds).
  std::int64_t recency(std::size_t task) const;

  // Every asset of the DAG reading the step's asset (itself when it reads its own earlier
  // partitions), in or out of the plan: those a run of the step can make stale.
  const std::vector<const Asset*>& reading_assets(std::size_t step) const {
    return reading_[step];
  }
  // Whether the plan runs (does not skip) every partition of `window` in step `step`: false
  // when some lies outside its share or is skipped.
  bool computes(std::size_t step, const PartitionWindow& window) const;
  // The step of an asset in the plan, or nullopt.
  std::optional<std::size_t> step_of_asset(const Asset& asset) const;

  // The ranges (by index within the step) of its tasks that run, for printing.
  std::vector<PartitionRange> running(std::size_t step) const;

 private:
  friend Plan plan(const DAG& dag, const PartitionWindow* request, const PlanOptions& options);
  void find_reading_assets(const DAG& dag);
  std::optional<PartitionRange> related_index(std::size_t step, std::size_t index,
                                              std::size_t other, bool reads = true) const;
  bool all_skipped(std::size_t step, PartitionRange range) const;
  bool index_skipped(std::size_t step, std::size_t index) const;
  // Sets the step's share of the request and returns it as a span; throws PartitionError when
  // its asset cannot serve the request.
  static PartitionSpan share(Step& step, const PartitionWindow* request, bool per_partition);
  // Fills each step's upstream and downstream steps from its asset's dependencies, and the
  // mapping of each upstream edge.
  void link_steps();
  // Grows the shares of the upstreams that windows read outside the request (per_partition),
  // and numbers the tasks again.
  void grow_shares();
  // Marks the tasks whose partitions are materialized by the current definitions and read
  // nothing that runs as skipped: every such task (`all`), or only those grow_shares() added.
  void skip_up_to_date(PartitionStates& store, bool all);

  TaskScope scope_ = TaskScope::per_partition;
  std::shared_ptr<const PartitionWindow> request_;
  std::vector<Step> steps_;
  std::vector<PartitionSpan> spans_;  // per step: its share
  // Per step, its tasks inside the request's share (the rest were grown for what others read).
  std::vector<PartitionRange> requested_;
  std::vector<std::vector<const Asset*>> reading_;  // per step: reading_assets()
  // Per step, the mapping of each of its upstream edges, parallel to Step::upstream.
  std::vector<std::vector<PartitionMapping>> reads_;
  std::size_t tasks_ = 0;
  std::size_t skipped_ = 0;
};

// Plans `request` (nullptr: no window) over `dag`. Throws PartitionError listing, one per line
// ("asset 'NAME': reason"), every selected asset that cannot serve it: a window of another kind
// or list, a share entirely before the asset's start, or (per_asset) a share of several
// partitions without allow_window. Throws DagError for an unknown selected asset and RunError
// for missing_only without a store. Nothing runs.
Plan plan(const DAG& dag, const PartitionWindow* request, const PlanOptions& options = {});

// Runs the tasks of `plan` that are not skipped. Ready tasks (every upstream task done) start
// newest first (latest bounds first; ties in plan order), at most `concurrency` at a time. Each
// task computes its asset over its window, writes it to the asset's destination, and records
// the outcome in the store. A failed task cancels the tasks that depend on it, transitively, and
// nothing else (unless fail_fast). Failures of tasks are reported, not thrown; throws
// std::invalid_argument when concurrency < 1.
PlanResult execute(const DAG& dag, const Plan& plan, const ExecuteOptions& options = {});

// Runs one task of `plan` by the path execute() takes for each (compute, write through the
// destination's window writer, record in options.run.store), whatever the state of its
// upstream tasks: for a caller that schedules tasks itself, such as a queue worker. Claims,
// concurrency, fail_fast and on_task are not used. Failures are reported in the result, not
// thrown; throws std::out_of_range when `task` is not in the plan.
TaskResult execute_task(const DAG& dag, const Plan& plan, std::size_t task,
                        const ExecuteOptions& options = {});

}  // namespace interloper
