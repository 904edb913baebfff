// MemoryStore: partition states in memory, as run-length ordinal ranges.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "interloper/store/range_map.hpp"
#include "interloper/store.hpp"

namespace interloper {

namespace {

// The state of a partition: materialized partitions share nothing but their status; failed
// ones share the record of the failure, and ranges merge only when they share it.
struct Cell {
  MaterializationStatus status;
  std::shared_ptr<const MaterializationRecord> failure;  // null when materialized
  std::string definition;                                 // of a materialized partition
  friend bool operator==(const Cell&, const Cell&) = default;
};

Cell cell_of(const MaterializationRecord& record) {
  if (record.status == MaterializationStatus::materialized) {
    return {record.status, nullptr, record.definition};
  }
  auto failure = std::make_shared<MaterializationRecord>(record);
  failure->error = bound_error(failure->error);
  return {record.status, std::move(failure), ""};
}

MaterializationRecord record_of(const std::string& asset, const Cell& cell) {
  if (cell.failure) return *cell.failure;
  MaterializationRecord record;
  record.asset = asset;
  record.status = cell.status;
  record.definition = cell.definition;
  return record;
}

struct AssetRecords {
  detail::RangeMap<Cell> ranges;  // ordinal -> state
  // Kinds without arithmetic ordinals get one per key, in first-seen order.
  std::unordered_map<std::string, std::int64_t> key_ordinals;
  MaterializationRecord last;  // the last record given, of any partition

  std::int64_t ordinal_of_key(const std::string& key) {
    auto [it, inserted] = key_ordinals.emplace(key, static_cast<std::int64_t>(key_ordinals.size()));
    return it->second;
  }
};

std::string dataset_key(const DatasetRef& dataset) {
  std::string key = dataset.source;
  key += '\0';
  key += dataset.asset;
  return key;
}

}  // namespace

// One claimed span of one dataset.
struct HeldClaim {
  std::string dataset;  // dataset_key
  std::string scope;
  detail::ClaimSpan span;
  Claim claim;

  bool overlaps(const std::string& d, const std::string& sc, const detail::ClaimSpan& other) const {
    return dataset == d && scope == sc && span.key == other.key && span.first <= other.last &&
           span.last >= other.first;
  }
};

struct MemoryStore::State {
  std::mutex mutex;
  std::map<std::string, AssetRecords> assets;
  std::vector<HeldClaim> claims;
  std::vector<RunRecord> runs;  // oldest first
};

MemoryStore::MemoryStore() : state_(std::make_unique<State>()) {}
MemoryStore::~MemoryStore() = default;

void MemoryStore::record(const DatasetRef& dataset, const PartitionWindow* window,
                         const MaterializationRecord& record) {
  std::optional<std::pair<std::int64_t, std::int64_t>> ordinals;
  if (window == nullptr || dataset.partitioning == nullptr) {
    ordinals = std::make_pair(std::int64_t{0}, std::int64_t{0});
  } else {
    ordinals = detail::window_ordinals(dataset, *window);
  }
  std::lock_guard lock(state_->mutex);
  AssetRecords& stored = state_->assets[dataset_key(dataset)];
  stored.last = record;
  const Cell cell = cell_of(record);
  if (ordinals) {
    stored.ranges.assign(ordinals->first, ordinals->second, cell);
    return;
  }
  for (std::size_t i = 0; i < window->size(); ++i) {
    const std::int64_t ordinal = stored.ordinal_of_key(window->partition_at(i)->key());
    stored.ranges.assign(ordinal, ordinal, cell);
  }
}

std::optional<MaterializationRecord> MemoryStore::last_record(const DatasetRef& dataset) {
  std::lock_guard lock(state_->mutex);
  auto it = state_->assets.find(dataset_key(dataset));
  if (it == state_->assets.end()) return std::nullopt;
  return it->second.last;
}

void MemoryStore::forget(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  auto it = state_->assets.find(dataset_key(dataset));
  if (it == state_->assets.end()) return;
  if (window == nullptr || dataset.partitioning == nullptr) {
    state_->assets.erase(it);
    return;
  }
  AssetRecords& stored = it->second;
  if (auto ordinals = detail::window_ordinals(dataset, *window)) {
    stored.ranges.erase(ordinals->first, ordinals->second);
    return;
  }
  for (const std::string& key : window->keys()) {
    if (auto k = stored.key_ordinals.find(key); k != stored.key_ordinals.end()) {
      stored.ranges.erase(k->second, k->second);
    }
  }
}

WindowStatus MemoryStore::status(const DatasetRef& dataset, const PartitionWindow& window) {
  const auto ordinals = dataset.partitioning == nullptr
                            ? std::make_optional(std::make_pair(std::int64_t{0}, std::int64_t{0}))
                            : detail::window_ordinals(dataset, window);
  std::lock_guard lock(state_->mutex);
  auto it = state_->assets.find(dataset_key(dataset));
  if (it == state_->assets.end()) {
    WindowStatus none;
    none.missing.push_back({0, window.size() - 1});
    return none;
  }
  AssetRecords& stored = it->second;
  auto classify = [](const detail::RangeMap<Cell>::Segment& s) {
    return detail::StatusSegment{s.first, s.last, s.value.status, s.value.definition};
  };
  if (ordinals) {
    const std::size_t size = dataset.partitioning == nullptr ? 1 : window.size();
    std::vector<detail::StatusSegment> segments;
    for (const auto& s : stored.ranges.overlapping(ordinals->first, ordinals->second)) {
      segments.push_back(classify(s));
    }
    WindowStatus status = detail::to_window_status(segments, ordinals->first, size);
    if (size != window.size()) {
      // An unpartitioned asset has one state, shared by every partition of any window.
      for (auto* ranges : {&status.materialized, &status.failed, &status.missing}) {
        for (PartitionRange& r : *ranges) r.last = window.size() - 1;
      }
      for (DefinedRange& d : status.definitions) d.range.last = window.size() - 1;
    }
    return status;
  }
  // A kind without ordinals: classify key by key, then compress into ranges.
  std::vector<detail::StatusSegment> segments;
  for (std::size_t i = 0; i < window.size(); ++i) {
    auto found = stored.key_ordinals.find(window.partition_at(i)->key());
    if (found == stored.key_ordinals.end()) continue;
    const Cell* cell = stored.ranges.find(found->second);
    if (cell == nullptr) continue;
    const auto at = static_cast<std::int64_t>(i);
    segments.push_back({at, at, cell->status, cell->definition});
  }
  return detail::to_window_status(segments, 0, window.size());
}

std::optional<MaterializationRecord> MemoryStore::latest(const DatasetRef& dataset,
                                                         const Partition* partition) {
  std::optional<std::int64_t> ordinal;
  if (partition == nullptr || dataset.partitioning == nullptr) {
    ordinal = 0;
  } else {
    ordinal = detail::partition_ordinal(dataset, *partition);
  }
  std::lock_guard lock(state_->mutex);
  auto it = state_->assets.find(dataset_key(dataset));
  if (it == state_->assets.end()) return std::nullopt;
  AssetRecords& stored = it->second;
  if (!ordinal) {
    auto found = stored.key_ordinals.find(partition->key());
    if (found == stored.key_ordinals.end()) return std::nullopt;
    ordinal = found->second;
  }
  const Cell* cell = stored.ranges.find(*ordinal);
  if (cell == nullptr) return std::nullopt;
  return record_of(dataset.asset, *cell);
}

std::optional<Claim> MemoryStore::claim(const std::vector<DatasetRef>& datasets,
                                        const PartitionWindow* window, const Claim& claim,
                                        TimePoint now) {
  const auto covered = detail::claim_spans(window);
  const std::string& scope = covered.first;
  const std::vector<detail::ClaimSpan>& spans = covered.second;
  std::lock_guard lock(state_->mutex);
  std::vector<HeldClaim>& held = state_->claims;
  std::erase_if(held, [now](const HeldClaim& c) { return c.claim.expires <= now; });
  for (const DatasetRef& dataset : datasets) {
    const std::string key = dataset_key(dataset);
    for (const detail::ClaimSpan& span : spans) {
      for (const HeldClaim& c : held) {
        if (c.claim.owner != claim.owner && c.overlaps(key, scope, span)) return c.claim;
      }
    }
  }
  for (const DatasetRef& dataset : datasets) {
    const std::string key = dataset_key(dataset);
    for (const detail::ClaimSpan& span : spans) {
      std::erase_if(held, [&](const HeldClaim& c) {
        return c.claim.owner == claim.owner && c.overlaps(key, scope, span);
      });
      held.push_back({key, scope, span, claim});
    }
  }
  return std::nullopt;
}

void MemoryStore::release(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
                          std::string_view owner) {
  const auto covered = detail::claim_spans(window);
  const std::string& scope = covered.first;
  const std::vector<detail::ClaimSpan>& spans = covered.second;
  std::lock_guard lock(state_->mutex);
  for (const DatasetRef& dataset : datasets) {
    const std::string key = dataset_key(dataset);
    for (const detail::ClaimSpan& span : spans) {
      std::erase_if(state_->claims, [&](const HeldClaim& c) {
        return c.claim.owner == owner && c.overlaps(key, scope, span);
      });
    }
  }
}

void MemoryStore::renew(std::string_view owner, TimePoint expires) {
  std::lock_guard lock(state_->mutex);
  for (HeldClaim& c : state_->claims) {
    if (c.claim.owner == owner) c.claim.expires = expires;
  }
}

std::vector<FailedRange> MemoryStore::failures(const DatasetRef& dataset,
                                               const PartitionWindow& window, std::size_t limit) {
  const auto ordinals = dataset.partitioning == nullptr
                            ? std::make_optional(std::make_pair(std::int64_t{0}, std::int64_t{0}))
                            : detail::window_ordinals(dataset, window);
  std::lock_guard lock(state_->mutex);
  std::vector<FailedRange> out;
  auto it = state_->assets.find(dataset_key(dataset));
  if (it == state_->assets.end() || limit == 0) return out;
  AssetRecords& stored = it->second;
  if (ordinals) {
    for (const auto& s : stored.ranges.overlapping(ordinals->first, ordinals->second)) {
      if (!s.value.failure) continue;
      out.push_back({{static_cast<std::size_t>(s.first - ordinals->first),
                      static_cast<std::size_t>(s.last - ordinals->first)},
                     *s.value.failure});
      if (out.size() == limit) break;
    }
    return out;
  }
  const MaterializationRecord* previous = nullptr;
  for (std::size_t i = 0; i < window.size(); ++i) {
    auto found = stored.key_ordinals.find(window.partition_at(i)->key());
    const Cell* cell =
        found == stored.key_ordinals.end() ? nullptr : stored.ranges.find(found->second);
    if (cell == nullptr || !cell->failure) {
      previous = nullptr;
      continue;
    }
    if (previous == cell->failure.get()) {
      out.back().range.last = i;
      continue;
    }
    if (out.size() == limit) break;
    out.push_back({{i, i}, *cell->failure});
    previous = cell->failure.get();
  }
  return out;
}

void MemoryStore::record_run(const RunRecord& run, std::size_t keep) {
  std::lock_guard lock(state_->mutex);
  std::vector<RunRecord>& runs = state_->runs;
  auto same = std::find_if(runs.begin(), runs.end(),
                           [&](const RunRecord& r) { return r.run_id == run.run_id; });
  if (same != runs.end()) {
    *same = run;
  } else {
    runs.push_back(run);
  }
  // Keep the newest `keep` of this pipeline.
  std::size_t seen = 0;
  for (auto r = runs.rbegin(); r != runs.rend(); ++r) {
    if (r->pipeline == run.pipeline && ++seen > std::max<std::size_t>(keep, 1)) r->run_id.clear();
  }
  std::erase_if(runs, [&](const RunRecord& r) { return r.run_id.empty(); });
}

std::vector<RunRecord> MemoryStore::runs(std::string_view pipeline, std::size_t last) {
  std::lock_guard lock(state_->mutex);
  std::vector<RunRecord> out;
  for (auto r = state_->runs.rbegin(); r != state_->runs.rend() && out.size() < last; ++r) {
    if (pipeline.empty() || r->pipeline == pipeline) out.push_back(*r);
  }
  return out;
}

}  // namespace interloper
