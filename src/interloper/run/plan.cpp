// The plan: each selected asset's share of a request, cut into tasks whose dependencies are
// derived from partition bounds on demand.
#include "interloper/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "interloper/store.hpp"

namespace interloper {

namespace {

// A time partitioning's own settings (granularity, start) decide how much of a time window it
// shares; that is the config's data, not a capability, so the config is read as what it is.
const TimePartitionConfig* as_time(const PartitionConfig* config) {
  return dynamic_cast<const TimePartitionConfig*>(config);
}

// The last instant inside half-open bounds, so that truncating it finds the last period.
TimePoint last_instant(const Bounds& bounds) {
  return TimePoint::from_epoch_seconds(bounds.end.epoch_seconds() - 1);
}

// The partitions of `config` overlapping `bounds`, clamped to its start; nullopt when none.
std::optional<TimePartitionWindow> time_share(const TimePartitionConfig& config,
                                              const Bounds& bounds) {
  const TimeGranularity g = config.granularity();
  TimePoint first = g.truncate(bounds.start);
  const TimePoint last = g.truncate(last_instant(bounds));
  if (config.start()) first = std::max(first, g.truncate(*config.start()));
  if (last < first) return std::nullopt;
  return TimePartitionWindow(first, last, g);
}

}  // namespace

std::unique_ptr<PartitionWindow> overlapping_window(const PartitionConfig& upstream,
                                                    const PartitionWindow& window) {
  const TimePartitionConfig* config = as_time(&upstream);
  const std::optional<TimePartitionWindow> time = window.as_time_window();
  if (config == nullptr || !time) return window.clone();
  std::optional<TimePartitionWindow> share = time_share(*config, time->bounds());
  if (!share) return nullptr;
  return std::make_unique<TimePartitionWindow>(*share);
}

Plan plan(const DAG& dag, const PartitionWindow* request, const PlanOptions& options) {
  if (options.missing_only && options.store == nullptr) {
    throw RunError("plan: missing_only needs a materialization store (options.store)");
  }
  std::unordered_set<std::string_view> chosen;
  for (const std::string& name : options.assets) chosen.insert(dag.asset(name).name());

  Plan result;
  result.scope_ = options.scope;
  if (request != nullptr) result.request_ = request->clone();
  const bool per_partition = options.scope == TaskScope::per_partition;
  std::string failures;  // every asset that cannot serve the request, one per line
  for (const Asset* asset : dag.order()) {
    if (!asset->enabled()) continue;
    if (!chosen.empty() && chosen.count(asset->name()) == 0) continue;
    Plan::Step step;
    step.asset = asset;
    step.request = result.request_;
    Plan::Shape shape;
    try {
      shape =
          Plan::share(step, request == nullptr ? nullptr : result.request_.get(), per_partition);
    } catch (const PartitionError& e) {
      failures += (failures.empty() ? "" : "\n") + std::string(e.what());
      continue;
    }
    step.tasks = asset->partitioning() == nullptr ? 1 : per_partition ? shape.partitions : 1;
    step.first_task = result.tasks_;
    result.tasks_ += step.tasks;
    result.steps_.push_back(std::move(step));
    result.shapes_.push_back(shape);
  }
  if (!failures.empty()) throw PartitionError(failures);
  result.link_steps();
  if (options.missing_only) result.skip_up_to_date(*options.store);
  return result;
}

Plan::Shape Plan::share(Step& step, const PartitionWindow* request, bool per_partition) {
  const Asset& asset = *step.asset;
  const PartitionConfig* config = asset.partitioning();
  Shape shape;
  if (config == nullptr) return shape;
  if (request == nullptr) {
    asset.check(nullptr);  // throws: a partitioned asset needs a window
    return shape;
  }
  const TimePartitionConfig* time = as_time(config);
  const std::optional<TimePartitionWindow> request_time = request->as_time_window();
  if (time != nullptr && request_time) {
    std::optional<TimePartitionWindow> share = time_share(*time, request_time->bounds());
    if (!share) {
      throw PartitionError(fmt::format("asset '{}': window {} lies entirely before start {}",
                                       asset.name(), request->to_string(),
                                       time->start()->to_string()));
    }
    if (!per_partition) asset.check(&*share);
    shape.kind = Shape::Kind::time;
    shape.granularity = time->granularity();
    shape.first = share->start();
    shape.partitions = share->size();
    step.share = std::make_shared<TimePartitionWindow>(*share);
    return shape;
  }
  if (per_partition) {
    // Each task is one partition: allow_window does not matter; kind and shape do.
    asset.check(request->partition_at(0)->as_window().get());
    asset.check(request->partition_at(request->size() - 1)->as_window().get());
  } else {
    asset.check(request);
  }
  shape.kind = Shape::Kind::other;
  shape.partitions = request->size();
  step.share = step.request;
  return shape;
}

void Plan::link_steps() {
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t s = 0; s < steps_.size(); ++s) index.emplace(steps_[s].asset->name(), s);
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    std::vector<std::size_t>& upstream = steps_[s].upstream;
    for (const std::string& dep : steps_[s].asset->deps()) {
      auto it = index.find(dep);
      if (it == index.end()) continue;  // not in the plan: read as stored
      if (std::find(upstream.begin(), upstream.end(), it->second) != upstream.end()) continue;
      upstream.push_back(it->second);
      steps_[it->second].downstream.push_back(s);
    }
    std::sort(upstream.begin(), upstream.end());
  }
  for (Step& step : steps_) std::sort(step.downstream.begin(), step.downstream.end());
}

namespace {

// The tasks of a step (by index) that its asset's current definition materialized: partitions a
// changed definition wrote are stale and run again.
std::vector<PartitionRange> materialized_tasks(const Plan::Step& step, TaskScope scope,
                                               PartitionStates& store) {
  const std::string current = step.asset->definition_fingerprint();
  if (step.share == nullptr) {
    std::optional<MaterializationRecord> latest = store.latest(step.asset->dataset(), nullptr);
    if (latest && latest->status == MaterializationStatus::materialized &&
        (latest->definition.empty() || latest->definition == current)) {
      return {{0, 0}};
    }
    return {};
  }
  WindowStatus status = store.status(step.asset->dataset(), *step.share);
  if (scope == TaskScope::per_partition) return status.fresh(current);
  if (status.missing.empty() && status.failed.empty() && status.stale(current).empty()) {
    return {{0, 0}};
  }
  return {};
}

}  // namespace

void Plan::skip_up_to_date(PartitionStates& store) {
  // Steps come upstream first, so the upstream skipped ranges are final when a step is decided.
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    std::size_t next = 0;
    for (const PartitionRange& range : materialized_tasks(step, scope_, store)) {
      for (std::size_t i = std::max(range.first, next); i <= range.last && i < step.tasks; ++i) {
        // Up to date unless it reads a task that runs.
        const bool reads_running =
            std::any_of(step.upstream.begin(), step.upstream.end(), [&](std::size_t up) {
              std::optional<PartitionRange> reads = related_index(s, i, up);
              return reads && !all_skipped(up, *reads);
            });
        if (reads_running) continue;
        if (!step.skipped.empty() && step.skipped.back().last + 1 == i) {
          step.skipped.back().last = i;
        } else {
          step.skipped.push_back({i, i});
        }
        ++skipped_;
      }
      next = range.last + 1;
    }
  }
}

std::size_t Plan::step_of(std::size_t task) const {
  if (task >= tasks_) {
    throw std::out_of_range(fmt::format("plan: task {} of {}", task, tasks_));
  }
  auto it = std::upper_bound(steps_.begin(), steps_.end(), task,
                             [](std::size_t t, const Step& s) { return t < s.first_task; });
  // Steps without tasks share a first_task with the next one; upper_bound skips past them.
  return static_cast<std::size_t>(it - steps_.begin()) - 1;
}

bool Plan::index_skipped(std::size_t step, std::size_t index) const {
  const auto& ranges = steps_[step].skipped;
  auto it = std::upper_bound(ranges.begin(), ranges.end(), index,
                             [](std::size_t i, const PartitionRange& r) { return i < r.first; });
  return it != ranges.begin() && std::prev(it)->last >= index;
}

bool Plan::all_skipped(std::size_t step, PartitionRange range) const {
  const auto& ranges = steps_[step].skipped;
  auto it = std::upper_bound(ranges.begin(), ranges.end(), range.first,
                             [](std::size_t i, const PartitionRange& r) { return i < r.first; });
  return it != ranges.begin() && std::prev(it)->last >= range.last;
}

bool Plan::runs(std::size_t task) const {
  const std::size_t s = step_of(task);
  return !index_skipped(s, task - steps_[s].first_task);
}

std::shared_ptr<const PartitionWindow> Plan::window(std::size_t task) const {
  const std::size_t s = step_of(task);
  const Step& step = steps_[s];
  if (step.share == nullptr) return step.request;
  if (scope_ == TaskScope::per_asset) return step.share;
  const std::size_t index = task - step.first_task;
  if (shapes_[s].kind == Shape::Kind::time) {
    const Shape& shape = shapes_[s];
    const TimePoint start =
        shape.granularity.advance(shape.first, static_cast<std::int64_t>(index));
    return std::make_shared<TimePartitionWindow>(start, start, shape.granularity);
  }
  return step.share->partition_at(index)->as_window();
}

Bounds Plan::bounds(std::size_t step, std::size_t index) const {
  const Shape& shape = shapes_[step];
  if (scope_ == TaskScope::per_asset) {
    return {shape.first,
            shape.granularity.advance(shape.first, static_cast<std::int64_t>(shape.partitions))};
  }
  switch (shape.granularity.unit()) {
    case TimeGranularity::Unit::hour:
    case TimeGranularity::Unit::day: {
      const std::int64_t length =
          shape.granularity.unit() == TimeGranularity::Unit::hour ? 3600 : 86400;
      const std::int64_t start =
          shape.first.epoch_seconds() + static_cast<std::int64_t>(index) * length;
      return {TimePoint::from_epoch_seconds(start), TimePoint::from_epoch_seconds(start + length)};
    }
    default: {
      const TimePoint start =
          shape.granularity.advance(shape.first, static_cast<std::int64_t>(index));
      return {start, shape.granularity.advance(start, 1)};
    }
  }
}

std::optional<PartitionRange> Plan::overlapping(std::size_t step, Bounds b) const {
  const Shape& shape = shapes_[step];
  const std::int64_t n = static_cast<std::int64_t>(shape.partitions);
  std::int64_t lo = shape.granularity.periods_between(shape.first, b.start);
  std::int64_t hi = shape.granularity.periods_between(shape.first, last_instant(b));
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min<std::int64_t>(hi, n - 1);
  if (lo > hi) return std::nullopt;
  if (scope_ == TaskScope::per_asset) return PartitionRange{0, 0};
  return PartitionRange{static_cast<std::size_t>(lo), static_cast<std::size_t>(hi)};
}

std::optional<PartitionRange> Plan::related_index(std::size_t step, std::size_t index,
                                                  std::size_t other) const {
  const Shape& from = shapes_[step];
  const Shape& to = shapes_[other];
  const std::size_t other_tasks = steps_[other].tasks;
  if (other_tasks == 0) return std::nullopt;
  if (to.kind == Shape::Kind::none || from.kind == Shape::Kind::none) {
    return PartitionRange{0, other_tasks - 1};
  }
  if (from.kind == Shape::Kind::time && to.kind == Shape::Kind::time) {
    return overlapping(other, bounds(step, index));
  }
  // The same list (or another kind the DAG accepted as the same shape): the same partition.
  if (index >= other_tasks) return std::nullopt;
  return PartitionRange{index, index};
}

std::optional<PartitionRange> Plan::related(std::size_t task, std::size_t other) const {
  const std::size_t s = step_of(task);
  return related_index(s, task - steps_[s].first_task, other);
}

std::int64_t Plan::recency(std::size_t task) const {
  const std::size_t s = step_of(task);
  if (shapes_[s].kind != Shape::Kind::time) {
    if (shapes_[s].kind == Shape::Kind::other && scope_ == TaskScope::per_partition) {
      // Declared order: the last value counts as the newest.
      return static_cast<std::int64_t>(task - steps_[s].first_task);
    }
    return std::numeric_limits<std::int64_t>::max();
  }
  return bounds(s, task - steps_[s].first_task).start.epoch_seconds();
}

std::vector<PartitionRange> Plan::running(std::size_t step) const {
  std::vector<PartitionRange> out;
  std::size_t next = 0;
  const std::size_t n = steps_[step].tasks;
  for (const PartitionRange& skip : steps_[step].skipped) {
    if (skip.first > next) out.push_back({next, skip.first - 1});
    next = skip.last + 1;
  }
  if (next < n) out.push_back({next, n - 1});
  return out;
}

}  // namespace interloper
