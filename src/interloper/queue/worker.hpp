// A worker: threads that claim tasks from the queue and run each by the same path as a local
// backfill (the destination's window writer and its atomic replace, the store's record), so a
// task run twice leaves the same data; one more thread renews the leases.
//
// A worker plans each backfill once, from its stored request (request.hpp): never from
// command-line text.
//
//   queue::Queue q(parse_locator(url));
//   queue::Worker worker(dag, q, {.pipeline = "shop", .pipeline_hash = h, .lease = 30s});
//   if (std::optional<std::string> other = worker.other_version()) ...;  // exit 2
//   queue::Worker::Outcome out = worker.run(interrupts.stop(), [&] { return interrupts.signals(); });
//   std::cout << worker.summary() << "\n";
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "interloper/queue/queue.hpp"

namespace interloper::queue {

struct WorkerOptions {
  std::string pipeline;       // the name its backfills are filed under
  std::string pipeline_hash;  // the hash of the pipeline this worker runs
  std::chrono::seconds lease{30};
  int concurrency = 1;          // tasks run at once
  bool exit_when_idle = false;  // return once no task of the pipeline is queued or running
  RunOptions run;               // the store, logger and run id every task uses
  // Receives a line per attempt ("ok  asset  partition ..."); none when unset.
  std::function<void(const std::string&)> print;
};

// "host:pid:random", what a worker's leases are filed under.
std::string worker_owner();

class Worker {
 public:
  Worker(const DAG& dag, Queue& queue, WorkerOptions options);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  const std::string& owner() const;

  // The hash of a backfill of the pipeline with work left that was enqueued from another version
  // of it, or nullopt: such a worker must not run.
  std::optional<std::string> other_version();

  struct Outcome {
    std::string other_hash;  // non-empty: stopped at a task of another pipeline version
  };
  // Claims and runs tasks until `stop` is set (the running ones finish) or, with exit_when_idle,
  // until none is left. `signals` says how many stop signals arrived: from the second on, a task
  // that fails was killed, and is given back without spending its attempt.
  Outcome run(const std::atomic<bool>& stop, std::function<int()> signals);

  // Gives every running task back to the queue and exits the process with status 0: for a
  // second signal, when a task (a C++ asset) is still computing after its commands were killed.
  [[noreturn]] void give_up();

  // "worker OWNER: N tasks succeeded, M failed (K failed attempts retried)".
  std::string summary() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace interloper::queue
