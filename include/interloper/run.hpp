// interloper/run.hpp — running a DAG over a window: runners, backfills and events. The
// materialization store they record into is in store.hpp.
//
// A run covers one window (or none, for unpartitioned DAGs). Before anything executes, every
// enabled asset's partitioning checks the window; a run that some asset cannot serve fails
// with one PartitionError listing every failing asset. Then assets execute in topological
// order; an asset whose upstream failed is canceled.
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
  run_started, run_completed, run_failed,
  asset_queued, asset_started, asset_completed, asset_failed, asset_canceled,
  destination_read, destination_write, log,
};
std::string_view event_type_name(EventType type);

struct Event {
  EventType type;
  TimePoint time;          // from the run's clock
  std::string run_id;
  std::string asset;       // empty for run events
  std::string window;      // the run's window as text ("" when none)
  std::int64_t rows = 0;   // rows written/read, where it applies
  double seconds = 0;      // duration, for completed/failed events
  std::string message;     // error text or log line
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
  std::int64_t rows = 0;      // rows written
  double seconds = 0;
  std::string error;          // why it failed or was canceled
};

struct RunResult {
  std::string run_id;
  std::string window;         // "" for unpartitioned runs
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
  std::vector<std::string> assets;       // run only these (empty: every enabled asset)
  EventBus* events = nullptr;            // not owned
  MaterializationStore* store = nullptr; // not owned; records each asset's outcome
  const Clock* clock = nullptr;          // not owned; default: the system clock
  Logger logger;                         // receives the assets' log lines
  std::string run_id;                    // generated when empty
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
  RunResult run(const DAG& dag, const PartitionWindow& window, const RunOptions& options = {}) const {
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
// Backfills: one run per partition, newest first.

struct BackfillOptions {
  int concurrency = 1;        // partitions run at once (>= 1)
  bool fail_fast = false;     // stop starting partitions after the first failed run
  bool missing_only = false;  // skip partitions the store says are materialized for every
                              // selected asset (requires run.store)
  RunOptions run;             // applied to every partition run
  // With run.store, each partition is claimed in the store before it runs, for every selected,
  // enabled, partitioned asset, so that another backfill sharing the store does not run it at
  // the same time. A partition that another live run holds is skipped, not waited for, and
  // listed in BackfillResult::claimed. Claims last `claim_lease` and are renewed every third
  // of it while the backfill goes on; the claims of a process that died lapse within a lease.
  bool claim = true;
  std::chrono::seconds claim_lease{60};
  std::string claim_owner;    // default: "HOST:PID:" and a run id
  // Called once, before any partition runs, with the number of partitions that will run and
  // the number skipped as already materialized (progress displays size themselves by it).
  std::function<void(std::size_t planned, std::size_t skipped)> on_plan;
};

struct BackfillResult {
  std::vector<RunResult> runs;      // one per partition that ran, newest first
  std::vector<std::string> skipped; // keys skipped as already materialized or after fail_fast
  std::vector<std::string> claimed; // keys skipped because another run held their claim
  std::size_t succeeded() const;
  std::size_t failed() const;
  bool ok() const { return failed() == 0; }
};

// Validates the whole window once (PartitionError listing every failing asset before anything
// runs; allow_window is not required since each run covers one partition), then runs each of
// its partitions as its own run with a SerialRunner, `concurrency` partitions at a time.
BackfillResult backfill(const DAG& dag, const PartitionWindow& window,
                        const BackfillOptions& options = {});

}  // namespace interloper
