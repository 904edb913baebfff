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

// check_partitions' last step for files and objects, whose `checks` have compared each
// partition's own file or object with its record: each partition still missing is counted on
// its own through `destination`, so that a partition of another granularity covering it makes it
// present, while no other partition's data is parsed (a truncated one would not parse).
std::vector<PartitionCheck> covered_elsewhere(Destination& destination, const DatasetRef& dataset,
                                              const PartitionWindow& window,
                                              std::vector<PartitionCheck> checks);

// The position of each of the window's keys.
std::unordered_map<std::string, std::size_t> key_slots(const PartitionWindow& window);

class WindowIndex {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  WindowIndex(const PartitionWindow& window, std::string column);

  std::size_t size() const { return size_; }
  // The index of the partition holding `value`, or npos when it lies outside the window.
  // Throws DestinationError when the value cannot denote a partition.
  std::size_t locate(const Value& value);
  // locate() for rows that mostly arrive grouped by partition: a value equal to the one placed
  // before is not located again. A null value lies outside (npos).
  std::size_t place(const Value& value);
  // For a time window: the start of the stored partition `key`, of any time granularity, when
  // its period overlaps the window (a monthly object may hold rows of a daily window); nullopt
  // for a key that is no time period or lies outside.
  std::optional<TimePoint> overlap_start(const std::string& key) const;
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
  // The value place() saw last and where it went.
  Value placed_value_;
  std::size_t placed_index_ = npos;
  bool placed_ = false;
};

// How storage that keeps one object per partition key (files, S3 objects) files the rows of a
// write without a window to a partitioned dataset: each row under the key of the partition
// holding it (PartitionConfig::key_holding), the keys numbered in the order they first appear.
class KeyRouter {
 public:
  explicit KeyRouter(const DatasetRef& dataset);

  // Row indices of `table` per key of keys(), which grows by the keys this table brings. Throws
  // DestinationError naming the first row no partition holds, or a missing partition column.
  std::vector<std::vector<std::size_t>> split(const Table& table);
  // The key of keys() holding each row of `table`; throws as split() does.
  std::vector<std::size_t> slots(const Table& table);
  const std::vector<std::string>& keys() const { return keys_; }
  bool holds(const std::string& key) const { return slot_.count(key) != 0; }

 private:
  const DatasetRef& dataset_;
  std::vector<std::string> keys_;
  std::unordered_map<std::string, std::size_t> slot_;
};

// Throws DestinationError naming the first row of `table` that no partition of the dataset
// holds: a write without a window to a partitioned dataset files every row under a partition.
void check_every_row_held(const DatasetRef& dataset, const Table& table);

// The rows of a window as storage that keeps one object per partition key (files, S3 objects)
// reads them: every partition's rows, in window order, counted per partition.
struct WindowRows {
  Table rows;
  std::vector<std::size_t> counts;
  std::vector<bool> written;  // whether the partition's own object exists
};

// Gathers WindowRows from the objects that may hold rows of a window, taken in window order
// (candidates of another granularity included): each object's rows are decoded into table(),
// then end_object() names the object's key. finish() places every row and drops those outside.
class WindowRowsBuilder {
 public:
  WindowRowsBuilder(const PartitionWindow& window, WindowIndex& index, const Schema* declared);

  Table& table() { return rows_; }
  // The rows added since the last call were the object stored under `key`; `present` is false
  // when there was no such object.
  void end_object(const std::string& key, bool present);
  WindowRows finish() &&;

 private:
  WindowIndex& index_;
  Table rows_;
  std::unordered_map<std::string, std::size_t> slot_;  // the window's keys -> position
  std::vector<std::size_t> ends_;                      // where each object's rows end
  std::vector<std::size_t> slots_;                     // each object's slot, or npos
  std::vector<bool> written_;
};

// The filters that select the rows of `window`'s partitions in `column`: the window's own (the
// union of its partitions) when `by_union`, otherwise one per partition.
std::vector<Filter> window_filters(const PartitionWindow& window, const std::string& column,
                                   bool by_union);

// The rows of a window (selected by its filter) in window order: partition by partition,
// storage order inside each; rows of no partition of the window are left out. The rows of a
// window of one partition come back as they are.
Table in_window_order(Table rows, const PartitionWindow& window, const std::string& column);

}  // namespace interloper::detail
