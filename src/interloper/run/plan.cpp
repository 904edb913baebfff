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

std::size_t request_tasks(const std::vector<PartitionRange>& requested) {
  std::size_t n = 0;
  for (const PartitionRange& r : requested) n += r.last - r.first + 1;
  return n;
}

}  // namespace

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
    PartitionSpan span;
    try {
      span = Plan::share(step, request == nullptr ? nullptr : result.request_.get(), per_partition);
    } catch (const PartitionError& e) {
      failures += (failures.empty() ? "" : "\n") + std::string(e.what());
      continue;
    }
    // A partitioned asset planned without a window has no task in a backfill.
    const std::size_t partitions = span.window() == nullptr ? 0 : span.size();
    step.tasks = asset->partitioning() == nullptr ? 1 : per_partition ? partitions : 1;
    step.first_task = result.tasks_;
    result.tasks_ += step.tasks;
    result.requested_.push_back({0, step.tasks == 0 ? 0 : step.tasks - 1});
    result.steps_.push_back(std::move(step));
    result.spans_.push_back(std::move(span));
  }
  if (!failures.empty()) throw PartitionError(failures);
  if (per_partition) result.grow_shares();
  result.link_steps();
  result.find_reading_assets(dag);
  if (options.missing_only) {
    result.skip_up_to_date(*options.store, true);
  } else if (options.store != nullptr && result.tasks_ != request_tasks(result.requested_)) {
    result.skip_up_to_date(*options.store, false);
  }
  return result;
}

PartitionSpan Plan::share(Step& step, const PartitionWindow* request, bool per_partition) {
  const Asset& asset = *step.asset;
  const PartitionConfig* config = asset.partitioning();
  if (config == nullptr) return PartitionSpan();
  if (request == nullptr) {
    asset.check(nullptr);  // throws: a partitioned asset needs a window
    return PartitionSpan();
  }
  std::shared_ptr<const PartitionWindow> own;
  try {
    own = config->share(*request);
  } catch (const PartitionError& e) {
    throw PartitionError(fmt::format("asset '{}': {}", asset.name(), e.what()));
  }
  if (per_partition) {
    // Each task is one partition: allow_window does not matter; kind and shape do.
    asset.check(own->partition_at(0)->as_window().get());
    asset.check(own->partition_at(own->size() - 1)->as_window().get());
  } else {
    asset.check(own.get());
    if (own->size() > 1 && asset.mapping(asset.name()).reads_only_earlier()) {
      throw PartitionError(fmt::format(
          "asset '{}': it reads its own earlier partitions ({}), so it runs one partition at a "
          "time (backfill), not over the window {}",
          asset.name(), asset.mapping(asset.name()).to_string(), own->to_string()));
    }
  }
  // A share that is the request itself is kept as the request, so tasks see the same window.
  step.share = own->same_partitions(*request) ? step.request : std::move(own);
  return PartitionSpan(step.share);
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
  reads_.resize(steps_.size());
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    for (std::size_t up : steps_[s].upstream) {
      const Asset& asset = *steps_[s].asset;
      const Asset& upstream = *steps_[up].asset;
      reads_[s].push_back(PartitionMapping::between(upstream.partitioning(), asset.partitioning(),
                                                    asset.mapping(upstream.name())));
    }
  }
}

void Plan::find_reading_assets(const DAG& dag) {
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t s = 0; s < steps_.size(); ++s) index.emplace(steps_[s].asset->name(), s);
  reading_.assign(steps_.size(), {});
  for (const Asset* asset : dag.order()) {
    for (const std::string& dep : asset->deps()) {
      auto it = index.find(dep);
      if (it == index.end()) continue;
      std::vector<const Asset*>& readers = reading_[it->second];
      if (readers.empty() || readers.back() != asset) readers.push_back(asset);
    }
  }
}

bool Plan::computes(std::size_t step, const PartitionWindow& window) const {
  const PartitionSpan& span = spans_[step];
  const std::optional<TimePartitionWindow> time = window.as_time_window();
  if (!span.timed() || !time) return false;
  const std::optional<PartitionRange> range = span.overlapping(time->bounds());
  if (!range || range->last - range->first + 1 != window.size()) return false;
  if (scope_ == TaskScope::per_asset) return !index_skipped(step, 0);
  const auto& skipped = steps_[step].skipped;
  auto it = std::upper_bound(skipped.begin(), skipped.end(), range->last,
                             [](std::size_t i, const PartitionRange& r) { return i < r.first; });
  return it == skipped.begin() || std::prev(it)->last < range->first;
}

std::optional<std::size_t> Plan::step_of_asset(const Asset& asset) const {
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    if (steps_[s].asset == &asset) return s;
  }
  return std::nullopt;
}

void Plan::grow_shares() {
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t s = 0; s < steps_.size(); ++s) index.emplace(steps_[s].asset->name(), s);
  // Grows step u's share for what step s reads of it.
  auto grow = [this](std::size_t u, std::size_t s) {
    if (steps_[s].share == nullptr || steps_[u].share == nullptr) return;
    const Asset& asset = *steps_[s].asset;
    const Asset& upstream = *steps_[u].asset;
    const PartitionMapping mapping = PartitionMapping::between(
        upstream.partitioning(), asset.partitioning(), asset.mapping(upstream.name()));
    std::shared_ptr<const PartitionWindow> grown =
        mapping.grown_share(*steps_[u].share, *steps_[s].share, u == s);
    if (grown == nullptr) return;
    const PartitionSpan before = spans_[u];
    spans_[u] = PartitionSpan(grown);
    const std::size_t moved = spans_[u].overlapping(before.bounds(before.all()))->first;
    requested_[u] = {requested_[u].first + moved, requested_[u].last + moved};
    steps_[u].share = std::move(grown);
  };
  // Downstream first, so a share is final before it grows the shares it reads; an asset's own
  // earlier partitions before its upstreams.
  for (std::size_t s = steps_.size(); s-- > 0;) {
    const std::vector<std::string>& deps = steps_[s].asset->deps();
    if (std::find(deps.begin(), deps.end(), steps_[s].asset->name()) != deps.end()) grow(s, s);
    for (const std::string& dep : deps) {
      auto it = index.find(dep);
      if (it != index.end() && it->second != s) grow(it->second, s);
    }
  }
  tasks_ = 0;
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    if (step.share != nullptr) step.tasks = spans_[s].size();
    step.first_task = tasks_;
    tasks_ += step.tasks;
  }
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

void Plan::skip_up_to_date(PartitionStates& store, bool all) {
  // Steps come upstream first, so the upstream skipped ranges are final when a step is decided.
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    std::size_t next = 0;
    for (const PartitionRange& range : materialized_tasks(step, scope_, store)) {
      for (std::size_t i = std::max(range.first, next); i <= range.last && i < step.tasks; ++i) {
        if (!all && i >= requested_[s].first && i <= requested_[s].last) continue;
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
  return spans_[s].partition_window(task - step.first_task);
}

std::optional<PartitionRange> Plan::related_index(std::size_t step, std::size_t index,
                                                  std::size_t other, bool reads) const {
  const std::size_t other_tasks = steps_[other].tasks;
  if (other_tasks == 0) return std::nullopt;
  // One task over the whole share of an asset reading itself reads what is stored.
  if (other == step && scope_ == TaskScope::per_asset) return std::nullopt;
  const PartitionSpan& own = spans_[step];
  const PartitionSpan& theirs = spans_[other];
  // A task covers one partition of its span (per_partition) or the whole span (per_asset).
  const bool whole = scope_ == TaskScope::per_asset;
  const PartitionRange range = whole ? own.all() : PartitionRange{index, index};
  std::optional<PartitionRange> found;
  const std::vector<std::size_t>& ups = steps_[step].upstream;
  if (auto it = std::lower_bound(ups.begin(), ups.end(), other);
      reads && it != ups.end() && *it == other) {
    found =
        reads_[step][static_cast<std::size_t>(it - ups.begin())].upstream_of(own, range, theirs);
  } else {
    const std::vector<std::size_t>& theirs_up = steps_[other].upstream;
    auto at = std::lower_bound(theirs_up.begin(), theirs_up.end(), step);
    if (at == theirs_up.end() || *at != step) return std::nullopt;  // not an edge
    found = reads_[other][static_cast<std::size_t>(at - theirs_up.begin())].downstream_of(
        own, range, theirs);
  }
  if (!found || whole) return found ? std::optional<PartitionRange>(PartitionRange{0, 0}) : found;
  return found;
}

std::optional<PartitionRange> Plan::related(std::size_t task, std::size_t other) const {
  const std::size_t s = step_of(task);
  return related_index(s, task - steps_[s].first_task, other);
}

std::optional<PartitionRange> Plan::readers(std::size_t task, std::size_t other) const {
  const std::size_t s = step_of(task);
  return related_index(s, task - steps_[s].first_task, other, false);
}

std::int64_t Plan::recency(std::size_t task) const {
  const std::size_t s = step_of(task);
  const PartitionSpan& span = spans_[s];
  const std::size_t index = task - steps_[s].first_task;
  if (span.timed()) {
    const PartitionRange range =
        scope_ == TaskScope::per_asset ? span.all() : PartitionRange{index, index};
    return span.bounds(range).start.epoch_seconds();
  }
  if (span.window() != nullptr && scope_ == TaskScope::per_partition) {
    // Declared order: the last value counts as the newest.
    return static_cast<std::int64_t>(index);
  }
  return std::numeric_limits<std::int64_t>::max();
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
