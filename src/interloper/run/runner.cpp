// Validation and the runners: the serial and threaded runners over the ready-queue scheduler of
// engine.cpp (the serial one simply has a single worker: the calling thread).
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
#include "interloper/run/engine.hpp"
#include "interloper/run/run_id.hpp"
#include "interloper/store.hpp"

namespace interloper {

namespace {

// Selected names (empty: all). Throws DagError naming an unknown asset.
std::unordered_set<std::string_view> selection(const DAG& dag, const RunOptions& options) {
  std::unordered_set<std::string_view> chosen;
  for (const std::string& name : options.assets) chosen.insert(dag.asset(name).name());
  return chosen;
}

}  // namespace

namespace detail {

const Clock& clock_of(const RunOptions& options) {
  static const SystemClock system_clock;
  return options.clock != nullptr ? *options.clock : system_clock;
}

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

// The plan of a run of one window: one task per asset over its own share. A window the DAG
// refuses is published as a failed run before the error goes on.
Plan plan_window(const DAG& dag, const PartitionWindow* window, const RunOptions& options,
                 const Clock& clock) {
  PlanOptions plan_options;
  plan_options.scope = TaskScope::per_asset;
  plan_options.assets = options.assets;
  try {
    return plan(dag, window, plan_options);
  } catch (const std::exception& e) {
    if (options.events != nullptr) {
      Event event;
      event.type = EventType::run_failed;
      event.time = clock.now();
      event.run_id = options.run_id;
      event.window = window ? window->to_string() : std::string();
      event.message = e.what();
      try {
        options.events->publish(event);
      } catch (...) {
      }
    }
    throw;
  }
}

// Each selected asset's outcome in DAG order: what its task did, or why it had none.
std::vector<AssetResult> asset_results(
    const DAG& dag, const RunOptions& options,
    std::unordered_map<std::string_view, AssetResult>& outcomes) {
  std::vector<AssetResult> results;
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
    results.push_back(std::move(entry));
  }
  return results;
}

RunResult run_window(const DAG& dag, const PartitionWindow* window, const RunOptions& options,
                     int workers) {
  const Clock& clock = detail::clock_of(options);
  ExecuteOptions execute_options;
  execute_options.concurrency = workers;
  execute_options.fail_fast = options.fail_fast;
  execute_options.run = options;
  if (execute_options.run.run_id.empty()) {
    execute_options.run.run_id = detail::generate_run_id(clock);
  }
  const Plan planned = plan_window(dag, window, execute_options.run, clock);
  std::unordered_map<std::string_view, AssetResult> outcomes;
  // Keys of `outcomes` point into the DAG's assets, which outlive the run.
  for (const Plan::Step& step : planned.steps()) outcomes[step.asset->name()];
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
  PlanResult done = execute(dag, planned, execute_options);

  RunResult result;
  result.run_id = done.run_id;
  result.window = window ? window->to_string() : std::string();
  result.status = done.ok() ? Status::succeeded : Status::failed;
  result.seconds = done.seconds;
  result.assets = asset_results(dag, options, outcomes);
  return result;
}

}  // namespace

PlanResult execute(const DAG& dag, const Plan& plan, const ExecuteOptions& options) {
  if (options.concurrency < 1) {
    throw std::invalid_argument(
        fmt::format("execute: concurrency must be at least 1, got {}", options.concurrency));
  }
  detail::Engine engine(dag, plan, options);
  return engine.run();
}

TaskResult execute_task(const DAG& dag, const Plan& plan, std::size_t task,
                        const ExecuteOptions& options) {
  if (task >= plan.size()) {
    throw std::out_of_range(
        fmt::format("execute_task: task {} is past the plan's {} tasks", task, plan.size()));
  }
  detail::Engine engine(dag, plan, options);
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
