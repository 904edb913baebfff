// MemoryStore: materialization records in memory, indexed by run-length ordinal ranges.
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "interloper/run.hpp"
#include "interloper/run/range_map.hpp"

namespace interloper {

namespace {

struct AssetRecords {
  detail::RangeMap<std::size_t> ranges;  // ordinal -> index into records
  std::vector<MaterializationRecord> records;
  // Kinds without arithmetic ordinals get one per key, in first-seen order.
  std::unordered_map<std::string, std::int64_t> key_ordinals;

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

std::size_t WindowStatus::count(const std::vector<PartitionRange>& ranges) const {
  std::size_t n = 0;
  for (const PartitionRange& range : ranges) n += range.last - range.first + 1;
  return n;
}

struct MemoryStore::State {
  std::mutex mutex;
  std::map<std::string, AssetRecords> assets;
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
  const std::size_t index = stored.records.size();
  stored.records.push_back(record);
  if (ordinals) {
    stored.ranges.assign(ordinals->first, ordinals->second, index);
    return;
  }
  for (std::size_t i = 0; i < window->size(); ++i) {
    const std::int64_t ordinal = stored.ordinal_of_key(window->partition_at(i)->key());
    stored.ranges.assign(ordinal, ordinal, index);
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
  auto classify = [&](const detail::RangeMap<std::size_t>::Segment& s) {
    return detail::StatusSegment{s.first, s.last, stored.records[s.value].status};
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
    }
    return status;
  }
  // A kind without ordinals: classify key by key, then compress into ranges.
  std::vector<detail::StatusSegment> segments;
  for (std::size_t i = 0; i < window.size(); ++i) {
    auto found = stored.key_ordinals.find(window.partition_at(i)->key());
    if (found == stored.key_ordinals.end()) continue;
    const std::size_t* index = stored.ranges.find(found->second);
    if (index == nullptr) continue;
    const auto at = static_cast<std::int64_t>(i);
    segments.push_back({at, at, stored.records[*index].status});
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
  const std::size_t* index = stored.ranges.find(*ordinal);
  if (index == nullptr) return std::nullopt;
  return stored.records[*index];
}

}  // namespace interloper
