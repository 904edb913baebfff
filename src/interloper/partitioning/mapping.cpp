// Partition mappings: the one place that knows which partitions an edge connects (see
// interloper/mapping.hpp). A new mapping is a new Rule here and nothing elsewhere.
#include "interloper/mapping.hpp"

#include <algorithm>
#include <stdexcept>

namespace interloper {

namespace {

// The last instant inside half-open bounds, so that truncating it finds the last period.
TimePoint last_instant(const Bounds& bounds) {
  return TimePoint::from_epoch_seconds(bounds.end.epoch_seconds() - 1);
}

// The periods of `axis` overlapping `bounds`, clamped to its start; nullopt when none is left.
std::optional<TimePartitionWindow> periods_overlapping(const TimeAxis& axis, const Bounds& bounds) {
  const TimeGranularity g = axis.granularity;
  TimePoint first = g.truncate(bounds.start);
  const TimePoint last = g.truncate(last_instant(bounds));
  if (axis.start) first = std::max(first, g.truncate(*axis.start));
  if (last < first) return std::nullopt;
  return TimePartitionWindow(first, last, g);
}

// The fixed length of a period in seconds, or 0 for calendar periods (months and longer).
std::int64_t fixed_length(TimeGranularity g) {
  switch (g.unit()) {
    case TimeGranularity::Unit::hour:
      return 3600;
    case TimeGranularity::Unit::day:
      return 86400;
    case TimeGranularity::Unit::week:
      return 7 * 86400;
    default:
      return 0;
  }
}

}  // namespace

// ---- PartitionConfig::share: a request's share of one partitioning ----

std::unique_ptr<PartitionWindow> PartitionConfig::share(const PartitionWindow& request) const {
  const std::optional<TimeAxis> axis = time_axis();
  const std::optional<TimePartitionWindow> time = request.as_time_window();
  if (!axis || !time) return request.clone();
  std::optional<TimePartitionWindow> own = periods_overlapping(*axis, time->bounds());
  if (!own) {
    throw PartitionError("window " + request.to_string() + " lies entirely before start " +
                         axis->start->to_string());
  }
  return std::make_unique<TimePartitionWindow>(*own);
}

// ---- PartitionSpan ----

PartitionSpan::PartitionSpan(std::shared_ptr<const PartitionWindow> window)
    : window_(std::move(window)) {
  if (window_ == nullptr) return;
  size_ = window_->size();
  if (const std::optional<TimePartitionWindow> time = window_->as_time_window()) {
    timed_ = true;
    granularity_ = time->granularity();
    first_ = time->start();
  }
}

TimePoint PartitionSpan::start_of(std::size_t index) const {
  const auto i = static_cast<std::int64_t>(index);
  if (const std::int64_t length = fixed_length(granularity_); length > 0) {
    return TimePoint::from_epoch_seconds(first_.epoch_seconds() + i * length);
  }
  return granularity_.advance(first_, i);
}

std::shared_ptr<const PartitionWindow> PartitionSpan::partition_window(std::size_t index) const {
  if (index >= size_) {
    throw std::out_of_range("partition index " + std::to_string(index) + " is outside a span of " +
                            std::to_string(size_));
  }
  if (window_ == nullptr || size_ == 1) return window_;
  if (timed_) {
    const TimePoint start = start_of(index);
    return std::make_shared<TimePartitionWindow>(start, start, granularity_);
  }
  return window_->partition_at(index)->as_window();
}

Bounds PartitionSpan::bounds(PartitionRange range) const {
  return {start_of(range.first), start_of(range.last + 1)};
}

std::optional<PartitionRange> PartitionSpan::overlapping(const Bounds& b) const {
  const auto n = static_cast<std::int64_t>(size_);
  std::int64_t lo = granularity_.periods_between(first_, b.start);
  std::int64_t hi = granularity_.periods_between(first_, last_instant(b));
  lo = std::max<std::int64_t>(lo, 0);
  hi = std::min<std::int64_t>(hi, n - 1);
  if (lo > hi) return std::nullopt;
  return PartitionRange{static_cast<std::size_t>(lo), static_cast<std::size_t>(hi)};
}

// ---- PartitionMapping ----

std::optional<std::string> PartitionMapping::refusal(const PartitionConfig& upstream,
                                                     const PartitionConfig& downstream) {
  // Any two time granularities map by overlapping bounds.
  if (upstream.time_axis() && downstream.time_axis()) return std::nullopt;
  if (upstream.kind() != downstream.kind()) return "time and list partitionings cannot be mapped";
  // Other kinds map partition to partition, so both ends must accept the same windows.
  if (upstream.column() == downstream.column() && upstream.compatible(downstream) &&
      downstream.compatible(upstream)) {
    return std::nullopt;
  }
  return "the two partitionings differ";
}

PartitionMapping PartitionMapping::between(const PartitionConfig* upstream,
                                           const PartitionConfig* downstream) {
  if (upstream == nullptr || downstream == nullptr || refusal(*upstream, *downstream)) {
    return PartitionMapping(Rule::every, upstream);
  }
  const bool time = upstream->time_axis().has_value();
  return PartitionMapping(time ? Rule::bounds : Rule::same, upstream);
}

std::unique_ptr<PartitionWindow> PartitionMapping::upstream_window(
    const PartitionWindow& window) const {
  switch (rule_) {
    case Rule::every:
      return nullptr;
    case Rule::same:
      return window.clone();
    case Rule::bounds: {
      const std::optional<TimePartitionWindow> time = window.as_time_window();
      if (!time) return window.clone();
      std::optional<TimePartitionWindow> reads =
          periods_overlapping(*upstream_->time_axis(), time->bounds());
      if (!reads) return nullptr;
      return std::make_unique<TimePartitionWindow>(*reads);
    }
  }
  return nullptr;
}

std::optional<PartitionRange> PartitionMapping::upstream_of(const PartitionSpan& down,
                                                            PartitionRange range,
                                                            const PartitionSpan& up) const {
  switch (rule_) {
    case Rule::bounds:
      if (down.timed() && up.timed()) return up.overlapping(down.bounds(range));
      break;
    case Rule::same:
      // Both spans are the same request's window, so an index names the same partition.
      if (range.first >= up.size()) return std::nullopt;
      return PartitionRange{range.first, std::min(range.last, up.size() - 1)};
    case Rule::every:
      break;
  }
  return up.all();
}

std::optional<PartitionRange> PartitionMapping::downstream_of(const PartitionSpan& up,
                                                              PartitionRange range,
                                                              const PartitionSpan& down) const {
  switch (rule_) {
    case Rule::bounds:
      // Overlap is symmetric: the downstream periods overlapping the upstream ones read them.
      if (down.timed() && up.timed()) return down.overlapping(up.bounds(range));
      break;
    case Rule::same:
      if (range.first >= down.size()) return std::nullopt;
      return PartitionRange{range.first, std::min(range.last, down.size() - 1)};
    case Rule::every:
      break;
  }
  return down.all();
}

}  // namespace interloper
