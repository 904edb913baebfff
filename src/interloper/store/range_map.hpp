// Run-length bookkeeping of partition states, shared by the materialization stores.
//
// Partitions are numbered by an *ordinal* that is contiguous within any window:
//   * time: whole periods since 1970-01-01 in the partitioning's granularity
//     (granularity.periods_between(TimePoint{}, value));
//   * list: the position of the value in the declared list;
//   * unpartitioned: 0.
// A window is then the ordinal range [first, first + size - 1], and "which partitions of this
// window are materialized" is interval arithmetic over stored ranges: no key is ever listed.
//
//   RangeMap<std::size_t> map;            // ordinal -> record index
//   map.assign(10, 19, 0);                // run 0 covered ordinals 10..19
//   map.assign(15, 15, 1);                // run 1 redid ordinal 15
//   map.overlapping(0, 30);               // {10,14,0} {15,15,1} {16,19,0}
//   WindowStatus s = to_window_status(segments, 0, 31);   // missing 0..9 and 20..30
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "interloper/dataset.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/store.hpp"

namespace interloper::detail {

// An interval map over int64 ordinals: every ordinal holds at most one value. Segments are
// kept disjoint and sorted; assign() is O(log n + segments replaced). Not synchronized.
template <typename V>
class RangeMap {
 public:
  // Ordinals first..last (inclusive) holding one value.
  struct Segment {
    std::int64_t first;
    std::int64_t last;
    V value;
  };

  // Sets every ordinal of [first, last] to `value`, replacing what was there. Neighbouring
  // segments holding an equal value are merged. Requires first <= last.
  void assign(std::int64_t first, std::int64_t last, V value) {
    erase(first, last);
    auto it = segments_.emplace(first, Stored{last, std::move(value)}).first;
    // Merge with the following and the preceding segment when contiguous and equal.
    auto next = std::next(it);
    if (next != segments_.end() && it->second.last + 1 == next->first &&
        next->second.value == it->second.value) {
      it->second.last = next->second.last;
      segments_.erase(next);
    }
    if (it != segments_.begin()) {
      auto prev = std::prev(it);
      if (prev->second.last + 1 == it->first && prev->second.value == it->second.value) {
        prev->second.last = it->second.last;
        segments_.erase(it);
      }
    }
  }

  // Forgets every ordinal of [first, last]. Requires first <= last.
  void erase(std::int64_t first, std::int64_t last) {
    split_before(first);
    if (last < std::numeric_limits<std::int64_t>::max()) split_before(last + 1);
    segments_.erase(segments_.lower_bound(first), segments_.upper_bound(last));
  }

  // The value at `ordinal`, or nullptr.
  const V* find(std::int64_t ordinal) const {
    auto it = segments_.upper_bound(ordinal);
    if (it == segments_.begin()) return nullptr;
    --it;
    return it->second.last >= ordinal ? &it->second.value : nullptr;
  }

  // The stored segments overlapping [first, last], clipped to it, in ascending order. Gaps
  // (ordinals without a value) are simply absent.
  std::vector<Segment> overlapping(std::int64_t first, std::int64_t last) const {
    std::vector<Segment> out;
    auto it = segments_.upper_bound(first);
    if (it != segments_.begin() && std::prev(it)->second.last >= first) --it;
    for (; it != segments_.end() && it->first <= last; ++it) {
      out.push_back(
          {std::max(it->first, first), std::min(it->second.last, last), it->second.value});
    }
    return out;
  }

  std::size_t segment_count() const { return segments_.size(); }
  bool empty() const { return segments_.empty(); }

 private:
  struct Stored {
    std::int64_t last;
    V value;
  };

  // Makes `ordinal` the first ordinal of its segment (if a segment holds it).
  void split_before(std::int64_t ordinal) {
    auto it = segments_.upper_bound(ordinal);
    if (it == segments_.begin()) return;
    --it;
    if (it->first < ordinal && it->second.last >= ordinal) {
      segments_.emplace(ordinal, Stored{it->second.last, it->second.value});
      it->second.last = ordinal - 1;
    }
  }

  std::map<std::int64_t, Stored> segments_;  // keyed by first ordinal
};

// One stored range with its status, as a store reads it back.
struct StatusSegment {
  std::int64_t first;
  std::int64_t last;
  MaterializationStatus status;
  std::string definition = {};  // of a materialized range
};

// The WindowStatus of the window whose ordinals are [first, first + size - 1], given the
// segments overlapping it (ascending, disjoint; they may reach outside the window). Indices in
// the result are relative to the window (0 = its first partition); ordinals no segment covers
// are missing; adjacent ranges of one status are merged.
inline WindowStatus to_window_status(const std::vector<StatusSegment>& segments, std::int64_t first,
                                     std::size_t size) {
  WindowStatus status;
  if (size == 0) return status;
  const std::int64_t last = first + static_cast<std::int64_t>(size) - 1;
  auto push = [](std::vector<PartitionRange>& ranges, std::int64_t a, std::int64_t b,
                 std::int64_t base) {
    const auto lo = static_cast<std::size_t>(a - base);
    const auto hi = static_cast<std::size_t>(b - base);
    if (!ranges.empty() && ranges.back().last + 1 == lo) {
      ranges.back().last = hi;
    } else {
      ranges.push_back({lo, hi});
    }
  };
  std::int64_t next = first;  // the first ordinal not yet classified
  for (const StatusSegment& segment : segments) {
    const std::int64_t a = std::max(segment.first, next);
    const std::int64_t b = std::min(segment.last, last);
    if (a > b) continue;
    if (a > next) push(status.missing, next, a - 1, first);
    if (segment.status == MaterializationStatus::materialized) {
      push(status.materialized, a, b, first);
      auto& defined = status.definitions;
      const auto lo = static_cast<std::size_t>(a - first);
      const auto hi = static_cast<std::size_t>(b - first);
      if (!defined.empty() && defined.back().range.last + 1 == lo &&
          defined.back().definition == segment.definition) {
        defined.back().range.last = hi;
      } else {
        defined.push_back({{lo, hi}, segment.definition});
      }
    } else {
      push(status.failed, a, b, first);
    }
    next = b + 1;
  }
  if (next <= last) push(status.missing, next, last, first);
  return status;
}

// The ordinal of `partition` in `dataset`'s partitioning (PartitionConfig::ordinal), or nullopt
// for a kind without ordinals (of the built-in kinds, time and list have them). Throws
// PartitionError for a list key the partitioning does not declare.
inline std::optional<std::int64_t> partition_ordinal(const DatasetRef& dataset,
                                                     const Partition& partition) {
  if (dataset.partitioning == nullptr) return std::nullopt;
  return dataset.partitioning->ordinal(partition);
}

// The ordinals [first, last] of `window` in `dataset`'s partitioning, or nullopt for a kind
// without ordinals. A window's partitions are consecutive, so its first partition's ordinal is
// enough: O(1) whatever the window's size.
inline std::optional<std::pair<std::int64_t, std::int64_t>> window_ordinals(
    const DatasetRef& dataset, const PartitionWindow& window) {
  if (dataset.partitioning == nullptr) return std::nullopt;
  const std::optional<std::int64_t> first = dataset.partitioning->ordinal(*window.partition_at(0));
  if (!first) return std::nullopt;
  return std::make_pair(*first, *first + static_cast<std::int64_t>(window.size()) - 1);
}

// How a window is filed: a time window (PartitionWindow::as_time_window) by granularity and
// ordinal range, a window of any other kind, list included, by key.
struct Scope {
  std::string name;  // "time:day", "list", ...
  bool ranged = false;
  std::int64_t first = 0;  // ordinals, inclusive (ranged only)
  std::int64_t last = -1;
};

inline std::string time_scope(TimeGranularity granularity) {
  return "time:" + std::string(granularity.name());
}

inline Scope scope_of(const PartitionWindow& window) {
  if (const std::optional<TimePartitionWindow> time = window.as_time_window()) {
    const std::int64_t first = time->granularity().periods_between(TimePoint{}, time->start());
    return {time_scope(time->granularity()), true, first,
            first + static_cast<std::int64_t>(time->size()) - 1};
  }
  return {std::string(window.kind()), false, 0, -1};
}

// What a claim on a window covers, per dataset: one ordinal range (key "") for a time window,
// one key per partition for other kinds, the key "" in scope "none" without a window.
struct ClaimSpan {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::string key;
};

inline std::pair<std::string, std::vector<ClaimSpan>> claim_spans(const PartitionWindow* window) {
  if (window == nullptr) return {"none", {ClaimSpan{}}};
  Scope scope = scope_of(*window);
  if (scope.ranged) return {scope.name, {ClaimSpan{scope.first, scope.last, ""}}};
  std::vector<ClaimSpan> spans;
  for (std::string& key : window->keys()) spans.push_back({0, 0, std::move(key)});
  return {scope.name, std::move(spans)};
}

}  // namespace interloper::detail
