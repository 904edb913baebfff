// The execution of one task: computing it, writing its rows, recording its outcome, and
// claiming it first when claims are on.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>

#include "interloper/destination.hpp"
#include "interloper/mapping.hpp"
#include "interloper/plan.hpp"
#include "interloper/run.hpp"
#include "interloper/run/engine.hpp"
#include "interloper/store.hpp"

namespace interloper::detail {

Event Engine::make_event(EventType type, std::string asset, const std::string& window) const {
  Event event;
  event.type = type;
  event.time = clock_.now();
  event.run_id = run_id_;
  event.asset = std::move(asset);
  event.window = window;
  return event;
}

void Engine::publish(const Event& event) const {
  if (options_.run.events == nullptr) return;
  try {
    options_.run.events->publish(event);
  } catch (...) {
    // A failing subscriber must not take the run (or a worker thread) down.
  }
}

// Claims the task's (asset, partition) when claims are on, then executes it. Never throws.
TaskResult Engine::claim_and_execute(std::size_t task, Unrun& unrun) {
  MaterializationStore* store = options_.run.store;
  const Asset& asset = *plan_.steps()[plan_.step_of(task)].asset;
  if (owner_.empty() || asset.partitioning() == nullptr) return execute(task);
  const std::shared_ptr<const PartitionWindow> window = plan_.window(task);
  const std::vector<DatasetRef> datasets{asset.dataset()};
  TaskResult result;
  result.asset = asset.name();
  result.window = window->to_string();
  try {
    if (std::optional<Claim> held = claim_ahead(task)) {
      unrun = Unrun::claimed_elsewhere;
      result.status = Status::skipped;
      result.error = held->holder.empty()
                         ? fmt::format("claimed by {}", held->owner)
                         : fmt::format("claimed by {}: {}", held->owner, held->holder);
      return result;
    }
    // Only a task that runs for itself can have been finished meanwhile: one that runs
    // because an upstream task of this plan runs is stale whatever the store says.
    if (options_.missing_only && root_[task]) {
      WindowStatus status = store->status(asset.dataset(), *window);
      if (status.missing.empty() && status.failed.empty() &&
          status.stale(asset.definition_fingerprint()).empty()) {
        store->release(datasets, window.get(), owner_);
        release_claim(task);
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
  release_claim(task);
  try {
    // After the task's record: a batch writes its records before its releases.
    if (batch_) {
      batch_->release({datasets, window});
    } else {
      store->release(datasets, window.get(), owner_);
    }
  } catch (...) {
    // Left to lapse with its lease.
  }
  return result;
}

std::optional<Claim> Engine::claim_ahead(std::size_t task) {
  constexpr std::size_t kAhead = 32;  // tasks claimed in one store call
  std::vector<std::size_t> group{task};
  {
    std::lock_guard lock(mutex_);
    if (claimed_[task] != 0) return std::nullopt;
    // The next ready tasks: taken off the heap and put back as they were.
    std::vector<Ready> taken;
    while (batch_ && !ready_.empty() && taken.size() < kAhead) {
      std::pop_heap(ready_.begin(), ready_.end());
      taken.push_back(ready_.back());
      ready_.pop_back();
      const std::size_t t = taken.back().task;
      if (state_[t] == Status::pending && claimed_[t] == 0 &&
          plan_.steps()[plan_.step_of(t)].asset->partitioning() != nullptr) {
        group.push_back(t);
      }
    }
    for (const Ready& r : taken) {
      ready_.push_back(r);
      std::push_heap(ready_.begin(), ready_.end());
    }
  }
  std::vector<ClaimRequest> requests;
  requests.reserve(group.size());
  for (std::size_t t : group) {
    requests.push_back({{plan_.steps()[plan_.step_of(t)].asset->dataset()}, plan_.window(t)});
  }
  const TimePoint now = clock_.now();
  const Claim mine{owner_, TimePoint(now.seconds() + options_.claim_lease)};
  std::vector<std::optional<Claim>> held = options_.run.store->claim_all(requests, mine, now);
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (!held[i]) claimed_[group[i]] = 1;
  }
  return held[0];
}

void Engine::release_claim(std::size_t task) {
  std::lock_guard lock(mutex_);
  claimed_[task] = 0;
}

void Engine::release_unrun() {
  if (!batch_ || owner_.empty()) return;
  for (std::size_t t = 0; t < claimed_.size(); ++t) {
    if (claimed_[t] == 0) continue;
    claimed_[t] = 0;
    batch_->release({{plan_.steps()[plan_.step_of(t)].asset->dataset()}, plan_.window(t)});
  }
}

void Engine::unrecorded(std::size_t task, const std::string& error) {
  std::lock_guard lock(mutex_);
  const std::string text = "recording the outcome failed: " + error;
  if (state_[task] == Status::running) {
    unrecorded_[task] = text;  // finish() makes it a failure
    return;
  }
  TaskResult failure;
  failure.asset = plan_.steps()[plan_.step_of(task)].asset->name();
  std::shared_ptr<const PartitionWindow> window = plan_.window(task);
  failure.window = window ? window->to_string() : std::string();
  failure.status = Status::failed;
  failure.error = text;
  if (state_[task] == Status::succeeded) {
    state_[task] = Status::failed;
    --result_.tasks.succeeded;
    ++result_.tasks.failed;
    report(failure);
    result_.failures.push_back(std::move(failure));
    return;
  }
  for (TaskResult& f : result_.failures) {
    if (f.asset == failure.asset && f.window == failure.window) f.error = text;
  }
}

// Requires mutex_.
void Engine::check_recorded(std::size_t task, TaskResult& outcome) {
  if (unrecorded_.empty()) return;
  auto it = unrecorded_.find(task);
  if (it == unrecorded_.end()) return;
  outcome.status = Status::failed;
  outcome.error = std::move(it->second);
  unrecorded_.erase(it);
}

// Computes, writes and records one task. Never throws.
TaskResult Engine::execute(std::size_t task) {
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
    compute_and_write(task, asset, window, write_window, result);
    result.status = Status::succeeded;
  } catch (...) {
    result.status = Status::failed;
    // A run being stopped has interrupted the task (its command was terminated): that, not
    // the command's death, is what happened to it.
    result.error =
        stopping() ? std::string(kInterrupted) : describe_exception(std::current_exception());
  }
  if (options_.run.store != nullptr) {
    record_outcome(task, asset, write_window != nullptr ? window : nullptr, started, result);
    if (result.status == Status::succeeded) mark_readers_stale(task, result);
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

void Engine::compute_and_write(std::size_t task, const Asset& asset,
                               const std::shared_ptr<const PartitionWindow>& window,
                               const PartitionWindow* write_window, TaskResult& result) {
  check_upstreams(task);
  Destination* destination = dag_.destination_of(asset);
  if (destination == nullptr) {
    throw DestinationError(
        fmt::format("asset '{}': no destination to write to (set one on the asset or its source)",
                    asset.name()));
  }
  // Batches the asset emits go to the writer as they come; the window is replaced only when the
  // asset has returned, so a failure leaves it as it was.
  std::unique_ptr<WindowWriter> writer = destination->open_writer(asset.dataset(), write_window);
  ExecutionContext context(
      asset.name(), window, logger_.for_asset(asset.name()),
      [this, &asset, &result, window](std::string_view upstream) {
        return load(asset, window.get(), result.window, upstream);
      },
      [&writer](const Table& batch) { writer->append(batch); },
      [this, &asset, window](std::string_view upstream) {
        return reads_of(asset, window.get(), upstream).reads;
      });
  result.rows = writer->append_and_commit(asset.compute(context));
  if (options_.run.events != nullptr) {
    Event event = make_event(EventType::destination_write, asset.name(), result.window);
    event.rows = result.rows;
    event.message = destination->url();
    publish(event);
  }
}

void Engine::record_outcome(std::size_t task, const Asset& asset,
                            const std::shared_ptr<const PartitionWindow>& write_window,
                            TimePoint started, TaskResult& result) {
  MaterializationRecord record;
  record.asset = asset.name();
  record.status = result.status == Status::succeeded ? MaterializationStatus::materialized
                                                     : MaterializationStatus::failed;
  record.rows = result.rows;
  record.run_id = run_id_;
  record.started = started;
  record.finished = clock_.now();
  record.error = result.error;
  if (record.status == MaterializationStatus::materialized) {
    record.definition = asset.definition_fingerprint();
  }
  try {
    if (batch_) {
      batch_->record(task, {asset.dataset(), write_window, std::move(record)});
    } else {
      options_.run.store->record(asset.dataset(), write_window.get(), record);
    }
  } catch (...) {
    result.status = Status::failed;
    result.error = "recording the outcome failed: " + describe_exception(std::current_exception());
  }
}

Engine::Reads Engine::reads_of(const Asset& asset, const PartitionWindow* window,
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
  const PartitionMapping mapping = PartitionMapping::between(
      upstream->partitioning(), asset.partitioning(), asset.mapping(upstream_name));
  if (!mapping.reads_whole() && window != nullptr) {
    result.reads.whole = false;
    result.reads.window = mapping.upstream_window(*window);
  }
  return result;
}

void Engine::check_upstreams(std::size_t task) const {
  MaterializationStore* store = options_.run.store;
  const std::size_t step = plan_.step_of(task);
  const Asset& asset = *plan_.steps()[step].asset;
  if (store == nullptr || !asset.require_upstream()) return;
  const std::shared_ptr<const PartitionWindow> window = plan_.window(task);
  const std::vector<std::size_t>& planned = plan_.steps()[step].upstream;
  std::string gaps;
  for (const std::string& name : asset.deps()) {
    auto in_plan = std::find_if(planned.begin(), planned.end(), [&](std::size_t s) {
      return plan_.steps()[s].asset->name() == name;
    });
    // A plan covers what the overlap reads of its upstreams (as it always has).
    if (in_plan != planned.end() && asset.mapping(name).is_overlap()) continue;
    const ExecutionContext::UpstreamReads reads = reads_of(asset, window.get(), name).reads;
    std::size_t missing = 0, total = 0;
    if (reads.dataset.partitioning == nullptr) {
      if (in_plan != planned.end()) continue;
      std::optional<MaterializationRecord> record = store->latest(reads.dataset, nullptr);
      total = 1;
      missing = record && record->status == MaterializationStatus::materialized ? 0 : 1;
    } else if (!reads.whole && reads.window != nullptr) {
      // Tasks of the plan were waited for; what it does not cover must be stored.
      std::vector<std::unique_ptr<PartitionWindow>> parts;
      const PartitionWindow* covered =
          in_plan == planned.end() ? nullptr : plan_.steps()[*in_plan].share.get();
      if (in_plan != planned.end() && covered == nullptr) continue;
      if (covered != nullptr) {
        parts = PartitionMapping::outside(*reads.window, *covered);
      } else {
        parts.push_back(reads.window->clone());
      }
      total = reads.window->size();
      for (const auto& part : parts) {
        const WindowStatus status = store->status(reads.dataset, *part);
        missing += status.count(status.missing) + status.count(status.failed);
      }
    }
    // A partitioned upstream read whole (by an unpartitioned asset, or all) is read as stored.
    if (missing == 0) continue;
    if (!gaps.empty()) gaps += "; ";
    gaps += reads.dataset.partitioning == nullptr
                ? fmt::format("upstream '{}': not materialized", name)
                : fmt::format("upstream '{}': {} of {} partitions missing", name, missing, total);
  }
  if (!gaps.empty()) throw RunError(gaps);
}

void Engine::mark_readers_stale(std::size_t task, TaskResult& result) const {
  // What a stale partition's definition reads as: not the current one, so it runs again.
  static const std::string kUpstreamChanged = "upstream re-materialized";
  MaterializationStore* store = options_.run.store;
  const std::size_t step = plan_.step_of(task);
  const Asset& asset = *plan_.steps()[step].asset;
  const std::shared_ptr<const PartitionWindow> window = plan_.window(task);
  if (window == nullptr || asset.partitioning() == nullptr) return;
  try {
    for (const Asset* reader : plan_.reading_assets(step)) {
      if (reader->partitioning() == nullptr) continue;
      const PartitionMapping mapping = PartitionMapping::between(
          asset.partitioning(), reader->partitioning(), reader->mapping(asset.name()));
      const std::unique_ptr<PartitionWindow> readers =
          mapping.downstream_window(*window, *reader->partitioning());
      if (readers == nullptr) continue;
      const std::optional<std::size_t> in_plan = plan_.step_of_asset(*reader);
      if (in_plan && plan_.computes(*in_plan, *readers)) continue;  // refreshed by this run
      const WindowStatus status = store->status(reader->dataset(), *readers);
      const std::vector<PartitionRange> fresh = status.fresh(reader->definition_fingerprint());
      if (fresh.empty()) continue;
      // The store keeps a materialized partition's state and definition only.
      MaterializationRecord record;
      record.asset = reader->name();
      record.status = MaterializationStatus::materialized;
      record.run_id = run_id_;
      record.started = record.finished = clock_.now();
      record.definition = kUpstreamChanged;
      for (const PartitionRange& range : fresh) {
        for (std::size_t i = range.first; i <= range.last; ++i) {
          const std::unique_ptr<PartitionWindow> one = readers->partition_at(i)->as_window();
          if (in_plan && plan_.computes(*in_plan, *one)) continue;
          store->record(reader->dataset(), one.get(), record);
        }
      }
    }
  } catch (...) {
    result.status = Status::failed;
    result.error =
        "marking the readers stale failed: " + describe_exception(std::current_exception());
  }
}

// ExecutionContext::load: the rows reads_of() names.
Table Engine::load(const Asset& asset, const PartitionWindow* window,
                   const std::string& window_text, std::string_view upstream_name) {
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

}  // namespace interloper::detail
