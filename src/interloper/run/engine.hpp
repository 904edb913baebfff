// The engine behind the runners: the ready-queue scheduler (engine.cpp) and the execution
// and recording of one task (runner_task.cpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "interloper/destination.hpp"
#include "interloper/plan.hpp"
#include "interloper/run.hpp"
#include "interloper/run/store_batch.hpp"
#include "interloper/store.hpp"

namespace interloper::detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline constexpr const char* kInterrupted = "interrupted";

// The run's clock: options.clock, or the system's.
const Clock& clock_of(const RunOptions& options);

// How a task ended besides its Status: claimed by another run, or found done meanwhile.
enum class Unrun : std::uint8_t { no, claimed_elsewhere, done_meanwhile };

// Runs the tasks of a plan: a ready queue ordered newest first, fed by arithmetic on the plan.
// Per task it keeps a count of unfinished upstream tasks and a status: five bytes.
class Engine {
 public:
  Engine(const DAG& dag, const Plan& plan, const ExecuteOptions& options);

  PlanResult run();

  // One task on its own, outside the ready queue: what a queue worker runs.
  TaskResult run_one(std::size_t task);

 private:
  struct Ready {
    std::int64_t recency;
    std::size_t task;
    // The heap's top is the newest task; among equals, the first in plan order.
    friend bool operator<(const Ready& a, const Ready& b) {
      return a.recency != b.recency ? a.recency < b.recency : a.task > b.task;
    }
  };

  Event make_event(EventType type, std::string asset, const std::string& window) const;

  void publish(const Event& event) const;

  // The number of tasks of `step` in `range` that run.
  std::size_t running_in(std::size_t step, PartitionRange range) const;

  void prepare();

  void push(std::size_t task);

  void queued(std::size_t task) const;

  void work();

  // Requires mutex_.
  void report(const TaskResult& result);

  // Requires mutex_.
  void finish(std::size_t task, TaskResult outcome);

  bool stopping() const;

  // Requires mutex_. Cancels every task not started yet.
  void cancel_pending(const std::string& reason);

  // Requires mutex_. A task not run: another run holds it (it and its readers count as
  // claimed), or another run finished it meanwhile (skipped; its readers go on).
  void set_aside(std::size_t task, TaskResult outcome, Unrun unrun);

  template <typename F>
  void for_each_reader(std::size_t task, F&& f) const;

  // Requires mutex_. One upstream of each reader of `task` is done.
  void release_readers(std::size_t task);

  // Claims the task's (asset, partition) when claims are on, then executes it. Never throws.
  TaskResult claim_and_execute(std::size_t task, Unrun& unrun);
  // Claims `task` unless this run holds it already, together with the next ready tasks (one
  // store call); nullopt when this run holds it, else the claim in its way. Throws what fails.
  std::optional<Claim> claim_ahead(std::size_t task);
  // `task` is no longer claimed by this run (released, or about to be).
  void release_claim(std::size_t task);
  // Releases the claims of the tasks this run claimed ahead and did not run (end of a run).
  void release_unrun();
  // The store could not record `task`'s outcome: the task failed (see StoreBatch).
  void unrecorded(std::size_t task, const std::string& error);
  // Requires mutex_. Makes `outcome` a failure when its record failed before it finished.
  void check_recorded(std::size_t task, TaskResult& outcome);

  // Requires mutex_. Cancels one pending task.
  void cancel(std::size_t task, const std::string& reason);

  // Requires mutex_. Cancels every pending task reading `task`, transitively.
  void cancel_downstream(std::size_t task, const std::string& reason);

  // Computes, writes and records one task. Never throws.
  TaskResult execute(std::size_t task);
  // Computes the task's asset over `window` into its destination (replacing `write_window`
  // there), setting the rows written; throws what fails.
  void compute_and_write(std::size_t task, const Asset& asset,
                         const std::shared_ptr<const PartitionWindow>& window,
                         const PartitionWindow* write_window, TaskResult& result);
  // Records the task's outcome in the store; a failure to record fails the task.
  // Outcomes go into the run's batch when it has one (run()), else straight to the store.
  void record_outcome(std::size_t task, const Asset& asset,
                      const std::shared_ptr<const PartitionWindow>& write_window, TimePoint started,
                      TaskResult& result);

  // What `asset` running over `window` reads of `upstream_name`: the upstream's partitions
  // overlapping the window's bounds; an unpartitioned upstream, or any upstream of an
  // unpartitioned asset, is read whole.
  struct Reads {
    ExecutionContext::UpstreamReads reads;
    Destination* destination = nullptr;
  };
  Reads reads_of(const Asset& asset, const PartitionWindow* window,
                 std::string_view upstream_name) const;

  // Throws RunError ("upstream 'x': N of M partitions missing", one clause per upstream) when
  // the task's asset requires its upstreams and some partition it reads from storage is not
  // materialized in the store (missing, or failed at its last run). Upstream steps of the plan
  // are not asked: their tasks succeeded before this one, or were skipped as materialized.
  void check_upstreams(std::size_t task) const;
  // After a task materialized its partitions: marks stale, in the store, the materialized
  // partitions of every asset reading them that this run does not compute again.
  // A failure fails the task (its rows are written, but what reads them would look fresh).
  void mark_readers_stale(std::size_t task, TaskResult& result) const;

  // ExecutionContext::load: the rows reads_of() names.
  Table load(const Asset& asset, const PartitionWindow* window, const std::string& window_text,
             std::string_view upstream_name);

  const DAG& dag_;
  const Plan& plan_;
  const ExecuteOptions& options_;
  const Clock& clock_;
  std::string run_id_;
  std::string request_text_;
  std::string owner_;  // the claim owner; empty when claims are off
  Logger logger_;
  std::mutex log_mutex_;

  std::mutex mutex_;  // guards everything below
  std::condition_variable cv_;
  std::vector<std::uint32_t> waiting_;  // per task: upstream tasks not yet succeeded
  std::vector<Status> state_;           // per task
  std::vector<bool> root_;              // per task: no upstream task of the plan runs
  std::vector<Ready> ready_;            // a heap
  std::size_t remaining_ = 0;           // tasks to run not yet finished or canceled
  bool canceled_all_ = false;           // every pending task was canceled once
  PlanResult result_;
  std::vector<std::uint8_t> claimed_;  // per task: 1 when this run claimed it and has not released
  std::unordered_map<std::size_t, std::string> unrecorded_;  // records failed before finish()
  std::unique_ptr<StoreBatch> batch_;  // the run's store calls, grouped (run() only)
};

}  // namespace interloper::detail
