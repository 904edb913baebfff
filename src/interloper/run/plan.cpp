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
  const bool per_partition = options.scope == TaskScope::per_partition;
  std::shared_ptr<const PartitionWindow> request_copy;
  if (request != nullptr) request_copy = request->clone();
  result.request_ = request_copy;
  const std::optional<TimePartitionWindow> request_time =
      request ? request->as_time_window() : std::nullopt;

  std::unordered_map<std::string_view, std::size_t> index;
  std::string failures;
  auto fail = [&](const std::string& message) {
    if (!failures.empty()) failures += '\n';
    failures += message;
  };
  for (const Asset* asset : dag.order()) {
    if (!asset->enabled()) continue;
    if (!chosen.empty() && chosen.count(asset->name()) == 0) continue;
    Plan::Step step;
    Plan::Shape shape;
    step.asset = asset;
    step.request = request_copy;
    const PartitionConfig* config = asset->partitioning();
    try {
      if (config == nullptr) {
        step.tasks = 1;
      } else if (request == nullptr) {
        asset->check(nullptr);  // throws: a partitioned asset needs a window
      } else if (const TimePartitionConfig* time = as_time(config);
                 time != nullptr && request_time) {
        std::optional<TimePartitionWindow> share = time_share(*time, request_time->bounds());
        if (!share) {
          throw PartitionError(fmt::format("asset '{}': window {} lies entirely before start {}",
                                           asset->name(), request->to_string(),
                                           time->start()->to_string()));
        }
        if (!per_partition) asset->check(&*share);
        shape.kind = Plan::Shape::Kind::time;
        shape.granularity = time->granularity();
        shape.first = share->start();
        shape.partitions = share->size();
        step.share = std::make_shared<TimePartitionWindow>(*share);
      } else {
        if (per_partition) {
          // Each task is one partition: allow_window does not matter; kind and shape do.
          asset->check(request->partition_at(0)->as_window().get());
          asset->check(request->partition_at(request->size() - 1)->as_window().get());
        } else {
          asset->check(request);
        }
        shape.kind = Plan::Shape::Kind::other;
        shape.partitions = request->size();
        step.share = request_copy;
      }
    } catch (const PartitionError& e) {
      fail(e.what());
      continue;
    }
    if (config != nullptr) step.tasks = per_partition ? shape.partitions : 1;
    step.first_task = result.tasks_;
    result.tasks_ += step.tasks;
    index.emplace(asset->name(), result.steps_.size());
    result.steps_.push_back(std::move(step));
    result.shapes_.push_back(shape);
  }
  if (!failures.empty()) throw PartitionError(failures);

  for (std::size_t s = 0; s < result.steps_.size(); ++s) {
    for (const std::string& dep : result.steps_[s].asset->deps()) {
      auto it = index.find(dep);
      if (it == index.end()) continue;  // not in the plan: read as stored
      if (std::find(result.steps_[s].upstream.begin(), result.steps_[s].upstream.end(),
                    it->second) != result.steps_[s].upstream.end()) {
        continue;
      }
      result.steps_[s].upstream.push_back(it->second);
      result.steps_[it->second].downstream.push_back(s);
    }
    std::sort(result.steps_[s].upstream.begin(), result.steps_[s].upstream.end());
  }
  for (Plan::Step& step : result.steps_) std::sort(step.downstream.begin(), step.downstream.end());

  if (!options.missing_only) return result;

  // Up to date: materialized, and reading nothing that runs. Steps come upstream first, so the
  // upstream skipped ranges are final when a step is decided.
  for (std::size_t s = 0; s < result.steps_.size(); ++s) {
    Plan::Step& step = result.steps_[s];
    // Materialized by the asset's current definition: partitions a changed definition wrote
    // are stale and run again.
    const std::string current = step.asset->definition_fingerprint();
    std::vector<PartitionRange> materialized;
    if (step.share == nullptr) {
      std::optional<MaterializationRecord> latest =
          options.store->latest(step.asset->dataset(), nullptr);
      if (latest && latest->status == MaterializationStatus::materialized &&
          (latest->definition.empty() || latest->definition == current)) {
        materialized.push_back({0, 0});
      }
    } else if (per_partition) {
      materialized = options.store->status(step.asset->dataset(), *step.share).fresh(current);
    } else {
      WindowStatus status = options.store->status(step.asset->dataset(), *step.share);
      if (status.missing.empty() && status.failed.empty() && status.stale(current).empty()) {
        materialized.push_back({0, 0});
      }
    }
    std::size_t next = 0;
    for (const PartitionRange& range : materialized) {
      for (std::size_t i = std::max(range.first, next); i <= range.last && i < step.tasks; ++i) {
        bool fresh = true;
        for (std::size_t up : step.upstream) {
          std::optional<PartitionRange> reads = result.related_index(s, i, up);
          if (reads && !result.all_skipped(up, *reads)) {
            fresh = false;
            break;
          }
        }
        if (!fresh) continue;
        if (!step.skipped.empty() && step.skipped.back().last + 1 == i) {
          step.skipped.back().last = i;
        } else {
          step.skipped.push_back({i, i});
        }
        ++result.skipped_;
      }
      next = range.last + 1;
    }
  }
  return result;
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
