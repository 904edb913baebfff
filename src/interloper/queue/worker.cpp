// The worker: claim, run under the partition's lock, settle; and the heartbeat renewing leases.
#include "interloper/queue/worker.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

#include "interloper/store.hpp"

namespace interloper::queue {

namespace {

// Tries, a second apart, to record a task's outcome before giving up on it (its lease then
// lapses once the worker exits, and it runs again).
constexpr int kSettleAttempts = 60;

}  // namespace

std::string worker_owner() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device device;
  return fmt::format("{}:{}:{:06x}", host, ::getpid(), device() & 0xffffffu);
}

struct Worker::State {
  State(const DAG& d, Queue& q, WorkerOptions o)
      : dag(d), queue(q), options(std::move(o)), owner(worker_owner()) {}

  const DAG& dag;
  Queue& queue;
  const WorkerOptions options;
  const std::string owner;
  const std::atomic<bool>* stop = nullptr;
  std::function<int()> signals;

  std::mutex mutex;  // the heartbeat's
  std::condition_variable wake;
  bool done = false;
  std::mutex output;
  std::mutex plans_mutex;
  std::map<std::int64_t, std::shared_ptr<const Plan>> plans;
  std::string other_hash;
  std::atomic<bool> mismatched{false};
  std::atomic<std::size_t> succeeded{0}, failed{0}, retried{0};
  std::mutex running_mutex;
  std::map<std::pair<std::int64_t, std::int64_t>, ClaimedTask> running;

  bool stop_requested() const { return stop != nullptr && stop->load(); }
  bool stopping_now() const { return signals && signals() > 1; }

  void print(const std::string& line) {
    if (!options.print) return;
    std::lock_guard lock(output);
    options.print(line);
  }

  void warn(const std::string& line) {
    std::lock_guard lock(output);
    std::cerr << line << "\n";
  }

  void heartbeat() {
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, options.lease / 3, [this] { return done; })) {
      try {
        queue.renew(owner, options.lease);
      } catch (const std::exception&) {
        // A missed beat; the next one tries again well before the lease runs out.
      }
    }
  }

  // Waits up to `pause`, returning early when a signal arrives.
  void pause(std::chrono::milliseconds pause) const {
    const auto until = std::chrono::steady_clock::now() + pause;
    while (!stop_requested() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  void work() {
    while (!stop_requested() && !mismatched.load()) {
      try {
        std::optional<Queue::Claim> claim = queue.claim(options.pipeline, owner, options.lease);
        if (claim) {
          run_task(*claim);
          continue;
        }
        if (queue.requeue_expired() > 0) continue;
        if (options.exit_when_idle && queue.unfinished(options.pipeline) == 0) return;
        pause(std::chrono::milliseconds(200));
      } catch (const std::exception& e) {
        // The database went away or refused: say so and try again, as a worker must outlive
        // a database restart.
        warn(std::string("worker: ") + e.what());
        pause(std::chrono::milliseconds(1000));
      }
    }
  }

  // The backfill's plan, planned once per worker from its stored request.
  std::shared_ptr<const Plan> plan_of(std::int64_t backfill) {
    std::lock_guard lock(plans_mutex);
    auto it = plans.find(backfill);
    if (it != plans.end()) return it->second;
    std::optional<BackfillInfo> info = queue.backfill(backfill);
    if (!info) throw RunError(fmt::format("queue: backfill {} vanished", backfill));
    auto planned = std::make_shared<const Plan>(plan_request(dag, info->spec.request));
    plans.emplace(backfill, planned);
    return planned;
  }

  void run_task(Queue::Claim& claim) {
    const ClaimedTask& task = claim.task();
    if (task.pipeline_hash != options.pipeline_hash) {
      queue.release(claim);
      std::lock_guard lock(plans_mutex);
      other_hash = task.pipeline_hash;
      mismatched = true;
      return;
    }
    {
      std::lock_guard lock(running_mutex);
      running.emplace(std::pair(task.backfill, task.task), task);
    }
    std::optional<TaskResult> result;
    try {
      result = execute_locked(claim);
    } catch (...) {
      forget(task);
      throw;
    }
    forget(task);
    if (result && result->status != Status::succeeded && stopping_now()) {
      // Killed by the second signal: not the task's failure, so no attempt is spent on it.
      queue.release(claim);
      print(fmt::format("released  {}  {}  (backfill {}): stopped by a signal", task.asset,
                        task.partition, task.backfill));
      return;
    }
    if (!result) {
      // Another backfill's task writes this partition (claimed in the instant before this
      // one, or still running past its lease): give the task back until that run is done.
      queue.release(claim);
      pause(std::chrono::milliseconds(100));
      return;
    }
    // The data is written: keep trying to record that, so that a database restart does not
    // leave the task leased (and renewed by the heartbeat) for as long as this worker lives.
    for (int attempt = 1;; ++attempt) {
      try {
        settle(claim, *result);
        return;
      } catch (const std::exception& e) {
        if (attempt == kSettleAttempts) throw;
        warn(fmt::format("worker: recording {} {} failed, retrying: {}", task.asset,
                         task.partition, e.what()));
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    }
  }

  void forget(const ClaimedTask& task) {
    std::lock_guard lock(running_mutex);
    running.erase(std::pair(task.backfill, task.task));
  }

  // Runs the task while its claim holds its (asset, partition) against every other worker,
  // whatever the backfill, so that overlapping backfills never write one partition at once.
  // nullopt when another worker holds it. The lock ends when the task is settled, after the
  // write and the store's record.
  std::optional<TaskResult> execute_locked(const Queue::Claim& claim) {
    if (!claim.locked()) return std::nullopt;
    const ClaimedTask& task = claim.task();
    std::shared_ptr<const Plan> planned = plan_of(task.backfill);
    const auto id = static_cast<std::size_t>(task.task);
    ExecuteOptions execute;
    execute.run = options.run;
    if (id >= planned->size() ||
        planned->steps()[planned->step_of(id)].asset->name() != task.asset) {
      // The plan was checked against the request's fingerprint; a task outside it is a queue
      // written by hand or by a build that numbered tasks otherwise.
      TaskResult wrong;
      wrong.asset = task.asset;
      wrong.window = task.partition;
      wrong.status = Status::failed;
      wrong.error = fmt::format("the queue's task {} ({} {}) is not in the backfill's plan",
                                task.task, task.asset, task.partition);
      return wrong;
    }
    return execute_task(dag, *planned, id, execute);
  }

  // What a line about a task shows as its partition: "-" for an unpartitioned asset.
  std::string shown(const ClaimedTask& task) const {
    const Asset* asset = dag.find(task.asset);
    if (task.partition.empty() || (asset != nullptr && asset->partitioning() == nullptr)) {
      return "-";
    }
    return task.partition;
  }

  void settle(Queue::Claim& claim, const TaskResult& result) {
    const ClaimedTask& task = claim.task();
    std::string line;
    if (result.status == Status::succeeded) {
      const bool held = queue.complete(claim);
      if (held) ++succeeded;
      line = fmt::format("ok        {}  {}  {} rows  {:.3f}s  (backfill {}, attempt {}){}",
                         task.asset, shown(task), result.rows, result.seconds, task.backfill,
                         task.attempts, held ? "" : "  lease lost: the task runs again");
    } else {
      const bool final = queue.fail(claim, bound_error(result.error));
      ++(final ? failed : retried);
      line = fmt::format("{}  {}  {}  (backfill {}, attempt {}): {}",
                         final ? "FAILED   " : "retrying ", task.asset, shown(task), task.backfill,
                         task.attempts, result.error);
    }
    print(line);
  }
};

Worker::Worker(const DAG& dag, Queue& queue, WorkerOptions options)
    : state_(std::make_unique<State>(dag, queue, std::move(options))) {
  if (state_->options.concurrency < 1) {
    throw RunError(
        fmt::format("a worker runs at least 1 task at once, not {}", state_->options.concurrency));
  }
}

Worker::~Worker() = default;

const std::string& Worker::owner() const { return state_->owner; }

std::optional<std::string> Worker::other_version() {
  for (const std::string& other : state_->queue.active_hashes(state_->options.pipeline)) {
    if (other != state_->options.pipeline_hash) return other;
  }
  return std::nullopt;
}

Worker::Outcome Worker::run(const std::atomic<bool>& stop, std::function<int()> signals) {
  State& s = *state_;
  s.stop = &stop;
  s.signals = std::move(signals);
  std::thread beat([&s] { s.heartbeat(); });
  std::vector<std::thread> threads;
  for (int i = 0; i < s.options.concurrency; ++i) threads.emplace_back([&s] { s.work(); });
  for (std::thread& t : threads) t.join();
  {
    std::lock_guard lock(s.mutex);
    s.done = true;
  }
  s.wake.notify_all();
  beat.join();
  std::lock_guard lock(s.plans_mutex);
  return Outcome{s.other_hash};
}

void Worker::give_up() {
  State& s = *state_;
  std::lock_guard lock(s.running_mutex);
  for (const auto& [id, task] : s.running) {
    try {
      s.queue.release(task, s.owner);
    } catch (const std::exception&) {
      // Its lease expires instead.
    }
  }
  std::cerr << fmt::format("worker {}: stopped by a second signal; {} running tasks given back\n",
                           s.owner, s.running.size());
  std::fflush(nullptr);
  std::_Exit(0);
}

// Tasks, as the queue counts them: a task succeeded or failed for good here, whatever its
// attempts; a failed attempt the queue runs again is a retry, not a failure.
std::string Worker::summary() const {
  const State& s = *state_;
  const std::size_t succeeded = s.succeeded.load(), failed = s.failed.load();
  const std::size_t retried = s.retried.load();
  return fmt::format("worker {}: {} task{} succeeded, {} failed{}{}", s.owner, succeeded,
                     succeeded == 1 ? "" : "s", failed,
                     retried == 0 ? ""
                                  : fmt::format(" ({} failed attempt{} retried)", retried,
                                                retried == 1 ? "" : "s"),
                     s.stop_requested() ? " (stopped by a signal)" : "");
}

}  // namespace interloper::queue
