// interloper/run.hpp — running a DAG over a window: runners, backfills and events. The
// materialization store they record into is in store.hpp.
//
// A run covers one request window (or none, for unpartitioned DAGs). Each selected asset runs
// over its own share of it: its partitions, in its own granularity, overlapping the window's
// bounds (plan.hpp). Before anything executes, every share is checked; a run that some asset
// cannot serve fails with one PartitionError listing every failing asset. Then assets execute
// upstreams first; an asset whose upstream failed is canceled.
//
//   il::ThreadedRunner runner(4);
//   il::RunResult result = runner.run(dag, il::TimePartition(2026y / 1 / 15));
//   if (!result.ok()) std::cerr << result.error_summary() << "\n";
//
//   il::BackfillOptions options;
//   options.concurrency = 4;
//   options.missing_only = true;     // needs options.run.store
//   il::BackfillResult done = il::backfill(dag, window, options);
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/asset.hpp"
#include "interloper/dag.hpp"
#include "interloper/store.hpp"
#include "interloper/time.hpp"

namespace interloper {

enum class Status : std::uint8_t { pending, running, succeeded, failed, canceled, skipped };
std::string_view status_name(Status status);

// ---------------------------------------------------------------------------------------
// Events

enum class EventType : std::uint8_t {
  run_started,
  run_completed,
  run_failed,
  asset_queued,
  asset_started,
  asset_completed,
  asset_failed,
  asset_canceled,
  destination_read,
  destination_write,
  log,
};
std::string_view event_type_name(EventType type);

struct Event {
  EventType type;
  TimePoint time;  // from the run's clock
  std::string run_id;
  std::string asset;      // empty for run events
  std::string window;     // the run's window as text ("" when none)
  std::int64_t rows = 0;  // rows written/read, where it applies
  double seconds = 0;     // duration, for completed/failed events
  std::string message;    // error text or log line
  // One JSON object on one line, e.g. {"type":"asset_completed","time":"…","run_id":…}.
  std::string to_json() const;
};

// Fans events out to subscribers. publish() may be called from several threads; each
// subscriber is called under a lock, one event at a time.
class EventBus {
 public:
  using Subscriber = std::function<void(const Event&)>;
  void subscribe(Subscriber subscriber);
  void publish(const Event& event) const;

 private:
  mutable std::mutex mutex_;
  std::vector<Subscriber> subscribers_;
};

// ---------------------------------------------------------------------------------------
// Runs

struct AssetResult {
  std::string asset;
  Status status = Status::pending;
  std::int64_t rows = 0;  // rows written
  double seconds = 0;
  std::string error;  // why it failed or was canceled
};

struct RunResult {
  std::string run_id;
  std::string window;  // "" for unpartitioned runs
  Status status = Status::pending;
  double seconds = 0;
  std::vector<AssetResult> assets;  // in topological order
  bool ok() const { return status == Status::succeeded; }
  // Throws RunError naming an asset that is not part of the run.
  const AssetResult& asset(std::string_view name) const;
  // One line per failed asset: "name: error".
  std::string error_summary() const;
};

struct RunOptions {
  // After the first failure, cancel assets that have not started (downstreams of a failed
  // asset are canceled in any case).
  bool fail_fast = false;
  std::vector<std::string> assets;        // run only these (empty: every enabled asset)
  EventBus* events = nullptr;             // not owned
  MaterializationStore* store = nullptr;  // not owned; records each asset's outcome
  const Clock* clock = nullptr;           // not owned; default: the system clock
  Logger logger;                          // receives the assets' log lines
  std::string run_id;                     // generated when empty
  // Not owned. Once it reads true, no further asset or task starts: those not started are
  // canceled with the reason "interrupted", and a running one that fails is recorded as failed
  // with the error "interrupted". Running ones are not stopped by it: whoever sets it stops
  // them (the CLI terminates the commands' process groups); C++ assets run to their end.
  const std::atomic<bool>* stop = nullptr;
};

// Throws one PartitionError listing every enabled (and selected) asset that cannot serve
// `window`, one "asset 'NAME': reason" per line.
void validate(const DAG& dag, const PartitionWindow* window, const RunOptions& options = {});

class Runner {
 public:
  virtual ~Runner() = default;
  // Validates (throws PartitionError before executing anything), then executes. Failures of
  // assets are reported in the result, not thrown.
  virtual RunResult run(const DAG& dag, const PartitionWindow* window,
                        const RunOptions& options) const = 0;
  RunResult run(const DAG& dag, const PartitionWindow& window,
                const RunOptions& options = {}) const {
    return run(dag, &window, options);
  }
  RunResult run(const DAG& dag, const Partition& partition, const RunOptions& options = {}) const;
  RunResult run(const DAG& dag, const RunOptions& options = {}) const {
    return run(dag, nullptr, options);
  }
};

// Executes one asset at a time, in topological order.
class SerialRunner final : public Runner {
 public:
  using Runner::run;
  RunResult run(const DAG& dag, const PartitionWindow* window,
                const RunOptions& options) const override;
};

// Executes independent assets concurrently on up to `max_workers` threads.
class ThreadedRunner final : public Runner {
 public:
  explicit ThreadedRunner(int max_workers = 4);  // throws std::invalid_argument when < 1
  using Runner::run;
  RunResult run(const DAG& dag, const PartitionWindow* window,
                const RunOptions& options) const override;

 private:
  int max_workers_;
};

// ---------------------------------------------------------------------------------------
// Tasks and backfills. A task is one asset over one window; plan.hpp says how a request
// becomes tasks.

// The outcome of one task.
struct TaskResult {
  std::string asset;
  std::string window;  // the task's window as text ("" when none)
  Status status = Status::pending;
  std::int64_t rows = 0;
  double seconds = 0;
  std::string error;  // why it failed or was canceled
};

struct TaskCounts {
  std::size_t succeeded = 0;
  std::size_t failed = 0;
  std::size_t canceled = 0;  // an upstream task failed, or fail_fast stopped the run
  std::size_t skipped = 0;   // up to date (missing_only), or finished meanwhile by another run
  std::size_t claimed = 0;   // another live run held the claim (and the tasks reading those)
};

struct ExecuteOptions {
  int concurrency = 1;     // tasks at once (>= 1)
  bool fail_fast = false;  // after the first failure, cancel every task not yet started
  // Events, store, clock, logger and run id (its `assets` and `fail_fast` are not used: the plan
  // holds the selection).
  RunOptions run;
  // With run.store, each task of a partitioned asset claims its (asset, partition) in the store
  // before it runs and releases it after, so that another run sharing the store does not run it
  // at the same time. A task whose claim another live run holds is not run and not waited for:
  // it, and the tasks reading it, count as `claimed`. Claims last `claim_lease` and are renewed
  // every third of it while the run goes on; the claims of a process that died lapse.
  bool claim = false;
  std::chrono::seconds claim_lease{60};
  std::string claim_owner;  // default: "HOST:PID:" and a run id
  // With claims: a task the store records as materialized once claimed (another run finished it
  // meanwhile) is skipped.
  bool missing_only = false;
  // Called once for every task that finished, was canceled or was claimed elsewhere, one call at
  // a time, from the threads that run the tasks. Skipped tasks are only counted.
  std::function<void(const TaskResult&)> on_task;
};

// A run of a plan keeps counters and the failed tasks, never one result per task.
struct PlanResult {
  std::string run_id;
  TaskCounts tasks;
  std::vector<TaskResult> failures;  // failed tasks, in the order they finished
  std::vector<TaskResult> claimed;   // tasks another run held (not those reading them)
  double seconds = 0;
  std::size_t succeeded() const { return tasks.succeeded; }
  std::size_t failed() const { return tasks.failed; }
  bool ok() const { return tasks.failed == 0 && tasks.canceled == 0; }
};

// A backfill: one task per (asset, partition) of a window, newest first.
struct BackfillOptions {
  int concurrency = 1;        // tasks run at once (>= 1)
  bool fail_fast = false;     // after the first failed task, cancel every task not yet started
  bool missing_only = false;  // skip (asset, partition) tasks the store records as materialized
                              // whose upstream tasks are all skipped too (requires run.store)
  RunOptions run;             // events, store, clock, logger, run id and the asset selection
  // With run.store, each task claims its (asset, partition) in the store before it runs (see
  // ExecuteOptions::claim).
  bool claim = true;
  std::chrono::seconds claim_lease{60};
  std::string claim_owner;  // default: "HOST:PID:" and a run id
  // Called once, before any task runs, with the number of tasks that will run and the number
  // skipped as up to date (progress displays size themselves by it).
  std::function<void(std::size_t planned, std::size_t skipped)> on_plan;
  // Called for every task that finished or was canceled (see ExecuteOptions::on_task).
  std::function<void(const TaskResult&)> on_task;
};

using BackfillResult = PlanResult;

// Plans `window` with TaskScope::per_partition over the selected assets (every asset gets its
// own partitions overlapping the window's bounds, see plan.hpp), throwing PartitionError listing
// every asset that cannot serve it before anything runs; then executes the plan with
// `concurrency` tasks at a time. allow_window is not required: each task covers one partition.
BackfillResult backfill(const DAG& dag, const PartitionWindow& window,
                        const BackfillOptions& options = {});

}  // namespace interloper
