#include <algorithm>
#include <stdexcept>

#include "interloper/data/time_value.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/partitioning/definition.hpp"

namespace interloper {

// ---- TimePartition ----

TimePartition TimePartition::from_key(std::string_view key) {
  const auto g = TimeGranularity::infer(key);
  if (!g) {
    throw std::invalid_argument("invalid time partition key '" + std::string(key) +
                                "' (expected YYYY, YYYY-Qn, YYYY-MM, YYYY-Www, YYYY-MM-DD or "
                                "YYYY-MM-DDTHH)");
  }
  return TimePartition(g->parse(key), *g);
}

TimePartitionWindow TimePartition::window() const {
  return TimePartitionWindow(value_, value_, granularity_);
}

Filter TimePartition::filter(std::string column) const {
  const Bounds b = bounds();
  return Filter::range(std::move(column), b.start, b.end);
}

std::unique_ptr<PartitionWindow> TimePartition::as_window() const {
  return std::make_unique<TimePartitionWindow>(window());
}

std::unique_ptr<Partition> TimePartition::clone() const {
  return std::make_unique<TimePartition>(*this);
}

// ---- TimePartitionWindow ----

TimePartitionWindow::TimePartitionWindow(TimePoint start, TimePoint end,
                                         TimeGranularity granularity)
    : start_(granularity.truncate(start)),
      end_(granularity.truncate(end)),
      granularity_(granularity) {
  const std::int64_t n = granularity.periods_between(start_, end_);
  if (n < 0) {
    throw std::invalid_argument("time window ends before it starts: " + granularity.format(start_) +
                                ".." + granularity.format(end_));
  }
  size_ = static_cast<std::size_t>(n) + 1;
}

TimePartitionWindow TimePartitionWindow::parse(std::string_view text) {
  const std::size_t dots = text.find("..");
  const std::string_view a = dots == std::string_view::npos ? text : text.substr(0, dots);
  const std::string_view b = dots == std::string_view::npos ? text : text.substr(dots + 2);
  const auto ga = TimeGranularity::infer(a);
  const auto gb = TimeGranularity::infer(b);
  if (!ga || !gb || *ga != *gb) {
    throw std::invalid_argument("invalid time window '" + std::string(text) +
                                "' (expected KEY or KEY..KEY, both keys of the same shape)");
  }
  try {
    return TimePartitionWindow(ga->parse(a), ga->parse(b), *ga);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("invalid time window '" + std::string(text) + "': " + e.what());
  }
}

std::optional<TimePartitionWindow> TimePartitionWindow::lookback(
    TimePoint now, std::int64_t lookback, std::int64_t offset, TimeGranularity granularity,
    std::optional<TimePoint> start, std::string_view time_zone) {
  if (lookback < 1) {
    throw std::invalid_argument("lookback must be at least 1, got " + std::to_string(lookback));
  }
  if (offset < 0) {
    throw std::invalid_argument("offset must not be negative, got " + std::to_string(offset));
  }
  // Hour keys are UTC labels; the zone is still resolved so a bad name never goes unnoticed.
  const TimePoint local_now = to_local(now, time_zone);
  const TimePoint civil_now = granularity == TimeGranularity::HOUR ? now : local_now;
  const TimePoint last = granularity.advance(civil_now, -offset);
  TimePoint first = granularity.advance(last, -(lookback - 1));
  if (start) {
    const TimePoint earliest = granularity.truncate(*start);
    if (last < earliest) return std::nullopt;
    first = std::max(first, earliest);
  }
  return TimePartitionWindow(first, last, granularity);
}

TimePartition TimePartitionWindow::at(std::size_t index) const {
  if (index >= size_) {
    throw std::out_of_range("partition index " + std::to_string(index) + " is outside window " +
                            to_string() + " of " + std::to_string(size_) + " partitions");
  }
  return TimePartition(granularity_.advance(start_, static_cast<std::int64_t>(index)),
                       granularity_);
}

std::vector<std::string> TimePartitionWindow::keys() const {
  std::vector<std::string> out;
  out.reserve(size_);
  for (TimePartition p : *this) out.push_back(p.key());
  return out;
}

std::string TimePartitionWindow::to_string() const {
  if (size_ == 1) return granularity_.format(start_);
  return granularity_.format(start_) + ".." + granularity_.format(end_);
}

bool TimePartitionWindow::contains(const Partition& partition) const {
  const auto* p = dynamic_cast<const TimePartition*>(&partition);
  return p != nullptr && contains(*p);
}

std::unique_ptr<Partition> TimePartitionWindow::partition_at(std::size_t index) const {
  return std::make_unique<TimePartition>(at(index));
}

Filter TimePartitionWindow::filter(std::string column) const {
  const Bounds b = bounds();
  return Filter::range(std::move(column), b.start, b.end);
}

std::unique_ptr<PartitionWindow> TimePartitionWindow::clone() const {
  return std::make_unique<TimePartitionWindow>(*this);
}

bool TimePartitionWindow::same_partitions(const PartitionWindow& other) const {
  const std::optional<TimePartitionWindow> time = other.as_time_window();
  return time && *time == *this;
}

// ---- TimePartitionConfig ----

namespace {

std::string describe(TimePoint t) { return t.is_midnight() ? t.date_string() : t.to_string(); }

}  // namespace

void TimePartitionConfig::check(const PartitionWindow& window) const {
  const auto* w = dynamic_cast<const TimePartitionWindow*>(&window);
  if (w == nullptr) {
    throw PartitionError("window of kind '" + std::string(window.kind()) +
                         "' given to a time-partitioned asset");
  }
  if (w->granularity() != granularity_) {
    throw PartitionError("window " + w->to_string() + " is " +
                         std::string(w->granularity().name()) + "-partitioned but the asset is " +
                         std::string(granularity_.name()) + "-partitioned");
  }
  if (w->size() > 1 && !allow_window()) {
    throw PartitionError("window " + w->to_string() + " has " + std::to_string(w->size()) +
                         " partitions but allow_window is off");
  }
  if (start_ && w->start() < granularity_.truncate(*start_)) {
    throw PartitionError("window " + w->to_string() + " reaches before start " + describe(*start_));
  }
}

TimePartition TimePartitionConfig::partition(std::string_view key) const {
  return TimePartition(granularity_.parse(key), granularity_);
}

TimePartitionWindow TimePartitionConfig::window(std::string_view start_key,
                                                std::string_view end_key) const {
  return TimePartitionWindow(granularity_.parse(start_key), granularity_.parse(end_key),
                             granularity_);
}

std::unique_ptr<Partition> TimePartitionConfig::make_partition(std::string_view key) const {
  return std::make_unique<TimePartition>(partition(key));
}

std::unique_ptr<PartitionWindow> TimePartitionConfig::make_window(std::string_view start_key,
                                                                  std::string_view end_key) const {
  return std::make_unique<TimePartitionWindow>(window(start_key, end_key));
}

bool TimePartitionConfig::compatible(const PartitionConfig& other) const {
  const auto* o = dynamic_cast<const TimePartitionConfig*>(&other);
  return o != nullptr && o->granularity_ == granularity_;
}

std::string TimePartitionConfig::to_definition() const {
  nlohmann::ordered_json j;
  j["kind"] = "time";
  j["column"] = column();
  j["granularity"] = std::string(granularity_.name());
  j["allow_window"] = allow_window();
  j["start"] = start_ ? nlohmann::ordered_json(start_->to_string()) : nullptr;
  return j.dump();
}

std::optional<std::int64_t> TimePartitionConfig::ordinal(const Partition& partition) const {
  const auto* time = dynamic_cast<const TimePartition*>(&partition);
  if (time == nullptr) return std::nullopt;
  return time->granularity().periods_between(TimePoint{}, time->value());
}

std::optional<std::string> TimePartitionConfig::key_holding(const Value& value) const {
  const std::optional<TimePoint> t = detail::value_time(value);
  if (!t) return std::nullopt;
  return granularity_.format(*t);
}

std::unique_ptr<PartitionWindow> TimePartitionConfig::default_window(TimePoint now,
                                                                     std::size_t recent) const {
  const TimePoint end = granularity_.truncate(now);
  const auto back = static_cast<std::int64_t>(std::max<std::size_t>(recent, 1)) - 1;
  const TimePoint start =
      start_ ? granularity_.truncate(*start_) : granularity_.advance(end, -back);
  return std::make_unique<TimePartitionWindow>(start, std::max(start, end), granularity_);
}

std::unique_ptr<PartitionWindow> TimePartitionConfig::read_window(std::string_view text,
                                                                  TextForm form) const {
  if (form == TextForm::key) {
    // A key of another shape is read in this granularity, for the error it gives.
    if (!TimeGranularity::infer(text)) return make_partition(text)->as_window();
    return TimePartition::from_key(text).as_window();
  }
  const std::string_view first = text.substr(0, text.find(".."));
  if (!TimeGranularity::infer(first)) return parse_window(text);
  return TimePartitionWindow::parse(text).clone();
}

std::optional<TimeAxis> TimePartitionConfig::time_axis() const {
  return TimeAxis{column(), granularity_, start_};
}

std::unique_ptr<PartitionConfig> TimePartitionConfig::clone() const {
  return std::make_unique<TimePartitionConfig>(*this);
}

namespace detail {

std::unique_ptr<PartitionConfig> time_config_from_definition(std::string_view json) {
  const auto j = parse_definition(json, "time", {"column", "granularity", "allow_window", "start"});
  const auto& start = j["start"];
  if (!j["column"].is_string() || !j["granularity"].is_string() ||
      !j["allow_window"].is_boolean() || !(start.is_null() || start.is_string())) {
    throw PartitionError("malformed partition definition " + quote_definition(json) +
                         ": expected string column and granularity, boolean allow_window and "
                         "null or string start");
  }
  try {
    TimePartitionOptions options;
    options.granularity = TimeGranularity::from_name(j["granularity"].get<std::string>());
    options.allow_window = j["allow_window"].get<bool>();
    if (start.is_string()) options.start = TimePoint::parse(start.get<std::string>());
    return std::make_unique<TimePartitionConfig>(j["column"].get<std::string>(), options);
  } catch (const std::invalid_argument& e) {
    throw PartitionError("malformed partition definition " + quote_definition(json) + ": " +
                         e.what());
  }
}

}  // namespace detail

}  // namespace interloper
