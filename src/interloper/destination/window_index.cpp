#include "interloper/destination/window_index.hpp"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

namespace interloper::detail {

namespace {

// Howard Hinnant's civil_from_days: exact for the proleptic Gregorian calendar.
void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += (m <= 2);
}

void two(char* out, unsigned v) {
  out[0] = static_cast<char>('0' + v / 10);
  out[1] = static_cast<char>('0' + v % 10);
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

}  // namespace

std::size_t format_date(std::int64_t days, char* out) {
  std::int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  if (y < 0 || y > 9999) {
    std::string s = fmt::format("{:04}-{:02}-{:02}", y, m, d);
    s.copy(out, 19);
    return std::min<std::size_t>(s.size(), 19);
  }
  auto yy = static_cast<unsigned>(y);
  two(out, yy / 100);
  two(out + 2, yy % 100);
  out[4] = '-';
  two(out + 5, m);
  out[7] = '-';
  two(out + 8, d);
  return 10;
}

std::size_t format_timestamp(std::int64_t seconds, char* out) {
  std::int64_t days = floor_div(seconds, 86400);
  auto rest = static_cast<unsigned>(seconds - days * 86400);
  std::size_t n = format_date(days, out);
  out[n] = 'T';
  two(out + n + 1, rest / 3600);
  out[n + 3] = ':';
  two(out + n + 4, rest / 60 % 60);
  out[n + 6] = ':';
  two(out + n + 7, rest % 60);
  return n + 9;
}

TimePoint time_of(const Value& value, std::string_view column) {
  switch (value.type()) {
    case DataType::date:
      return TimePoint(value.as_date());
    case DataType::timestamp:
      return TimePoint(value.as_timestamp());
    case DataType::string:
      try {
        return TimePoint::parse(value.as_string());
      } catch (const std::invalid_argument&) {
        throw DestinationError(fmt::format("partition column '{}': '{}' is not a date or timestamp",
                                           column, value.as_string()));
      }
    default:
      throw DestinationError(
          fmt::format("partition column '{}': value {} of type {} is not a "
                      "date or timestamp",
                      column, value.to_string(), type_name(value.type())));
  }
}

std::string key_of(const Value& value) {
  return value.type() == DataType::string ? value.as_string() : value.to_string();
}

WindowIndex::WindowIndex(const PartitionWindow& window, std::string column)
    : window_(window), column_(std::move(column)), size_(window.size()) {
  time_ = dynamic_cast<const TimePartitionWindow*>(&window);
  if (time_) {
    bounds_ = time_->bounds();
    return;
  }
  if (const auto* list = dynamic_cast<const ListPartitionWindow*>(&window)) {
    list_ = true;
    keys_ = list->values();
    for (std::size_t i = 0; i < keys_.size(); ++i) key_index_.emplace(keys_[i], i);
    return;
  }
  keys_ = window.keys();
  filters_.reserve(size_);
  for (std::size_t i = 0; i < size_; ++i)
    filters_.push_back(window.partition_at(i)->filter(column_));
}

std::size_t WindowIndex::locate(const Value& value) {
  if (time_) {
    TimePoint t = time_of(value, column_);
    if (cached_index_ != npos && cached_start_ <= t && t < cached_end_) return cached_index_;
    if (t < bounds_->start || !(t < bounds_->end)) return npos;
    TimeGranularity g = time_->granularity();
    auto index = static_cast<std::size_t>(g.periods_between(time_->start(), t));
    Bounds b = g.bounds(t);
    cached_start_ = b.start;
    cached_end_ = b.end;
    cached_index_ = index;
    return index;
  }
  if (value.is_null()) return npos;
  if (list_) {
    auto it = key_index_.find(key_of(value));
    return it == key_index_.end() ? npos : it->second;
  }
  for (std::size_t i = 0; i < filters_.size(); ++i) {
    const Filter& f = filters_[i];
    bool hit = f.kind() == Filter::Kind::range ? f.matches(time_of(value, column_))
                                               : f.matches(std::string_view(key_of(value)));
    if (hit) return i;
  }
  return npos;
}

std::vector<std::vector<std::size_t>> WindowIndex::split(const DatasetRef& dataset,
                                                         const Table& table) {
  std::vector<std::vector<std::size_t>> parts(size_);
  if (table.num_rows() == 0) return parts;
  auto c = table.column_index(column_);
  if (!c) {
    throw DestinationError(fmt::format("dataset '{}': rows lack the partition column '{}'",
                                       dataset_name(dataset), column_));
  }
  const auto& cells = table.column(*c);
  for (std::size_t r = 0; r < cells.size(); ++r) {
    if (cells[r].is_null()) {
      throw DestinationError(fmt::format("dataset '{}': row {} has a null partition column '{}'",
                                         dataset_name(dataset), r, column_));
    }
    std::size_t i = locate(cells[r]);
    if (i == npos) {
      throw DestinationError(fmt::format("dataset '{}': row {} ('{}' = {}) lies outside window {}",
                                         dataset_name(dataset), r, column_, cells[r].to_string(),
                                         window_.to_string()));
    }
    parts[i].push_back(r);
  }
  return parts;
}

std::string dataset_name(const DatasetRef& dataset) {
  return dataset.source.empty() ? dataset.asset : dataset.source + "." + dataset.asset;
}

}  // namespace interloper::detail
