// Validation and the runners: a ready-queue scheduler shared by the serial and threaded
// runners (the serial one simply has a single worker: the calling thread).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "interloper/destination.hpp"
#include "interloper/plan.hpp"
#include "interloper/run.hpp"
#include "interloper/run/run_id.hpp"
#include "interloper/store.hpp"

namespace interloper {

namespace {

const Clock& clock_of(const RunOptions& options) {
  static const SystemClock system_clock;
  return options.clock != nullptr ? *options.clock : system_clock;
}

// Selected names (empty: all). Throws DagError naming an unknown asset.
std::unordered_set<std::string_view> selection(const DAG& dag, const RunOptions& options) {
  std::unordered_set<std::string_view> chosen;
  for (const std::string& name : options.assets) chosen.insert(dag.asset(name).name());
  return chosen;
}

std::string describe_exception(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception (a type not derived from std::exception)";
  }
}

}  // namespace

namespace detail {

std::string generate_run_id(const Clock& clock) {
  // A per-process random salt and a counter keep ids unique across processes and within one.
  static const std::string salt = [] {
    std::random_device device;
    return fmt::format("{:06x}", device() & 0xffffffu);
  }();
  static std::atomic<std::uint64_t> counter{0};
  std::string stamp = clock.now().to_string();  // YYYY-MM-DDTHH:MM:SS
  stamp.erase(
      std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == '-' || c == ':'; }),
      stamp.end());
  return fmt::format("run-{}-{}-{:06d}", stamp, salt, ++counter);
}

}  // namespace detail

void validate(const DAG& dag, const PartitionWindow* window, const RunOptions& options) {
  PlanOptions plan_options;
  plan_options.scope = TaskScope::per_asset;
  plan_options.assets = options.assets;
  plan(dag, window, plan_options);
}

RunResult Runner::run(const DAG& dag, const Partition& partition, const RunOptions& options) const {
  const std::unique_ptr<PartitionWindow> window = partition.as_window();
  return run(dag, window.get(), options);
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string default_owner(const Clock& clock) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}:{}", host, ::getpid(), detail::generate_run_id(clock));
}

// Renews `owner`'s claims every third of the lease until stopped.
class Heartbeat {
 public:
  Heartbeat(MaterializationStore& store, const Clock& clock, std::string owner,
            std::chrono::seconds lease)
      : thread_([this, &store, &clock, owner = std::move(owner), lease] {
          std::unique_lock lock(mutex_);
          const auto every = std::chrono::duration_cast<std::chrono::milliseconds>(lease) / 3;
          while (!wake_.wait_for(lock, every, [this] { return stop_; })) {
            try {
              store.renew(owner, TimePoint(clock.now().seconds() + lease));
            } catch (const std::exception&) {
              // A busy store misses one beat; the next one tries again.
            }
          }
        }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

constexpr const char* kInterrupted = "interrupted";

// How a task ended besides its Status: claimed by another run, or found done meanwhile.
enum class Unrun : std::uint8_t { no, claimed_elsewhere, done_meanwhile };

// Runs the tasks of a plan: a ready queue ordered newest first, fed by arithmetic on the plan.
// Per task it keeps a count of unfinished upstream tasks and a status: five bytes.
class Engine {
 public:
  Engine(const DAG& dag, const Plan& plan, const ExecuteOptions& options)
      : dag_(dag), plan_(plan), options_(options), clock_(clock_of(options.run)) {
    run_id_ = options.run.run_id.empty() ? detail::generate_run_id(clock_) : options.run.run_id;
    request_text_ = plan.request() ? plan.request()->to_string() : std::string();
    logger_ = Logger([this](LogLevel level, std::string_view asset, std::string_view message) {
      std::lock_guard lock(log_mutex_);
      options_.run.logger.for_asset(std::string(asset)).log(level, message);
      if (options_.run.events != nullptr) {
        Event event = make_event(EventType::log, std::string(asset), request_text_);
        event.message = fmt::format("{}: {}", log_level_name(level), message);
        publish(event);
      }
    });
  }

  PlanResult run() {
    const auto started = std::chrono::steady_clock::now();
    result_.run_id = run_id_;
    publish(make_event(EventType::run_started, {}, request_text_));
    prepare();
    std::optional<Heartbeat> heartbeat;
    if (options_.claim && options_.run.store != nullptr && remaining_ > 0) {
      owner_ = options_.claim_owner.empty() ? default_owner(clock_) : options_.claim_owner;
      heartbeat.emplace(*options_.run.store, clock_, owner_, options_.claim_lease);
    }
    const std::size_t workers = std::min<std::size_t>(
        static_cast<std::size_t>(options_.concurrency), std::max<std::size_t>(remaining_, 1));
    std::vector<std::thread> threads;
    threads.reserve(workers - 1);
    for (std::size_t t = 1; t < workers; ++t) threads.emplace_back([this] { work(); });
    work();
    for (std::thread& thread : threads) thread.join();
    heartbeat.reset();
    result_.seconds = seconds_since(started);
    Event event = make_event(result_.ok() ? EventType::run_completed : EventType::run_failed, {},
                             request_text_);
    event.seconds = result_.seconds;
    std::string summary;
    for (const TaskResult& failure : result_.failures) {
      if (!summary.empty()) summary += '\n';
      summary += fmt::format("{} {}: {}", failure.asset, failure.window, failure.error);
    }
    event.message = std::move(summary);
    publish(event);
    return std::move(result_);
  }

  // One task on its own, outside the ready queue: what a queue worker runs.
  TaskResult run_one(std::size_t task) { return execute(task); }

 private:
  struct Ready {
    std::int64_t recency;
    std::size_t task;
    // The heap's top is the newest task; among equals, the first in plan order.
    friend bool operator<(const Ready& a, const Ready& b) {
      return a.recency != b.recency ? a.recency < b.recency : a.task > b.task;
    }
  };

  Event make_event(EventType type, std::string asset, const std::string& window) const {
    Event event;
    event.type = type;
    event.time = clock_.now();
    event.run_id = run_id_;
    event.asset = std::move(asset);
    event.window = window;
    return event;
  }

  void publish(const Event& event) const {
    if (options_.run.events == nullptr) return;
    try {
      options_.run.events->publish(event);
    } catch (...) {
      // A failing subscriber must not take the run (or a worker thread) down.
    }
  }

  // The number of tasks of `step` in `range` that run.
  std::size_t running_in(std::size_t step, PartitionRange range) const {
    std::size_t n = range.last - range.first + 1;
    const auto& skipped = plan_.steps()[step].skipped;
    auto it = std::lower_bound(skipped.begin(), skipped.end(), range.first,
                               [](const PartitionRange& r, std::size_t i) { return r.last < i; });
    for (; it != skipped.end() && it->first <= range.last; ++it) {
      n -= std::min(it->last, range.last) - std::max(it->first, range.first) + 1;
    }
    return n;
  }

  void prepare() {
    const std::size_t n = plan_.size();
    waiting_.assign(n, 0);
    state_.assign(n, Status::pending);
    root_.assign(n, false);
    std::vector<Ready> ready;
    const auto& steps = plan_.steps();
    for (std::size_t s = 0; s < steps.size(); ++s) {
      const Plan::Step& step = steps[s];
      for (std::size_t i = 0; i < step.tasks; ++i) {
        const std::size_t task = step.first_task + i;
        if (!plan_.runs(task)) {
          state_[task] = Status::skipped;
          ++result_.tasks.skipped;
          continue;
        }
        ++remaining_;
        std::size_t waiting = 0;
        for (std::size_t up : step.upstream) {
          if (std::optional<PartitionRange> reads = plan_.related(task, up)) {
            waiting += running_in(up, *reads);
          }
        }
        waiting_[task] = static_cast<std::uint32_t>(waiting);
        root_[task] = waiting == 0;
        if (waiting == 0) {
          ready.push_back({plan_.recency(task), task});
          queued(task);
        }
      }
    }
    std::make_heap(ready.begin(), ready.end());
    ready_ = std::move(ready);
  }

  void push(std::size_t task) {
    ready_.push_back({plan_.recency(task), task});
    std::push_heap(ready_.begin(), ready_.end());
    queued(task);
  }

  void queued(std::size_t task) const {
    if (options_.run.events == nullptr) return;
    std::shared_ptr<const PartitionWindow> window = plan_.window(task);
    publish(make_event(EventType::asset_queued, plan_.steps()[plan_.step_of(task)].asset->name(),
                       window ? window->to_string() : std::string()));
  }

  void work() {
    std::unique_lock lock(mutex_);
    while (true) {
      cv_.wait(lock, [this] { return !ready_.empty() || remaining_ == 0; });
      if (stopping()) {
        // Nothing new starts; the workers wait for the running tasks to end.
        cancel_pending(kInterrupted);
        if (remaining_ == 0) return;
        continue;
      }
      if (ready_.empty()) return;  // everything finished
      std::pop_heap(ready_.begin(), ready_.end());
      const std::size_t task = ready_.back().task;
      ready_.pop_back();
      if (state_[task] != Status::pending) continue;  // canceled while queued
      state_[task] = Status::running;
      lock.unlock();
      Unrun unrun = Unrun::no;
      TaskResult outcome = claim_and_execute(task, unrun);
      lock.lock();
      if (unrun == Unrun::no) {
        finish(task, std::move(outcome));
      } else {
        set_aside(task, std::move(outcome), unrun);
      }
      cv_.notify_all();
    }
  }

  // Requires mutex_.
  void report(const TaskResult& result) {
    if (!options_.on_task) return;
    try {
      options_.on_task(result);
    } catch (...) {
      // Like event subscribers, a failing callback must not take the run down.
    }
  }

  // Requires mutex_.
  void finish(std::size_t task, TaskResult outcome) {
    state_[task] = outcome.status;
    --remaining_;
    if (outcome.status == Status::succeeded) {
      ++result_.tasks.succeeded;
      report(outcome);
      release_readers(task);
      return;
    }
    ++result_.tasks.failed;
    report(outcome);
    const std::string reason = fmt::format("upstream asset '{}' failed for {}", outcome.asset,
                                           outcome.window.empty() ? "-" : outcome.window);
    result_.failures.push_back(std::move(outcome));
    cancel_downstream(task, reason);
    if (options_.fail_fast) {
      cancel_pending(
          fmt::format("asset '{}' failed and fail_fast is on", result_.failures.back().asset));
    }
  }

  bool stopping() const {
    return options_.run.stop != nullptr && options_.run.stop->load(std::memory_order_relaxed);
  }

  // Requires mutex_. Cancels every task not started yet.
  void cancel_pending(const std::string& reason) {
    if (canceled_all_) return;
    canceled_all_ = true;
    for (std::size_t t = 0; t < state_.size(); ++t) {
      if (state_[t] == Status::pending) cancel(t, reason);
    }
    ready_.clear();
    cv_.notify_all();
  }

  // Requires mutex_. A task not run: another run holds it (it and its readers count as
  // claimed), or another run finished it meanwhile (skipped; its readers go on).
  void set_aside(std::size_t task, TaskResult outcome, Unrun unrun) {
    --remaining_;
    if (unrun == Unrun::done_meanwhile) {
      state_[task] = Status::succeeded;
      ++result_.tasks.skipped;
      release_readers(task);
      return;
    }
    state_[task] = Status::skipped;
    ++result_.tasks.claimed;
    report(outcome);
    result_.claimed.push_back(std::move(outcome));
    std::vector<std::size_t> todo{task};
    while (!todo.empty()) {
      const std::size_t current = todo.back();
      todo.pop_back();
      for_each_reader(current, [&](std::size_t t) {
        if (state_[t] != Status::pending) return;
        state_[t] = Status::skipped;
        --remaining_;
        ++result_.tasks.claimed;
        todo.push_back(t);
      });
    }
  }

  template <typename F>
  void for_each_reader(std::size_t task, F&& f) const {
    for (std::size_t down : plan_.steps()[plan_.step_of(task)].downstream) {
      std::optional<PartitionRange> readers = plan_.related(task, down);
      if (!readers) continue;
      const std::size_t first = plan_.steps()[down].first_task;
      for (std::size_t i = readers->first; i <= readers->last; ++i) f(first + i);
    }
  }

  // Requires mutex_. One upstream of each reader of `task` is done.
  void release_readers(std::size_t task) {
    for_each_reader(task, [&](std::size_t t) {
      if (state_[t] == Status::pending && --waiting_[t] == 0) push(t);
    });
  }

  // Claims the task's (asset, partition) when claims are on, then executes it. Never throws.
  TaskResult claim_and_execute(std::size_t task, Unrun& unrun) {
    MaterializationStore* store = options_.run.store;
    const Asset& asset = *plan_.steps()[plan_.step_of(task)].asset;
    if (owner_.empty() || asset.partitioning() == nullptr) return execute(task);
    const std::shared_ptr<const PartitionWindow> window = plan_.window(task);
    const std::vector<DatasetRef> datasets{asset.dataset()};
    TaskResult result;
    result.asset = asset.name();
    result.window = window->to_string();
    try {
      const TimePoint now = clock_.now();
      const Claim mine{owner_, TimePoint(now.seconds() + options_.claim_lease)};
      if (std::optional<Claim> held = store->claim(datasets, window.get(), mine, now)) {
        unrun = Unrun::claimed_elsewhere;
        result.status = Status::skipped;
        result.error = fmt::format("claimed by {}", held->owner);
        return result;
      }
      // Only a task that runs for itself can have been finished meanwhile: one that runs
      // because an upstream task of this plan runs is stale whatever the store says.
      if (options_.missing_only && root_[task]) {
        WindowStatus status = store->status(asset.dataset(), *window);
        if (status.missing.empty() && status.failed.empty()) {
          store->release(datasets, window.get(), owner_);
          unrun = Unrun::done_meanwhile;
          return result;
        }
      }
    } catch (...) {
      result.status = Status::failed;
      result.error = "claiming failed: " + describe_exception(std::current_exception());
      return result;
    }
    result = execute(task);
    try {
      store->release(datasets, window.get(), owner_);
    } catch (...) {
      // Left to lapse with its lease.
    }
    return result;
  }

  // Requires mutex_. Cancels one pending task.
  void cancel(std::size_t task, const std::string& reason) {
    state_[task] = Status::canceled;
    --remaining_;
    ++result_.tasks.canceled;
    TaskResult canceled;
    canceled.asset = plan_.steps()[plan_.step_of(task)].asset->name();
    std::shared_ptr<const PartitionWindow> window = plan_.window(task);
    canceled.window = window ? window->to_string() : std::string();
    canceled.status = Status::canceled;
    canceled.error = reason;
    if (options_.run.events != nullptr) {
      Event event = make_event(EventType::asset_canceled, canceled.asset, canceled.window);
      event.message = reason;
      publish(event);
    }
    report(canceled);
  }

  // Requires mutex_. Cancels every pending task reading `task`, transitively.
  void cancel_downstream(std::size_t task, const std::string& reason) {
    std::vector<std::size_t> todo{task};
    while (!todo.empty()) {
      const std::size_t current = todo.back();
      todo.pop_back();
      for (std::size_t down : plan_.steps()[plan_.step_of(current)].downstream) {
        std::optional<PartitionRange> readers = plan_.related(current, down);
        if (!readers) continue;
        const std::size_t first = plan_.steps()[down].first_task;
        for (std::size_t i = readers->first; i <= readers->last; ++i) {
          const std::size_t t = first + i;
          if (state_[t] != Status::pending) continue;
          cancel(t, reason);
          todo.push_back(t);
        }
      }
    }
  }

  // Computes, writes and records one task. Never throws.
  TaskResult execute(std::size_t task) {
    const Asset& asset = *plan_.steps()[plan_.step_of(task)].asset;
    const std::shared_ptr<const PartitionWindow> window = plan_.window(task);
    TaskResult result;
    result.asset = asset.name();
    result.window = window ? window->to_string() : std::string();
    result.status = Status::running;
    if (options_.run.events != nullptr) {
      publish(make_event(EventType::asset_started, asset.name(), result.window));
    }
    const auto started_steady = std::chrono::steady_clock::now();
    const TimePoint started = clock_.now();
    const PartitionWindow* write_window = asset.partitioning() != nullptr ? window.get() : nullptr;
    try {
      Destination* destination = dag_.destination_of(asset);
      if (destination == nullptr) {
        throw DestinationError(fmt::format(
            "asset '{}': no destination to write to (set one on the asset or its source)",
            asset.name()));
      }
      // Batches the asset emits go to the writer as they come; the window is replaced only
      // when the asset has returned, so a failure leaves it as it was.
      std::unique_ptr<WindowWriter> writer =
          destination->open_writer(asset.dataset(), write_window);
      ExecutionContext context(
          asset.name(), window, logger_.for_asset(asset.name()),
          [this, &asset, &result, window](std::string_view upstream) {
            return load(asset, window.get(), result.window, upstream);
          },
          [&writer](const Table& batch) { writer->append(batch); },
          [this, &asset, window](std::string_view upstream) {
            return reads_of(asset, window.get(), upstream).reads;
          });
      writer->append(asset.compute(context));
      result.rows = writer->commit();
      if (options_.run.events != nullptr) {
        Event event = make_event(EventType::destination_write, asset.name(), result.window);
        event.rows = result.rows;
        event.message = destination->url();
        publish(event);
      }
      result.status = Status::succeeded;
    } catch (...) {
      result.status = Status::failed;
      // A run being stopped has interrupted the task (its command was terminated): that, not
      // the command's death, is what happened to it.
      result.error = stopping() ? std::string(kInterrupted)
                                : describe_exception(std::current_exception());
    }
    if (options_.run.store != nullptr) {
      MaterializationRecord record;
      record.asset = asset.name();
      record.status = result.status == Status::succeeded ? MaterializationStatus::materialized
                                                         : MaterializationStatus::failed;
      record.rows = result.rows;
      record.run_id = run_id_;
      record.started = started;
      record.finished = clock_.now();
      record.error = result.error;
      try {
        options_.run.store->record(asset.dataset(), write_window, record);
      } catch (...) {
        result.status = Status::failed;
        result.error =
            "recording the outcome failed: " + describe_exception(std::current_exception());
      }
    }
    result.seconds = seconds_since(started_steady);
    if (options_.run.events != nullptr) {
      Event event = make_event(
          result.status == Status::succeeded ? EventType::asset_completed : EventType::asset_failed,
          asset.name(), result.window);
      event.rows = result.rows;
      event.seconds = result.seconds;
      event.message = result.error;
      publish(event);
    }
    return result;
  }

  // What `asset` running over `window` reads of `upstream_name`: the upstream's partitions
  // overlapping the window's bounds; an unpartitioned upstream, or any upstream of an
  // unpartitioned asset, is read whole.
  struct Reads {
    ExecutionContext::UpstreamReads reads;
    Destination* destination = nullptr;
  };
  Reads reads_of(const Asset& asset, const PartitionWindow* window,
                 std::string_view upstream_name) const {
    const auto& deps = asset.deps();
    if (std::find(deps.begin(), deps.end(), upstream_name) == deps.end()) {
      throw RunError(fmt::format("asset '{}' cannot load '{}': it is not one of its dependencies",
                                 asset.name(), upstream_name));
    }
    const Asset* upstream = dag_.find(upstream_name);
    if (upstream == nullptr) upstream = dag_.external(upstream_name);
    if (upstream == nullptr) {
      throw RunError(
          fmt::format("asset '{}' cannot load '{}': unknown asset", asset.name(), upstream_name));
    }
    Reads result;
    result.destination = dag_.destination_of(*upstream);
    if (result.destination == nullptr) {
      throw RunError(fmt::format("asset '{}' cannot load '{}': it has no destination", asset.name(),
                                 upstream_name));
    }
    result.reads.dataset = upstream->dataset();
    if (upstream->partitioning() != nullptr && asset.partitioning() != nullptr &&
        window != nullptr) {
      result.reads.whole = false;
      result.reads.window = overlapping_window(*upstream->partitioning(), *window);
    }
    return result;
  }

  // ExecutionContext::load: the rows reads_of() names.
  Table load(const Asset& asset, const PartitionWindow* window, const std::string& window_text,
             std::string_view upstream_name) {
    Reads reads = reads_of(asset, window, upstream_name);
    if (!reads.reads.whole && reads.reads.window == nullptr) return Table();  // before its start
    Table rows = reads.destination->read(reads.reads.dataset, reads.reads.window.get());
    if (options_.run.events != nullptr) {
      Event event = make_event(EventType::destination_read, asset.name(), window_text);
      event.rows = static_cast<std::int64_t>(rows.num_rows());
      event.message = fmt::format("read '{}' from {}", upstream_name, reads.destination->url());
      publish(event);
    }
    return rows;
  }

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
};

// A run of one window: one task per asset over its own share.
RunResult run_window(const DAG& dag, const PartitionWindow* window, const RunOptions& options,
                     int workers) {
  const Clock& clock = clock_of(options);
  RunOptions run_options = options;
  if (run_options.run_id.empty()) run_options.run_id = detail::generate_run_id(clock);
  PlanOptions plan_options;
  plan_options.scope = TaskScope::per_asset;
  plan_options.assets = options.assets;
  std::optional<Plan> planned;
  try {
    planned = plan(dag, window, plan_options);
  } catch (const std::exception& e) {
    if (options.events != nullptr) {
      Event event;
      event.type = EventType::run_failed;
      event.time = clock.now();
      event.run_id = run_options.run_id;
      event.window = window ? window->to_string() : std::string();
      event.message = e.what();
      try {
        options.events->publish(event);
      } catch (...) {
      }
    }
    throw;
  }
  ExecuteOptions execute_options;
  execute_options.concurrency = workers;
  execute_options.fail_fast = options.fail_fast;
  execute_options.run = std::move(run_options);
  std::unordered_map<std::string_view, AssetResult> outcomes;
  execute_options.on_task = [&outcomes](const TaskResult& task) {
    auto it = outcomes.find(task.asset);
    if (it == outcomes.end()) return;
    AssetResult& result = it->second;
    result.asset = task.asset;
    result.status = task.status;
    result.rows = task.rows;
    result.seconds = task.seconds;
    result.error = task.error;
  };
  // Keys of `outcomes` point into the DAG's assets, which outlive the run.
  for (const Plan::Step& step : planned->steps()) outcomes[step.asset->name()];
  PlanResult done = execute(dag, *planned, execute_options);

  RunResult result;
  result.run_id = done.run_id;
  result.window = window ? window->to_string() : std::string();
  result.status = done.ok() ? Status::succeeded : Status::failed;
  result.seconds = done.seconds;
  const auto chosen = selection(dag, options);
  for (const Asset* asset : dag.order()) {
    if (!chosen.empty() && chosen.count(asset->name()) == 0) continue;
    AssetResult entry;
    entry.asset = asset->name();
    if (!asset->enabled()) {
      entry.status = Status::skipped;
      entry.error = "disabled";
    } else if (auto it = outcomes.find(asset->name()); it != outcomes.end()) {
      entry = std::move(it->second);
      entry.asset = asset->name();
    }
    result.assets.push_back(std::move(entry));
  }
  return result;
}

}  // namespace

PlanResult execute(const DAG& dag, const Plan& plan, const ExecuteOptions& options) {
  if (options.concurrency < 1) {
    throw std::invalid_argument(
        fmt::format("execute: concurrency must be at least 1, got {}", options.concurrency));
  }
  Engine engine(dag, plan, options);
  return engine.run();
}

TaskResult execute_task(const DAG& dag, const Plan& plan, std::size_t task,
                        const ExecuteOptions& options) {
  if (task >= plan.size()) {
    throw std::out_of_range(
        fmt::format("execute_task: task {} is past the plan's {} tasks", task, plan.size()));
  }
  Engine engine(dag, plan, options);
  return engine.run_one(task);
}

RunResult SerialRunner::run(const DAG& dag, const PartitionWindow* window,
                            const RunOptions& options) const {
  return run_window(dag, window, options, 1);
}

ThreadedRunner::ThreadedRunner(int max_workers) : max_workers_(max_workers) {
  if (max_workers < 1) {
    throw std::invalid_argument(
        fmt::format("ThreadedRunner: max_workers must be at least 1, got {}", max_workers));
  }
}

RunResult ThreadedRunner::run(const DAG& dag, const PartitionWindow* window,
                              const RunOptions& options) const {
  return run_window(dag, window, options, max_workers_);
}

}  // namespace interloper
