// `interloper worker`: claims tasks from the queue and runs each by the same path as a local
// backfill (the destination's window writer and its atomic replace, the store's record), so a
// task run twice leaves the same data.
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <utility>

#include "interloper/cli/interrupt.hpp"
#include "interloper/cli/queue_commands.hpp"
#include "interloper/plan.hpp"
#include "interloper/run/queue.hpp"
#include "interloper/run/report_json.hpp"

namespace interloper::cli {

namespace {

using queue_detail::kBadInput;
using queue_detail::kOk;
using queue_detail::kRunFailed;
using queue_detail::plan_backfill;
using queue_detail::print_line;
using queue_detail::wait_for;

// Tries, a second apart, to record a task's outcome before giving up on it (its lease then
// lapses once the worker exits, and it runs again).
constexpr int kSettleAttempts = 60;

std::chrono::seconds parse_lease(const std::string& text) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  long factor = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (used == 0 || factor == 0 || value < 3) {
    throw UsageError(fmt::format(
        "--lease '{}': expected a duration of at least 3 seconds such as 30s, 2m or 1h", text));
  }
  return std::chrono::seconds(value * factor);
}

std::string worker_owner() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device device;
  return fmt::format("{}:{}:{:06x}", host, ::getpid(), device() & 0xffffffu);
}

// One worker process: its threads claim, run and settle tasks; one more renews the leases.
class Worker {
 public:
  Worker(const QueueProject& project, const RunOptions& run, const QueueArgs& args)
      : project_(project),
        run_(run),
        args_(args),
        lease_(parse_lease(args.lease)),
        queue_(args.url),
        hash_(pipeline_hash(*project.dag, project.pipeline)),
        owner_(worker_owner()) {}

  int run() {
    for (const std::string& other : queue_.active_hashes(project_.name)) {
      if (other != hash_) return mismatch(other);
    }
    // The first SIGTERM or SIGINT stops claiming and lets the running tasks finish; a second
    // one kills their commands and gives the tasks back to the queue.
    interrupts_ = std::make_unique<Interrupts>(
        kInterruptGrace, kInterruptLinger, [this](int) { give_up(); },
        Interrupts::FirstSignal::finish);
    std::thread beat([this] { heartbeat(); });
    std::vector<std::thread> threads;
    for (int i = 0; i < args_.concurrency; ++i) threads.emplace_back([this] { work(); });
    for (std::thread& t : threads) t.join();
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    beat.join();
    if (!mismatch_.empty()) return mismatch(mismatch_);
    print_line(project_, summary());
    return kOk;
  }

 private:
  int mismatch(const std::string& other) const {
    std::cerr << fmt::format(
        "pipeline '{}' differs from the one its backfills were enqueued with (definition hash "
        "{} here, {} in queue '{}'): run the workers on the same pipeline version\n",
        project_.name, hash_, other, queue_.display());
    return kBadInput;
  }

  void heartbeat() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, lease_ / 3, [this] { return done_; })) {
      try {
        queue_.renew(owner_, lease_);
      } catch (const std::exception&) {
        // A missed beat; the next one tries again well before the lease runs out.
      }
    }
  }

  bool stop_requested() const { return interrupts_ && interrupts_->stop().load(); }
  bool stopping_now() const { return interrupts_ && interrupts_->signals() > 1; }

  // Called when a task is still running after a second signal killed its commands (a C++
  // asset still computing): gives every running task back, and exits.
  void give_up() {
    std::lock_guard lock(running_mutex_);
    for (const auto& [id, task] : running_) {
      try {
        queue_.release(task, owner_);
      } catch (const std::exception&) {
        // Its lease expires instead.
      }
    }
    std::cerr << fmt::format("worker {}: stopped by a second signal; {} running tasks given back\n",
                             owner_, running_.size());
    std::fflush(nullptr);
    std::_Exit(kOk);
  }

  // Waits up to `pause`, returning early when a signal arrives.
  void pause(std::chrono::milliseconds pause) const {
    const auto until = std::chrono::steady_clock::now() + pause;
    while (!stop_requested() && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  void work() {
    while (!stop_requested() && !mismatched_.load()) {
      try {
        std::optional<queue::Queue::Claim> claim = queue_.claim(project_.name, owner_, lease_);
        if (claim) {
          run_task(*claim);
          continue;
        }
        if (queue_.requeue_expired() > 0) continue;
        if (args_.exit_when_idle && queue_.unfinished(project_.name) == 0) return;
        pause(std::chrono::milliseconds(200));
      } catch (const std::exception& e) {
        // The database went away or refused: say so and try again, as a worker must outlive
        // a database restart.
        {
          std::lock_guard lock(output_);
          std::cerr << "worker: " << e.what() << "\n";
        }
        pause(std::chrono::milliseconds(1000));
      }
    }
  }

  // The backfill's plan, planned once per worker from what the backfill stored.
  std::shared_ptr<const Plan> plan_of(std::int64_t backfill) {
    std::lock_guard lock(plans_mutex_);
    auto it = plans_.find(backfill);
    if (it != plans_.end()) return it->second;
    std::optional<queue::BackfillInfo> info = queue_.backfill(backfill);
    if (!info) throw RunError(fmt::format("queue: backfill {} vanished", backfill));
    Selection selection =
        select(*project_.dag, WindowArgument::window(info->spec.window), info->spec.assets, true);
    auto planned = std::make_shared<const Plan>(
        plan_backfill(*project_.dag, *selection.window, info->spec.assets, false, nullptr));
    plans_.emplace(backfill, planned);
    return planned;
  }

  void run_task(queue::Queue::Claim& claim) {
    const queue::ClaimedTask& task = claim.task();
    if (task.pipeline_hash != hash_) {
      queue_.release(claim);
      std::lock_guard lock(plans_mutex_);
      mismatch_ = task.pipeline_hash;
      mismatched_ = true;
      return;
    }
    {
      std::lock_guard lock(running_mutex_);
      running_.emplace(std::pair(task.backfill, task.task), task);
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
      queue_.release(claim);
      std::lock_guard lock(output_);
      print_line(project_, fmt::format("released  {}  {}  (backfill {}): stopped by a signal",
                                       task.asset, task.partition, task.backfill));
      return;
    }
    if (!result) {
      // Another backfill's task writes this partition (claimed in the instant before this
      // one, or still running past its lease): give the task back until that run is done.
      queue_.release(claim);
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
        {
          std::lock_guard lock(output_);
          std::cerr << "worker: recording " << task.asset << " " << task.partition
                    << " failed, retrying: " << e.what() << "\n";
        }
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    }
  }

  void forget(const queue::ClaimedTask& task) {
    std::lock_guard lock(running_mutex_);
    running_.erase(std::pair(task.backfill, task.task));
  }

  // Runs the task while its claim holds its (asset, partition) against every other worker,
  // whatever the backfill, so that overlapping backfills never write one partition at once.
  // nullopt when another worker holds it. The lock ends when the task is settled, after the
  // write and the store's record.
  std::optional<TaskResult> execute_locked(const queue::Queue::Claim& claim) {
    if (!claim.locked()) return std::nullopt;
    const queue::ClaimedTask& task = claim.task();
    std::shared_ptr<const Plan> planned = plan_of(task.backfill);
    ExecuteOptions options;
    options.run = run_;
    TaskResult result =
        execute_task(*project_.dag, *planned, static_cast<std::size_t>(task.task), options);
    if (result.asset != task.asset || result.window != task.partition) {
      result.status = Status::failed;
      result.error = fmt::format("the plan's task {} is {} {}, the queue's is {} {}", task.task,
                                 result.asset, result.window, task.asset, task.partition);
    }
    return result;
  }

  // Tasks, as the queue counts them: a task succeeded or failed for good here, whatever its
  // attempts; a failed attempt the queue runs again is a retry, not a failure.
  std::string summary() const {
    const std::size_t succeeded = succeeded_.load(), failed = failed_.load();
    const std::size_t retried = retried_.load();
    return fmt::format("worker {}: {} task{} succeeded, {} failed{}{}", owner_, succeeded,
                       succeeded == 1 ? "" : "s", failed,
                       retried == 0 ? ""
                                    : fmt::format(" ({} failed attempt{} retried)", retried,
                                                  retried == 1 ? "" : "s"),
                       stop_requested() ? " (stopped by a signal)" : "");
  }

  void settle(queue::Queue::Claim& claim, const TaskResult& result) {
    const queue::ClaimedTask& task = claim.task();
    const std::string partition = shown_partition(*project_.dag, task.asset, task.partition);
    std::string line;
    if (result.status == Status::succeeded) {
      const bool held = queue_.complete(claim);
      if (held) ++succeeded_;
      line = fmt::format("ok        {}  {}  {} rows  {:.3f}s  (backfill {}, attempt {}){}",
                         task.asset, partition, result.rows, result.seconds, task.backfill,
                         task.attempts, held ? "" : "  lease lost: the task runs again");
    } else {
      const bool final = queue_.fail(claim, bound_error(result.error));
      ++(final ? failed_ : retried_);
      line = fmt::format("{}  {}  {}  (backfill {}, attempt {}): {}",
                         final ? "FAILED   " : "retrying ", task.asset, partition, task.backfill,
                         task.attempts, result.error);
    }
    std::lock_guard lock(output_);
    print_line(project_, line);
  }

  const QueueProject& project_;
  const RunOptions& run_;
  const QueueArgs& args_;
  const std::chrono::seconds lease_;
  queue::Queue queue_;
  const std::string hash_;
  const std::string owner_;

  std::mutex mutex_;  // the heartbeat's
  std::condition_variable wake_;
  bool done_ = false;
  std::mutex output_;
  std::mutex plans_mutex_;
  std::map<std::int64_t, std::shared_ptr<const Plan>> plans_;
  std::string mismatch_;
  std::atomic<bool> mismatched_{false};
  std::atomic<std::size_t> succeeded_{0}, failed_{0}, retried_{0};
  std::mutex running_mutex_;
  std::map<std::pair<std::int64_t, std::int64_t>, queue::ClaimedTask> running_;
  std::unique_ptr<Interrupts> interrupts_;  // last: its watcher may call give_up()
};

}  // namespace

int queue_worker(const QueueProject& project, const RunOptions& run, const QueueArgs& args) {
  if (args.concurrency < 1) {
    throw UsageError(fmt::format("--concurrency must be at least 1, got {}", args.concurrency));
  }
  Worker worker(project, run, args);
  return worker.run();
}

}  // namespace interloper::cli
