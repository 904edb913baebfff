// The ready-queue scheduler the runners share: tasks become ready as their upstream tasks end,
// run newest first on the workers, and a failure cancels exactly what reads it.
#include "interloper/run/engine.hpp"

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

std::string default_owner(const Clock& clock) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}:{}", host, ::getpid(), detail::generate_run_id(clock));
}

// Renews `owner`'s claims every third of the lease until stopped.
class Heartbeat {
 public:
  Heartbeat(PartitionClaims& claims, const Clock& clock, std::string owner,
            std::chrono::seconds lease)
      : thread_([this, &claims, &clock, owner = std::move(owner), lease] {
          std::unique_lock lock(mutex_);
          const auto every = std::chrono::duration_cast<std::chrono::milliseconds>(lease) / 3;
          while (!wake_.wait_for(lock, every, [this] { return stop_; })) {
            try {
              claims.renew(owner, TimePoint(clock.now().seconds() + lease));
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

}  // namespace

namespace detail {

Engine::Engine(const DAG& dag, const Plan& plan, const ExecuteOptions& options)
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

PlanResult Engine::run() {
  const auto started = std::chrono::steady_clock::now();
  result_.run_id = run_id_;
  publish(make_event(EventType::run_started, {}, request_text_));
  prepare();
  std::optional<Heartbeat> heartbeat;
  if (options_.claim && options_.run.store != nullptr && remaining_ > 0) {
    owner_ = options_.claim_owner.empty() ? default_owner(clock_) : options_.claim_owner;
    heartbeat.emplace(*options_.run.store, clock_, owner_, options_.claim_lease);
  }
  if (options_.run.store != nullptr && options_.run.store->groups_calls() && remaining_ > 0) {
    batch_ = std::make_unique<StoreBatch>(
        *options_.run.store, owner_,
        [this](std::size_t task, const std::string& error) { unrecorded(task, error); });
  }
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(options_.concurrency),
                                                    std::max<std::size_t>(remaining_, 1));
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (std::size_t t = 1; t < workers; ++t) threads.emplace_back([this] { work(); });
  work();
  for (std::thread& thread : threads) thread.join();
  // Whatever waits is written however the run ended (finished, failed, stopped).
  release_unrun();
  batch_.reset();
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
TaskResult Engine::run_one(std::size_t task) { return execute(task); }

// The number of tasks of `step` in `range` that run.
std::size_t Engine::running_in(std::size_t step, PartitionRange range) const {
  std::size_t n = range.last - range.first + 1;
  const auto& skipped = plan_.steps()[step].skipped;
  auto it = std::lower_bound(skipped.begin(), skipped.end(), range.first,
                             [](const PartitionRange& r, std::size_t i) { return r.last < i; });
  for (; it != skipped.end() && it->first <= range.last; ++it) {
    n -= std::min(it->last, range.last) - std::max(it->first, range.first) + 1;
  }
  return n;
}

void Engine::prepare() {
  const std::size_t n = plan_.size();
  waiting_.assign(n, 0);
  state_.assign(n, Status::pending);
  claimed_.assign(n, 0);
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

void Engine::push(std::size_t task) {
  ready_.push_back({plan_.recency(task), task});
  std::push_heap(ready_.begin(), ready_.end());
  queued(task);
}

void Engine::queued(std::size_t task) const {
  if (options_.run.events == nullptr) return;
  std::shared_ptr<const PartitionWindow> window = plan_.window(task);
  publish(make_event(EventType::asset_queued, plan_.steps()[plan_.step_of(task)].asset->name(),
                     window ? window->to_string() : std::string()));
}

void Engine::work() {
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
void Engine::report(const TaskResult& result) {
  if (!options_.on_task) return;
  try {
    options_.on_task(result);
  } catch (...) {
    // Like event subscribers, a failing callback must not take the run down.
  }
}

// Requires mutex_.
void Engine::finish(std::size_t task, TaskResult outcome) {
  check_recorded(task, outcome);
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

bool Engine::stopping() const {
  return options_.run.stop != nullptr && options_.run.stop->load(std::memory_order_relaxed);
}

// Requires mutex_. Cancels every task not started yet.
void Engine::cancel_pending(const std::string& reason) {
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
void Engine::set_aside(std::size_t task, TaskResult outcome, Unrun unrun) {
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
void Engine::for_each_reader(std::size_t task, F&& f) const {
  for (std::size_t down : plan_.steps()[plan_.step_of(task)].downstream) {
    std::optional<PartitionRange> readers = plan_.readers(task, down);
    if (!readers) continue;
    const std::size_t first = plan_.steps()[down].first_task;
    for (std::size_t i = readers->first; i <= readers->last; ++i) f(first + i);
  }
}

// Requires mutex_. One upstream of each reader of `task` is done.
void Engine::release_readers(std::size_t task) {
  for_each_reader(task, [&](std::size_t t) {
    if (state_[t] == Status::pending && --waiting_[t] == 0) push(t);
  });
}

// Requires mutex_. Cancels one pending task.
void Engine::cancel(std::size_t task, const std::string& reason) {
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
void Engine::cancel_downstream(std::size_t task, const std::string& reason) {
  std::vector<std::size_t> todo{task};
  while (!todo.empty()) {
    const std::size_t current = todo.back();
    todo.pop_back();
    for (std::size_t down : plan_.steps()[plan_.step_of(current)].downstream) {
      std::optional<PartitionRange> readers = plan_.readers(current, down);
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

}  // namespace detail

}  // namespace interloper
