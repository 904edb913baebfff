// A queue of backfill tasks in PostgreSQL, drained by any number of worker processes.
//
// The database is the coordinator: a backfill's tasks, the edges between them and the leases of
// running tasks are rows, and row locks and transactions do the rest. A task is *ready* when it
// is queued and none of its upstream tasks is unfinished (a counter kept on the task, lowered in
// the transaction that completes each upstream). Workers claim ready tasks newest first with
// `FOR UPDATE SKIP LOCKED`, so two workers never claim the same task and never wait for each
// other; a claim is a lease, renewed while the task runs, and a lock on the task's asset and
// partition, so that overlapping backfills never run one partition at once. A lease that expires
// (its worker died) is taken back by any worker: the task is queued again, or failed once it has
// used up its attempts, and a failed task cancels everything downstream of it. Lease times come
// from the database's clock, so workers on several machines need no synchronized clocks.
//
// Each step of a task is one statement, prepared once per connection: a claim (with its lock),
// and a completion, failure or release (with the lock's end).
//
//   queue::Queue q("postgresql://db/ops?schema=interloper_queue");
//   std::int64_t id = q.enqueue(plan, {.pipeline = "shop", .pipeline_hash = h,
//                                      .request = make_request(plan, window, options)});
//   while (std::optional<queue::Queue::Claim> claim = q.claim("shop", owner, 30s)) {
//     if (!claim->locked()) { q.release(*claim); continue; }
//     ... run claim->task() ...
//     q.complete(*claim);   // or q.fail(*claim, error)
//   }
//
// The URL is a PostgreSQL URL; its `schema` parameter (default "interloper_queue") names the
// schema holding the tables, created on first use (and, in a queue created before requests were
// typed, the column holding them added). Every method is thread-safe (each borrows a
// connection from a pool, or uses the claim's, which one thread at a time may settle) and throws
// DestinationError naming the redacted URL when the server fails.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/locator.hpp"
#include "interloper/plan.hpp"
#include "interloper/queue/request.hpp"

namespace interloper::queue {

// What a backfill was planned from: enough for a worker to plan it again and check that it
// runs the same pipeline.
struct BackfillSpec {
  std::string pipeline;       // the pipeline's name, which workers select their tasks by
  std::string pipeline_hash;  // a hash of the pipeline's definition
  BackfillRequest request;    // the window, assets, options and plan fingerprint
};

struct BackfillInfo {
  std::int64_t id = 0;
  BackfillSpec spec;
  std::int64_t tasks = 0;
  bool canceled = false;
  std::string created;  // as the database prints it
};

// A task a worker holds the lease of.
struct ClaimedTask {
  std::int64_t backfill = 0;
  std::int64_t task = 0;  // its id in the backfill's plan
  std::string asset;
  std::string partition;  // the task's window as text
  int attempts = 0;       // this run included
  std::string pipeline_hash;
};

struct Counts {
  std::int64_t queued = 0, running = 0, succeeded = 0, failed = 0, canceled = 0;
  std::int64_t unfinished() const { return queued + running; }
  std::int64_t total() const { return queued + running + succeeded + failed + canceled; }
};

struct BackfillStatus {
  BackfillInfo info;
  Counts counts;
};

struct RunningTask {
  std::int64_t backfill = 0;
  std::string asset;
  std::string partition;
  std::string owner;
  int attempts = 0;
  double seconds = 0;     // how long this run has lasted, since its claim
  double lease_left = 0;  // seconds until its lease expires unless renewed (negative: expired)
};

// A task that failed for good (after its attempts), with the last error.
struct FailedTask {
  std::int64_t backfill = 0;
  std::string asset;
  std::string partition;
  int attempts = 0;
  std::string error;
};

class Queue {
 public:
  // Connects and creates the schema and tables when missing (safe when several processes start
  // at once). Throws DestinationError when the URL is bad or the server cannot be reached.
  explicit Queue(const Locator& url);
  explicit Queue(std::string_view url) : Queue(parse_locator(url)) {}
  ~Queue();
  Queue(const Queue&) = delete;
  Queue& operator=(const Queue&) = delete;

  // The URL with its password redacted.
  const std::string& display() const;

  // Writes the backfill (its request as a JSON document, and its window text and assets as a
  // queue of earlier versions kept them), every task of `plan` that runs (with its count of upstream tasks that
  // run) and the edges between them, in one transaction, by COPY. Returns the backfill's id.
  std::int64_t enqueue(const Plan& plan, const BackfillSpec& spec);
  // The backfill `id`, or nullopt when there is none.
  std::optional<BackfillInfo> backfill(std::int64_t id);
  // The pipeline hashes of `pipeline`'s backfills with unfinished tasks (not canceled).
  std::vector<std::string> active_hashes(std::string_view pipeline);

  class Claim;
  // Claims the newest ready task of `pipeline`'s backfills for `owner`, leased for `lease`,
  // counts the attempt, and tries to lock the task's (asset, partition), in one statement. A
  // task whose (asset, partition) a task of any backfill is running is not ready. nullopt when
  // none is ready.
  std::optional<Claim> claim(std::string_view pipeline, std::string_view owner,
                             std::chrono::seconds lease);
  // Moves the lease of every task `owner` runs to `lease` from now.
  void renew(std::string_view owner, std::chrono::seconds lease);
  // Records the task as succeeded and releases its downstream tasks, in one statement, and
  // frees its partition. Returns false (and changes nothing) when the claim's owner no longer
  // holds the lease.
  bool complete(Claim& claim);
  // Records a failed run: the task is queued again, or, once it has run max_attempts times,
  // failed with `error` and everything downstream canceled, in one statement; frees its
  // partition. Returns whether it failed for good; false also when the claim's owner no longer
  // holds the lease.
  bool fail(Claim& claim, std::string_view error);
  // Gives the task back without counting the attempt (a worker stopping, a worker of another
  // pipeline version, a partition another worker holds) and frees its partition.
  void release(Claim& claim);
  // The same for a task claimed by `owner` on another thread, whose claim that thread keeps
  // (a worker giving up its running tasks at once); the partition stays locked until the
  // claim ends.
  void release(const ClaimedTask& task, std::string_view owner);
  // Takes back the tasks whose lease expired: queued again, or failed (and their downstream
  // canceled) once out of attempts. Returns how many were taken back.
  std::size_t requeue_expired();

  // Unfinished (queued or running) tasks of `pipeline`'s backfills.
  std::int64_t unfinished(std::string_view pipeline);
  // Per backfill of `pipeline` (only `id` when given), oldest first.
  std::vector<BackfillStatus> status(std::string_view pipeline,
                                     std::optional<std::int64_t> id = std::nullopt);
  std::vector<RunningTask> running(std::string_view pipeline,
                                   std::optional<std::int64_t> id = std::nullopt);
  std::vector<FailedTask> failures(std::int64_t id, std::size_t limit);
  // Cancels the queued tasks of backfill `id` (running ones finish). Returns how many; throws
  // RunError when there is no such backfill.
  std::int64_t cancel(std::int64_t id);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A task claimed by one worker, and the lock on its (asset, partition) held against every other
// worker of any backfill: a session advisory lock on the connection the claim keeps, which the
// server frees should the worker die or its connection break. Settling the task (complete, fail,
// release) frees the lock; so does destroying the claim. Move-constructible; one thread at a
// time.
class Queue::Claim {
 public:
  struct Held;
  Claim(ClaimedTask task, bool locked, std::unique_ptr<Held> held);
  Claim(Claim&&) noexcept;
  Claim& operator=(Claim&&) = delete;
  ~Claim();

  const ClaimedTask& task() const { return task_; }
  // Whether this worker holds the task's partition. When it does not, another worker runs that
  // partition (claimed in the same instant, or running past its lease): give the task back.
  bool locked() const { return locked_; }

 private:
  friend class Queue;
  ClaimedTask task_;
  bool locked_ = false;
  std::unique_ptr<Held> held_;
};

}  // namespace interloper::queue
