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
// A dependency says which partitions it reads with a DepMapping (the default reads the upstream
// partitions that overlap; see DepMapping below). The rules:
//
//   * overlap (the default), two time partitionings, any granularities: a downstream partition
//     reads the upstream periods overlapping its bounds (a day its 24 hours, a day the month
//     holding it, an ISO week the two months it straddles), clamped to the upstream's start;
//   * a window A..B (offset K is K..K), two time partitionings: the overlapping periods with
//     their first end moved by A and their last end by B, in upstream periods, then clamped to
//     the upstream's start (the first day's "yesterday" reads nothing). An asset may read
//     itself this way when B < 0;
//   * all: every partition of the upstream (as stored; in a plan, every task of it);
//   * overlap between two partitionings of another kind that accept the same windows (the same
//     list): the same partition;
//   * an unpartitioned end: every partition of the other.
//
// A new mapping (a value map, a dimension matched by column) is a new DepMapping kind and a
// rule in mapping.cpp: its upstream_window, upstream_of and downstream_of, and the edges
// refusal() accepts. Nothing outside this module changes.
//
//   il::PartitionMapping m = il::PartitionMapping::between(&hourly, &daily);
//   m.upstream_window(il::TimePartitionWindow::parse("2026-11-03"))->size();  // 24
//   il::PartitionMapping week = il::PartitionMapping::between(&daily, &daily,
//                                                             il::DepMapping::window(-6, 0));
//   week.upstream_window(il::TimePartitionWindow::parse("2026-11-09"))->to_string();
//       // "2026-11-03..2026-11-09"
//
// Mappings and spans are immutable values, safe to share between threads for reading. A
// mapping refers to the upstream partitioning it was built from, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/partitioning.hpp"

namespace interloper {

// What one dependency reads of its upstream, as the user declares it (`deps:` in YAML,
// Asset::dep in C++, il.Dep in Python). A value type; the default reads the overlap.
class DepMapping {
 public:
  enum class Kind : std::uint8_t {
    overlap,  // the upstream partitions overlapping the downstream partition (the default)
    window,   // the overlap with its ends moved by first()..last() upstream partitions
    all,      // every partition of the upstream
  };

  DepMapping() = default;
  // The partition `k` upstream periods away: -1 is the one before (yesterday for days).
  static DepMapping offset(std::int64_t k) { return window(k, k); }
  // The overlap with its first end moved by `first` and its last end by `last` periods: -6..0
  // reads the partition and the six before. Throws std::invalid_argument when last < first.
  static DepMapping window(std::int64_t first, std::int64_t last);
  // "-6..0", or one number (an offset). Throws std::invalid_argument naming the text when it is
  // not two integers joined by ".." with the first not above the second.
  static DepMapping parse_window(std::string_view text);
  static DepMapping all();

  Kind kind() const { return kind_; }
  // The window's ends (0 unless kind() is window).
  std::int64_t first() const { return first_; }
  std::int64_t last() const { return last_; }
  bool is_overlap() const { return kind_ == Kind::overlap; }
  // Whether an asset may read itself this way: a window ending before its own partition.
  bool reads_only_earlier() const { return kind_ == Kind::window && last_ < 0; }
  // "overlap", "offset -1", "window -6..0", "all": for messages and the catalog's text.
  std::string to_string() const;
  // The catalog's JSON: {} for the overlap, {"offset":-1}, {"window":"-6..0"}, {"all":true}.
  std::string to_definition() const;

  friend bool operator==(const DepMapping&, const DepMapping&) = default;

 private:
  Kind kind_ = Kind::overlap;
  std::int64_t first_ = 0;
  std::int64_t last_ = 0;
};

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
  // The partitions whose bounds overlap `bounds`, the first end moved by `move_first` and the
  // last by `move_last` partitions before clamping to the span; nullopt when none. Only for a
  // timed span.
  std::optional<PartitionRange> overlapping(const Bounds& bounds, std::int64_t move_first = 0,
                                            std::int64_t move_last = 0) const;
  // The bounds of partitions `first`..`last` counted from the span's first (either may lie
  // outside the span); only for a timed span.
  Bounds bounds_of(std::int64_t first, std::int64_t last) const;
  // The whole span as a range.
  PartitionRange all() const { return {0, size_ - 1}; }

 private:
  TimePoint start_of(std::int64_t index) const;

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
  // The mapping of the edge `upstream -> downstream` (nullptr: that end is unpartitioned) that
  // `declared` describes. An edge refusal() refuses maps as reading every partition; the DAG
  // never builds one.
  static PartitionMapping between(const PartitionConfig* upstream,
                                  const PartitionConfig* downstream,
                                  const DepMapping& declared = {});
  // Why the edge between two partitioned assets cannot be mapped with the overlap ("time and
  // list partitionings cannot be mapped", "the two partitionings differ"); nullopt when it can.
  static std::optional<std::string> refusal(const PartitionConfig& upstream,
                                            const PartitionConfig& downstream);
  // Why the edge cannot be mapped as `declared` says (either end may be nullptr: unpartitioned;
  // `self`: the asset reads itself): a window on an end that is not a time partitioning, or a
  // dependency on itself that is not a window of earlier partitions (a cycle); nullopt when it
  // can.
  static std::optional<std::string> refusal(const PartitionConfig* upstream,
                                            const PartitionConfig* downstream,
                                            const DepMapping& declared, bool self);

  // Whether a downstream partition reads the whole upstream (an unpartitioned end, or all).
  bool reads_whole() const { return rule_ == Rule::every; }
  // Whether a downstream partition reads upstream partitions outside its own bounds (a
  // window): a plan then runs those upstream partitions too.
  bool shifted() const { return rule_ == Rule::shifted; }
  // The upstream partitions the downstream `window` reads; nullptr when none is left (all of
  // them before the upstream's start). For reads_whole(), the upstream's every partition is
  // meant and nullptr is returned.
  std::unique_ptr<PartitionWindow> upstream_window(const PartitionWindow& window) const;
  // The partitions of `downstream` that read any of the upstream partitions `upstream`: the
  // ones a new materialization of them makes stale. nullptr when that is every partition (an
  // unpartitioned end, all) or none.
  std::unique_ptr<PartitionWindow> downstream_window(const PartitionWindow& upstream,
                                                     const PartitionConfig& downstream) const;
  // What a plan runs of the upstream so that the downstream partitions `downstream_share` find
  // what they read: `upstream_share` grown to cover upstream_window(downstream_share) and, for
  // an asset reading itself (`self`), back to its start (each partition reads earlier ones);
  // nullptr when it need not grow (only a window grows it).
  std::unique_ptr<PartitionWindow> grown_share(const PartitionWindow& upstream_share,
                                               const PartitionWindow& downstream_share,
                                               bool self) const;
  // The partitions of `reads` outside `covered` (a plan's share of the upstream), oldest first:
  // what a task must find stored. Empty when all are covered.
  static std::vector<std::unique_ptr<PartitionWindow>> outside(const PartitionWindow& reads,
                                                               const PartitionWindow& covered);
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
    shifted,  // time periods: the overlap with its ends moved by first_..last_
  };
  PartitionMapping(Rule rule, const PartitionConfig* upstream, std::int64_t first = 0,
                   std::int64_t last = 0)
      : rule_(rule), upstream_(upstream), first_(first), last_(last) {}

  Rule rule_ = Rule::every;
  const PartitionConfig* upstream_ = nullptr;
  std::int64_t first_ = 0;
  std::int64_t last_ = 0;
};

}  // namespace interloper
