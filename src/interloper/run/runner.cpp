// Validation and the runners: a ready-queue scheduler shared by the serial and threaded
// runners (the serial one simply has a single worker: the calling thread).
#include <fmt/format.h>

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
#include "interloper/run.hpp"
#include "interloper/run/run_id.hpp"

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
  const auto chosen = selection(dag, options);
  std::string failures;
  for (const Asset* asset : dag.order()) {
    if (!asset->enabled()) continue;
    if (!chosen.empty() && chosen.count(asset->name()) == 0) continue;
    try {
      asset->check(window);
    } catch (const PartitionError& e) {
      if (!failures.empty()) failures += '\n';
      failures += e.what();
    }
  }
  if (!failures.empty()) throw PartitionError(failures);
}

RunResult Runner::run(const DAG& dag, const Partition& partition, const RunOptions& options) const {
  const std::unique_ptr<PartitionWindow> window = partition.as_window();
  return run(dag, window.get(), options);
}

namespace {

class Execution {
 public:
  Execution(const DAG& dag, const PartitionWindow* window, const RunOptions& options)
      : dag_(dag), options_(options), clock_(clock_of(options)) {
    if (window != nullptr) window_ = window->clone();
    run_id_ = options.run_id.empty() ? detail::generate_run_id(clock_) : options.run_id;
    window_text_ = window_ ? window_->to_string() : std::string();
    logger_ = Logger([this](LogLevel level, std::string_view asset, std::string_view message) {
      std::lock_guard lock(log_mutex_);
      options_.logger.for_asset(std::string(asset)).log(level, message);
      if (options_.events != nullptr) {
        Event event = make_event(EventType::log, std::string(asset));
        event.message = fmt::format("{}: {}", log_level_name(level), message);
        publish(event);
      }
    });
  }

  RunResult run(int max_workers) {
    const auto started = std::chrono::steady_clock::now();
    try {
      validate(dag_, window_.get(), options_);
    } catch (const std::exception& e) {
      Event event = make_event(EventType::run_failed);
      event.message = e.what();
      publish(event);
      throw;
    }
    plan();
    publish(make_event(EventType::run_started));

    {
      std::lock_guard lock(mutex_);
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (nodes_[i].result.status == Status::pending && nodes_[i].waiting == 0) enqueue(i);
      }
    }
    const std::size_t runnable = remaining_;
    const auto extra = static_cast<std::size_t>(
        std::max<std::ptrdiff_t>(0, std::min<std::ptrdiff_t>(max_workers, runnable) - 1));
    std::vector<std::thread> threads;
    threads.reserve(extra);
    for (std::size_t t = 0; t < extra; ++t) threads.emplace_back([this] { work(); });
    work();
    for (std::thread& thread : threads) thread.join();

    RunResult result;
    result.run_id = run_id_;
    result.window = window_text_;
    result.status = Status::succeeded;
    for (Node& node : nodes_) {
      if (node.result.status == Status::failed || node.result.status == Status::canceled) {
        result.status = Status::failed;
      }
      result.assets.push_back(std::move(node.result));
    }
    result.seconds = seconds_since(started);
    Event event = make_event(result.ok() ? EventType::run_completed : EventType::run_failed);
    event.seconds = result.seconds;
    event.message = result.error_summary();
    publish(event);
    return result;
  }

 private:
  struct Node {
    const Asset* asset = nullptr;
    std::vector<std::size_t> downstream;
    std::size_t waiting = 0;  // upstreams of this run that have not finished
    AssetResult result;
  };

  static double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  Event make_event(EventType type, std::string asset = {}) const {
    Event event;
    event.type = type;
    event.time = clock_.now();
    event.run_id = run_id_;
    event.asset = std::move(asset);
    event.window = window_text_;
    return event;
  }

  void publish(const Event& event) const {
    if (options_.events == nullptr) return;
    try {
      options_.events->publish(event);
    } catch (...) {
      // A failing subscriber must not take the run (or a worker thread) down.
    }
  }

  // Builds the nodes of the selected assets, in topological order.
  void plan() {
    const auto chosen = selection(dag_, options_);
    std::unordered_map<std::string_view, std::size_t> index;
    for (const Asset* asset : dag_.order()) {
      if (!chosen.empty() && chosen.count(asset->name()) == 0) continue;
      index.emplace(asset->name(), nodes_.size());
      Node node;
      node.asset = asset;
      node.result.asset = asset->name();
      if (!asset->enabled()) {
        node.result.status = Status::skipped;
        node.result.error = "disabled";
      } else {
        ++remaining_;
      }
      nodes_.push_back(std::move(node));
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i].result.status == Status::skipped) continue;
      for (const std::string& dep : nodes_[i].asset->deps()) {
        auto it = index.find(dep);
        // Upstreams outside the run (unselected, disabled) are read as they are stored.
        if (it == index.end() || nodes_[it->second].result.status == Status::skipped) continue;
        nodes_[it->second].downstream.push_back(i);
        ++nodes_[i].waiting;
      }
    }
  }

  // Requires mutex_.
  void enqueue(std::size_t i) {
    ready_.push_back(i);
    publish(make_event(EventType::asset_queued, nodes_[i].asset->name()));
  }

  // Requires mutex_. Cancels `i` (if still pending) and everything downstream of it.
  void cancel(std::size_t i, const std::string& reason) {
    Node& node = nodes_[i];
    if (node.result.status != Status::pending) return;
    node.result.status = Status::canceled;
    node.result.error = reason;
    --remaining_;
    Event event = make_event(EventType::asset_canceled, node.asset->name());
    event.message = reason;
    publish(event);
    for (std::size_t d : node.downstream) cancel(d, reason);
  }

  void work() {
    std::unique_lock lock(mutex_);
    while (true) {
      cv_.wait(lock, [this] { return !ready_.empty() || remaining_ == 0; });
      if (ready_.empty()) return;  // everything finished
      const std::size_t i = ready_.front();
      ready_.pop_front();
      if (nodes_[i].result.status != Status::pending) continue;  // canceled while queued
      nodes_[i].result.status = Status::running;
      lock.unlock();
      AssetResult outcome = execute(*nodes_[i].asset);
      lock.lock();
      finish(i, std::move(outcome));
      cv_.notify_all();
    }
  }

  // Requires mutex_.
  void finish(std::size_t i, AssetResult outcome) {
    Node& node = nodes_[i];
    node.result = std::move(outcome);
    --remaining_;
    if (node.result.status == Status::succeeded) {
      for (std::size_t d : node.downstream) {
        if (--nodes_[d].waiting == 0 && nodes_[d].result.status == Status::pending) enqueue(d);
      }
      return;
    }
    const std::string& name = node.asset->name();
    for (std::size_t d : node.downstream) {
      cancel(d, fmt::format("upstream asset '{}' failed", name));
    }
    if (options_.fail_fast) {
      for (std::size_t j = 0; j < nodes_.size(); ++j) {
        cancel(j, fmt::format("asset '{}' failed and fail_fast is on", name));
      }
    }
  }

  // Computes, writes and records one asset. Never throws.
  AssetResult execute(const Asset& asset) {
    AssetResult result;
    result.asset = asset.name();
    result.status = Status::running;
    publish(make_event(EventType::asset_started, asset.name()));
    const auto started_steady = std::chrono::steady_clock::now();
    const TimePoint started = clock_.now();
    const PartitionWindow* write_window = asset.partitioning() != nullptr ? window_.get() : nullptr;
    try {
      Destination* destination = dag_.destination_of(asset);
      if (destination == nullptr) {
        throw DestinationError(fmt::format(
            "asset '{}': no destination to write to (set one on the asset or its source)",
            asset.name()));
      }
      ExecutionContext context(
          asset.name(), window_, logger_.for_asset(asset.name()),
          [this, &asset](std::string_view upstream) { return load(asset, upstream); });
      const Table rows = asset.compute(context);
      result.rows = destination->write(asset.dataset(), write_window, rows);
      Event event = make_event(EventType::destination_write, asset.name());
      event.rows = result.rows;
      event.message = destination->url();
      publish(event);
      result.status = Status::succeeded;
    } catch (...) {
      result.status = Status::failed;
      result.error = describe_exception(std::current_exception());
    }
    if (options_.store != nullptr) {
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
        options_.store->record(asset.dataset(), write_window, record);
      } catch (...) {
        result.status = Status::failed;
        result.error =
            "recording the outcome failed: " + describe_exception(std::current_exception());
      }
    }
    result.seconds = seconds_since(started_steady);
    Event event = make_event(
        result.status == Status::succeeded ? EventType::asset_completed : EventType::asset_failed,
        asset.name());
    event.rows = result.rows;
    event.seconds = result.seconds;
    event.message = result.error;
    publish(event);
    return result;
  }

  // ExecutionContext::load for `asset`: the upstream's rows for this run's window.
  Table load(const Asset& asset, std::string_view upstream_name) {
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
    Destination* destination = dag_.destination_of(*upstream);
    if (destination == nullptr) {
      throw RunError(fmt::format("asset '{}' cannot load '{}': it has no destination", asset.name(),
                                 upstream_name));
    }
    const PartitionWindow* window = upstream->partitioning() != nullptr ? window_.get() : nullptr;
    Table rows = destination->read(upstream->dataset(), window);
    Event event = make_event(EventType::destination_read, asset.name());
    event.rows = static_cast<std::int64_t>(rows.num_rows());
    event.message = fmt::format("read '{}' from {}", upstream->name(), destination->url());
    publish(event);
    return rows;
  }

  const DAG& dag_;
  const RunOptions& options_;
  const Clock& clock_;
  std::shared_ptr<const PartitionWindow> window_;
  std::string run_id_;
  std::string window_text_;
  Logger logger_;
  std::mutex log_mutex_;

  std::mutex mutex_;  // guards everything below
  std::condition_variable cv_;
  std::vector<Node> nodes_;
  std::deque<std::size_t> ready_;
  std::size_t remaining_ = 0;  // enabled nodes not yet finished or canceled
};

}  // namespace

RunResult SerialRunner::run(const DAG& dag, const PartitionWindow* window,
                            const RunOptions& options) const {
  Execution execution(dag, window, options);
  return execution.run(1);
}

ThreadedRunner::ThreadedRunner(int max_workers) : max_workers_(max_workers) {
  if (max_workers < 1) {
    throw std::invalid_argument(
        fmt::format("ThreadedRunner: max_workers must be at least 1, got {}", max_workers));
  }
}

RunResult ThreadedRunner::run(const DAG& dag, const PartitionWindow* window,
                              const RunOptions& options) const {
  Execution execution(dag, window, options);
  return execution.run(max_workers_);
}

}  // namespace interloper
