// The distributed commands: `backfill --queue` (enqueue, optionally --wait), `worker`,
// `status --queue` and `cancel`, over the PostgreSQL task queue (queue/queue.hpp); they parse
// options and call the queue layer, which plans, stores and runs the backfills.
#pragma once

#include <cstdint>
#include <string>

#include "interloper/cli/selection.hpp"
#include "interloper/dag.hpp"
#include "interloper/pipeline.hpp"
#include "interloper/plan.hpp"
#include "interloper/run.hpp"

namespace interloper::queue {
class Queue;
}

namespace interloper::cli {

struct QueueArgs {
  std::string url;            // --queue
  bool wait = false;          // backfill --wait
  int max_attempts = 3;       // backfill --max-attempts
  std::string lease = "30s";  // worker --lease
  int concurrency = 1;        // worker --concurrency
  bool exit_when_idle = false;
  std::int64_t backfill = 0;  // status --backfill, cancel ID (0: none)
};

// What the queue commands work on.
struct QueueProject {
  const DAG* dag = nullptr;
  const Pipeline* pipeline = nullptr;  // nullptr for code-defined DAGs
  std::string name;                    // what backfills are filed under (the file's stem)
  bool json = false;
  bool quiet = false;
};

// The hash workers compare with the backfill's: of the catalog (every asset's definition,
// command and SQL included) for a YAML pipeline, of names, dependencies and partitionings for a
// DAG built in code.
std::string pipeline_hash(const DAG& dag, const Pipeline* pipeline);

// Plans `selection` as a backfill (skipping what `store` records as done when `missing`),
// enqueues it and prints its id; with --wait follows it to the end. Returns the exit code.
int queue_backfill(const QueueProject& project, const Selection& selection, bool missing,
                   MaterializationStore* store, const QueueArgs& args);
// Claims and runs tasks until stopped (or, with exit_when_idle, until none is left). `run`
// carries the store and logger every task records into and logs to.
int queue_worker(const QueueProject& project, const RunOptions& run, const QueueArgs& args);
int queue_status(const QueueProject& project, const QueueArgs& args);
int queue_cancel(const QueueArgs& args, bool quiet);

// What the queue commands share: exit codes, the plan of a backfill, and following one.
namespace queue_detail {

constexpr int kOk = 0;
constexpr int kRunFailed = 1;
constexpr int kBadInput = 2;

// `window` planned task by task over `assets` (all when empty); with `missing`, what `store`
// records as up to date is skipped.
Plan plan_backfill(const DAG& dag, const PartitionWindow& window,
                   const std::vector<std::string>& assets, bool missing,
                   MaterializationStore* store);
// Prints a progress line unless --quiet or --json.
void print_line(const QueueProject& project, const std::string& line);
// Follows backfill `id` until none of its tasks is queued or running; the exit code of a local
// backfill with its outcome.
int wait_for(const QueueProject& project, queue::Queue& q, std::int64_t id);

}  // namespace queue_detail

}  // namespace interloper::cli
