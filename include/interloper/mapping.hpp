// interloper/mapping.hpp — which partitions of an upstream a downstream partition reads.
//
// Every question of the form "which partitions does this edge connect" is answered here, by
// arithmetic on partition numbers and bounds, never by listing keys:
//
//   * the runner: which upstream window a task loads (PartitionMapping::upstream_window);
//   * the plan: which upstream tasks a task waits for, and which downstream tasks a finished or
//     failed task releases or cancels (upstream_of, downstream_of over PartitionSpans);
//   * the DAG: whether an edge can be mapped at all (PartitionMapping::refusal);
//   * a request: an asset's own partitions a window covers (PartitionConfig::share, in
//     partitioning.hpp, implemented beside the mappings).
//
// The rules today:
//
//   * two time partitionings, any granularities: a downstream partition reads the upstream
//     periods overlapping its bounds (a day its 24 hours, a day the month holding it, an ISO
//     week the two months it straddles), clamped to the upstream's start;
//   * two partitionings of another kind that accept the same windows (the same list): the same
//     partition;
//   * an unpartitioned end: every partition of the other.
//
// A new mapping (an offset, a trailing window, every partition, a value map, a dimension
// matched by column) is a new rule in mapping.cpp: its upstream_window, upstream_of and
// downstream_of, and the edges refusal() accepts. Nothing outside this module changes.
//
//   il::PartitionMapping m = il::PartitionMapping::between(&hourly, &daily);
//   m.upstream_window(il::TimePartitionWindow::parse("2026-11-03"))->size();  // 24
//
// Mappings and spans are immutable values, safe to share between threads for reading. A
// mapping refers to the upstream partitioning it was built from, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "interloper/partitioning.hpp"

namespace interloper {

// A run of consecutive partitions of a window, by index (0 = oldest / first declared), both
// ends inclusive.
struct PartitionRange {
  std::size_t first = 0;
  std::size_t last = 0;
  friend bool operator==(const PartitionRange&, const PartitionRange&) = default;
};

// The partitions of one asset in a plan, numbered from 0: a window, and for a window of time
// periods the arithmetic that finds the bounds of any index in constant time (for hours, days
// and weeks) without building partitions. An unpartitioned asset's span holds no window and
// counts as one.
class PartitionSpan {
 public:
  PartitionSpan() = default;
  explicit PartitionSpan(std::shared_ptr<const PartitionWindow> window);

  // nullptr for an unpartitioned asset.
  const std::shared_ptr<const PartitionWindow>& window() const { return window_; }
  // The number of partitions (1 without a window).
  std::size_t size() const { return size_; }
  // Whether the partitions are periods of time with bounds.
  bool timed() const { return timed_; }
  // The window of the partition at `index` (the span's window when it has none). Throws
  // std::out_of_range past the end.
  std::shared_ptr<const PartitionWindow> partition_window(std::size_t index) const;
  // [start of partition range.first, end of partition range.last); only for a timed span.
  Bounds bounds(PartitionRange range) const;
  // The partitions whose bounds overlap `bounds`; nullopt when none. Only for a timed span.
  std::optional<PartitionRange> overlapping(const Bounds& bounds) const;
  // The whole span as a range.
  PartitionRange all() const { return {0, size_ - 1}; }

 private:
  TimePoint start_of(std::size_t index) const;

  std::shared_ptr<const PartitionWindow> window_;
  bool timed_ = false;
  TimeGranularity granularity_;
  TimePoint first_;
  std::size_t size_ = 1;
};

// The mapping of one dependency edge: which upstream partitions each downstream partition
// reads.
class PartitionMapping {
 public:
  // The mapping of the edge `upstream -> downstream` (nullptr: that end is unpartitioned). An
  // edge refusal() refuses maps as reading every partition; the DAG never builds one.
  static PartitionMapping between(const PartitionConfig* upstream,
                                  const PartitionConfig* downstream);
  // Why the edge between two partitioned assets cannot be mapped ("time and list partitionings
  // cannot be mapped", "the two partitionings differ"); nullopt when it can.
  static std::optional<std::string> refusal(const PartitionConfig& upstream,
                                            const PartitionConfig& downstream);

  // Whether a downstream partition reads the whole upstream (an unpartitioned end).
  bool reads_whole() const { return rule_ == Rule::every; }
  // The upstream partitions the downstream `window` reads; nullptr when none is left (all of
  // them before the upstream's start). For reads_whole(), the upstream's every partition is
  // meant and nullptr is returned.
  std::unique_ptr<PartitionWindow> upstream_window(const PartitionWindow& window) const;
  // The partitions of `up` that the partitions `range` of `down` read; nullopt when none.
  std::optional<PartitionRange> upstream_of(const PartitionSpan& down, PartitionRange range,
                                            const PartitionSpan& up) const;
  // The partitions of `down` that read any of the partitions `range` of `up`; nullopt when
  // none. The inverse of upstream_of.
  std::optional<PartitionRange> downstream_of(const PartitionSpan& up, PartitionRange range,
                                              const PartitionSpan& down) const;

 private:
  enum class Rule : std::uint8_t {
    every,   // an unpartitioned end: everything
    bounds,  // time periods: the partitions whose bounds overlap
    same,    // the same partition (partitionings accepting the same windows)
  };
  PartitionMapping(Rule rule, const PartitionConfig* upstream) : rule_(rule), upstream_(upstream) {}

  Rule rule_ = Rule::every;
  const PartitionConfig* upstream_ = nullptr;
};

}  // namespace interloper
