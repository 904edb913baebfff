// Partition mappings: the one place that knows which partitions an edge connects (see
// interloper/mapping.hpp). A new mapping is a new Rule here and nothing elsewhere.
#include "interloper/mapping.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace interloper {

namespace {

// The last instant inside half-open bounds, so that truncating it finds the last period.
TimePoint last_instant(const Bounds& bounds) {
  return TimePoint::from_epoch_seconds(bounds.end.epoch_seconds() - 1);
}

// The periods of `axis` overlapping `bounds`, the first end moved by `move_first` periods and
// the last by `move_last`, clamped to its start; nullopt when none is left.
std::optional<TimePartitionWindow> periods_overlapping(const TimeAxis& axis, const Bounds& bounds,
                                                       std::int64_t move_first = 0,
                                                       std::int64_t move_last = 0) {
  const TimeGranularity g = axis.granularity;
  TimePoint first = g.truncate(bounds.start);
  TimePoint last = g.truncate(last_instant(bounds));
  if (move_first != 0) first = g.advance(first, move_first);
  if (move_last != 0) last = g.advance(last, move_last);
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

// One integer of a window text, or nullopt.
std::optional<std::int64_t> read_integer(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

// ---- DepMapping ----

DepMapping DepMapping::window(std::int64_t first, std::int64_t last) {
  if (last < first) {
    throw std::invalid_argument("window " + std::to_string(first) + ".." + std::to_string(last) +
                                " runs backwards (its first end must not be after its last)");
  }
  DepMapping m;
  m.kind_ = Kind::window;
  m.first_ = first;
  m.last_ = last;
  return m;
}

DepMapping DepMapping::parse_window(std::string_view text) {
  const std::size_t dots = text.find("..");
  const std::optional<std::int64_t> first =
      read_integer(dots == std::string_view::npos ? text : text.substr(0, dots));
  const std::optional<std::int64_t> last =
      dots == std::string_view::npos ? first : read_integer(text.substr(dots + 2));
  if (!first || !last) {
    throw std::invalid_argument("window '" + std::string(text) +
                                "' is not two whole numbers of partitions joined by '..' "
                                "(like -6..0)");
  }
  return window(*first, *last);
}

DepMapping DepMapping::all() {
  DepMapping m;
  m.kind_ = Kind::all;
  return m;
}

std::string DepMapping::to_string() const {
  switch (kind_) {
    case Kind::overlap:
      return "overlap";
    case Kind::all:
      return "all";
    case Kind::window:
      if (first_ == last_) return "offset " + std::to_string(first_);
      return "window " + std::to_string(first_) + ".." + std::to_string(last_);
  }
  return "overlap";
}

std::string DepMapping::to_definition() const {
  switch (kind_) {
    case Kind::overlap:
      return "{}";
    case Kind::all:
      return R"({"all":true})";
    case Kind::window:
      if (first_ == last_) return R"({"offset":)" + std::to_string(first_) + "}";
      return R"({"window":")" + std::to_string(first_) + ".." + std::to_string(last_) + "\"}";
  }
  return "{}";
}

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

TimePoint PartitionSpan::start_of(std::int64_t i) const {
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
    const TimePoint start = start_of(static_cast<std::int64_t>(index));
    return std::make_shared<TimePartitionWindow>(start, start, granularity_);
  }
  return window_->partition_at(index)->as_window();
}

Bounds PartitionSpan::bounds(PartitionRange range) const {
  return bounds_of(static_cast<std::int64_t>(range.first), static_cast<std::int64_t>(range.last));
}

Bounds PartitionSpan::bounds_of(std::int64_t first, std::int64_t last) const {
  return {start_of(first), start_of(last + 1)};
}

std::optional<PartitionRange> PartitionSpan::overlapping(const Bounds& b, std::int64_t move_first,
                                                         std::int64_t move_last) const {
  const auto n = static_cast<std::int64_t>(size_);
  std::int64_t lo = granularity_.periods_between(first_, b.start) + move_first;
  std::int64_t hi = granularity_.periods_between(first_, last_instant(b)) + move_last;
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

std::optional<std::string> PartitionMapping::refusal(const PartitionConfig* upstream,
                                                     const PartitionConfig* downstream,
                                                     const DepMapping& declared, bool self) {
  if (self && !declared.reads_only_earlier()) {
    return "a dependency on itself must read earlier partitions only (a negative offset, or a "
           "window ending below 0), or it is a cycle; " +
           declared.to_string() + " is not";
  }
  switch (declared.kind()) {
    case DepMapping::Kind::all:
      return std::nullopt;
    case DepMapping::Kind::window:
      if (upstream == nullptr || downstream == nullptr || !upstream->time_axis() ||
          !downstream->time_axis()) {
        return declared.to_string() +
               " counts periods of time: both assets must be partitioned by time";
      }
      return std::nullopt;
    case DepMapping::Kind::overlap:
      break;
  }
  if (upstream == nullptr || downstream == nullptr) return std::nullopt;
  return refusal(*upstream, *downstream);
}

PartitionMapping PartitionMapping::between(const PartitionConfig* upstream,
                                           const PartitionConfig* downstream,
                                           const DepMapping& declared) {
  if (upstream == nullptr || downstream == nullptr ||
      refusal(upstream, downstream, declared, false) ||
      declared.kind() == DepMapping::Kind::all) {
    return PartitionMapping(Rule::every, upstream);
  }
  if (declared.kind() == DepMapping::Kind::window) {
    return PartitionMapping(Rule::shifted, upstream, declared.first(), declared.last());
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
    case Rule::bounds:
    case Rule::shifted: {
      const std::optional<TimePartitionWindow> time = window.as_time_window();
      if (!time) return window.clone();
      std::optional<TimePartitionWindow> reads =
          periods_overlapping(*upstream_->time_axis(), time->bounds(), first_, last_);
      if (!reads) return nullptr;
      return std::make_unique<TimePartitionWindow>(*reads);
    }
  }
  return nullptr;
}

std::unique_ptr<PartitionWindow> PartitionMapping::downstream_window(
    const PartitionWindow& upstream, const PartitionConfig& downstream) const {
  if (rule_ == Rule::same) return upstream.clone();
  const std::optional<TimePartitionWindow> time = upstream.as_time_window();
  const std::optional<TimeAxis> axis = downstream.time_axis();
  if ((rule_ != Rule::bounds && rule_ != Rule::shifted) || !time || !axis) return nullptr;
  // A downstream partition overlapping periods [lo, hi] reads [lo + first, hi + last]: it
  // reads `upstream` exactly when it overlaps `upstream` moved back.
  const TimeGranularity g = time->granularity();
  const TimePoint first = g.advance(time->start(), -last_);
  const TimePoint last = g.advance(time->end(), -first_);
  std::optional<TimePartitionWindow> readers =
      periods_overlapping(*axis, {first, g.bounds(last).end});
  if (!readers) return nullptr;
  return std::make_unique<TimePartitionWindow>(*readers);
}

std::unique_ptr<PartitionWindow> PartitionMapping::grown_share(
    const PartitionWindow& upstream_share, const PartitionWindow& downstream_share,
    bool self) const {
  if (rule_ != Rule::shifted) return nullptr;
  const std::optional<TimePartitionWindow> own = upstream_share.as_time_window();
  std::unique_ptr<PartitionWindow> reads = upstream_window(downstream_share);
  if (!own || reads == nullptr) return nullptr;
  const std::optional<TimePartitionWindow> more = reads->as_time_window();
  const TimeGranularity g = own->granularity();
  TimePoint first = std::min(own->start(), more->start());
  const TimePoint last = std::max(own->end(), more->end());
  const std::optional<TimePoint> start = upstream_->time_axis()->start;
  if (self && start) first = std::min(first, g.truncate(*start));
  if (first == own->start() && last == own->end()) return nullptr;
  return std::make_unique<TimePartitionWindow>(first, last, g);
}

std::vector<std::unique_ptr<PartitionWindow>> PartitionMapping::outside(
    const PartitionWindow& reads, const PartitionWindow& covered) {
  std::vector<std::unique_ptr<PartitionWindow>> out;
  const std::optional<TimePartitionWindow> r = reads.as_time_window();
  const std::optional<TimePartitionWindow> c = covered.as_time_window();
  if (!r || !c || r->granularity() != c->granularity()) return out;
  const TimeGranularity g = r->granularity();
  if (r->start() < c->start()) {
    out.push_back(std::make_unique<TimePartitionWindow>(
        r->start(), std::min(r->end(), g.advance(c->start(), -1)), g));
  }
  if (r->end() > c->end()) {
    out.push_back(std::make_unique<TimePartitionWindow>(
        std::max(r->start(), g.advance(c->end(), 1)), r->end(), g));
  }
  return out;
}

std::optional<PartitionRange> PartitionMapping::upstream_of(const PartitionSpan& down,
                                                            PartitionRange range,
                                                            const PartitionSpan& up) const {
  switch (rule_) {
    case Rule::bounds:
      if (down.timed() && up.timed()) return up.overlapping(down.bounds(range));
      break;
    case Rule::shifted:
      if (down.timed() && up.timed()) return up.overlapping(down.bounds(range), first_, last_);
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
    case Rule::shifted:
      // A downstream partition reads [lo + first, hi + last] of the periods [lo, hi] it
      // overlaps; that meets `range` exactly when [lo, hi] meets range moved back.
      if (down.timed() && up.timed()) {
        return down.overlapping(
            up.bounds_of(static_cast<std::int64_t>(range.first) - last_,
                         static_cast<std::int64_t>(range.last) - first_));
      }
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
