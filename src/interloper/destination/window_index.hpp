// Internal: which partition of a window a row belongs to.
//
// Destinations place rows by arithmetic on the partition column (windows of time periods, as
// PartitionWindow::as_time_window gives them) or by key lookup (windows whose every partition
// holds the rows equal to its key, as a list's do); other kinds fall back to each partition's
// Filter.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/dataset.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/time.hpp"

namespace interloper::detail {

// The time a partition-column value denotes: a date (its midnight), a timestamp, or an ISO
// string (see value_time). Throws DestinationError naming `column` and the value otherwise.
TimePoint time_of(const Value& value, std::string_view column);
// The list key a value denotes (strings as they are, other values as text).
std::string key_of(const Value& value);

// Whether a drop of `window` removes the stored partition `key`, for storage that keeps one
// partition per key (files, objects): for a time window, a time key of any granularity whose
// bounds lie inside the window's; for other kinds, a key of the window.
bool drop_covers(const PartitionWindow& window, const std::string& key);

class WindowIndex {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  WindowIndex(const PartitionWindow& window, std::string column);

  std::size_t size() const { return size_; }
  // The index of the partition holding `value`, or npos when it lies outside the window.
  // Throws DestinationError when the value cannot denote a partition.
  std::size_t locate(const Value& value);
  // For time windows, the half-open bounds of the whole window.
  const std::optional<Bounds>& bounds() const { return bounds_; }
  // The keys of the window's partitions (time windows: empty).
  const std::vector<std::string>& keys() const { return keys_; }
  const std::string& column() const { return column_; }
  bool is_time() const { return time_.has_value(); }
  bool is_list() const { return list_; }

  // Row indices of `table` per partition, in window order. Throws DestinationError naming the
  // first row outside the window or a missing partition column.
  std::vector<std::vector<std::size_t>> split(const DatasetRef& dataset, const Table& table);

 private:
  const PartitionWindow& window_;
  std::string column_;
  std::size_t size_;
  std::optional<TimePartitionWindow> time_;
  bool list_ = false;
  std::optional<Bounds> bounds_;
  // Cache of the last partition hit (rows usually arrive grouped).
  TimePoint cached_start_, cached_end_;
  std::size_t cached_index_ = npos;
  std::vector<std::string> keys_;
  std::unordered_map<std::string, std::size_t> key_index_;
  std::vector<Filter> filters_;  // other kinds
};

}  // namespace interloper::detail
