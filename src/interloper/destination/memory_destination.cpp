// MemoryDestination: the reference implementation of the Destination contract.
//
// Time partitions are stored as slots keyed by their start, each remembering its end, so that
// reads and counts scope by bounds (a monthly window over daily slots, or the reverse, selects
// the right rows). List partitions and other kinds are stored by key, which for a list is the
// same as selecting by membership because every row of a slot carries its key.
#include <fmt/format.h>

#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "interloper/data/time_value.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper {

namespace {

struct TimeSlot {
  TimePoint end;
  Table rows;
};

struct StoredDataset {
  std::optional<Schema> schema;
  std::vector<std::string> retired;    // see Destination::retired_columns
  Table whole;                         // unpartitioned datasets
  std::map<TimePoint, TimeSlot> time;  // time partitions, by start
  std::map<std::string, Table> keyed;  // list (and other) partitions, by key
};

bool overlaps(TimePoint start, const TimeSlot& slot, const Bounds& bounds) {
  return start < bounds.end && bounds.start < slot.end;
}

bool inside(TimePoint start, const TimeSlot& slot, const Bounds& bounds) {
  return !(start < bounds.start) && !(bounds.end < slot.end);
}

// The rows whose column lies inside (or, with keep_inside false, outside) bounds.
Table rows_by_bounds(const Table& rows, const std::string& column, const Bounds& bounds,
                     bool keep_inside) {
  const std::optional<std::size_t> index = rows.column_index(column);
  if (!index) return keep_inside ? Table(rows.schema()) : rows;
  std::vector<std::size_t> keep;
  const std::vector<Value>& cells = rows.column(*index);
  for (std::size_t row = 0; row < cells.size(); ++row) {
    const std::optional<TimePoint> t = detail::value_time(cells[row]);
    const bool in = t && !(*t < bounds.start) && *t < bounds.end;
    if (in == keep_inside) keep.push_back(row);
  }
  return rows.select_rows(keep);
}

// Calls visit(start, slot, fully_inside) for every slot overlapping bounds, oldest first.
template <typename Visit>
void for_each_overlapping(const std::map<TimePoint, TimeSlot>& slots, const Bounds& bounds,
                          Visit visit) {
  auto it = slots.lower_bound(bounds.start);
  if (it != slots.begin()) {
    auto before = std::prev(it);
    if (overlaps(before->first, before->second, bounds)) {
      visit(before->first, before->second, false);
    }
  }
  for (; it != slots.end() && it->first < bounds.end; ++it) {
    visit(it->first, it->second, inside(it->first, it->second, bounds));
  }
}

std::string dataset_key(const DatasetRef& dataset) {
  std::string key = dataset.source;
  key += '\0';
  key += dataset.asset;
  return key;
}

Table concatenate(const std::optional<Schema>& schema, std::vector<const Table*> pieces,
                  std::vector<Table> owned) {
  for (Table& t : owned) pieces.push_back(&t);
  if (pieces.size() == 1) return *pieces.front();
  Table result = schema ? Table(*schema) : Table();
  for (const Table* piece : pieces) result.append_table(*piece);
  return result;
}

}  // namespace

struct MemoryDestination::State {
  std::mutex mutex;
  std::map<std::string, StoredDataset> datasets;

  StoredDataset* find(const DatasetRef& dataset) {
    auto it = datasets.find(dataset_key(dataset));
    return it == datasets.end() ? nullptr : &it->second;
  }
};

namespace {

// Joins touching empty slots of one schema around and inside `bounds` into one: a slot holds
// rows of any span, so a long run of partitions written empty (a backfill of an asset that
// found nothing) costs one slot, not one per partition, and still reads as written.
void coalesce_empty(std::map<TimePoint, TimeSlot>& slots, const Bounds& bounds) {
  auto it = slots.lower_bound(bounds.start);
  if (it != slots.begin()) --it;
  while (it != slots.end() && it->first < bounds.end) {
    auto next = std::next(it);
    if (next == slots.end()) break;
    if (it->second.end == next->first && it->second.rows.empty() && next->second.rows.empty() &&
        it->second.rows.schema() == next->second.rows.schema()) {
      it->second.end = next->second.end;
      slots.erase(next);
    } else {
      it = next;
    }
  }
}

// Replaces the slots a time window covers with one slot per partition; a slot reaching past
// the window keeps its outside rows as slots of their own before and after it.
void replace_time(StoredDataset& stored, const TimePartitionWindow& window,
                  const std::string& column, std::vector<Table>& parts) {
  const Bounds bounds = window.bounds();
  const TimeGranularity granularity = window.granularity();
  std::vector<std::pair<TimePoint, TimeSlot>> trimmed;
  std::vector<TimePoint> erased;
  for_each_overlapping(
      stored.time, bounds, [&](TimePoint start, const TimeSlot& slot, bool fully_inside) {
        erased.push_back(start);
        if (fully_inside) return;
        if (start < bounds.start) {
          const Bounds before{start, bounds.start};
          trimmed.emplace_back(
              start, TimeSlot{bounds.start, rows_by_bounds(slot.rows, column, before, true)});
        }
        if (bounds.end < slot.end) {
          const Bounds after{bounds.end, slot.end};
          trimmed.emplace_back(bounds.end,
                               TimeSlot{slot.end, rows_by_bounds(slot.rows, column, after, true)});
        }
      });
  for (TimePoint start : erased) stored.time.erase(start);
  for (auto& [start, slot] : trimmed) stored.time.emplace(start, std::move(slot));
  TimePoint start = bounds.start;
  auto hint = stored.time.end();
  for (Table& part : parts) {
    const TimePoint end = granularity.advance(start, 1);
    hint = stored.time.emplace_hint(hint, start, TimeSlot{end, std::move(part)});
    ++hint;
    start = end;
  }
  coalesce_empty(stored.time, bounds);
}

// A write without a window to a partitioned dataset: every partition goes, and the rows take
// their places. Time rows make one slot from the earliest to just past the latest (a slot may
// span any stretch; reads and counts cut it by bounds), other kinds one entry per value.
// Throws DestinationError for a row without a partition value, before anything changes.
void replace_everything(StoredDataset& stored, const DatasetRef& dataset, Table& rows) {
  const std::string& column = dataset.partitioning->column();
  const std::optional<std::size_t> c = rows.column_index(column);
  if (!c && rows.num_rows() > 0) {
    throw DestinationError(fmt::format("dataset '{}': the rows lack the partition column '{}'",
                                       detail::dataset_name(dataset), column));
  }
  const bool by_time = dataset.partitioning->time_axis().has_value();
  std::optional<TimePoint> first, last;
  std::map<std::string, std::vector<std::size_t>> by_value;
  for (std::size_t r = 0; c && r < rows.num_rows(); ++r) {
    const Value& cell = rows.column(*c)[r];
    if (by_time) {
      const std::optional<TimePoint> t = detail::value_time(cell);
      if (!t) {
        throw DestinationError(fmt::format("dataset '{}': row {} has no time in '{}' ({})",
                                           detail::dataset_name(dataset), r + 1, column,
                                           cell.to_string()));
      }
      if (!first || *t < *first) first = *t;
      if (!last || *last < *t) last = *t;
    } else {
      if (cell.is_null()) {
        throw DestinationError(fmt::format("dataset '{}': row {} has no value in '{}'",
                                           detail::dataset_name(dataset), r + 1, column));
      }
      by_value[cell.to_string()].push_back(r);
    }
  }
  stored.time.clear();
  stored.keyed.clear();
  if (first) {
    stored.time.emplace(*first, TimeSlot{TimePoint::from_epoch_seconds(last->epoch_seconds() + 1),
                                         std::move(rows)});
  }
  for (auto& [value, indices] : by_value) stored.keyed[value] = rows.select_rows(indices);
}

}  // namespace

// Stages each batch per partition (validated as it arrives) and swaps the partitions in at
// commit, so a failed batch leaves the stored rows untouched.
class MemoryDestination::Writer final : public WindowWriter {
 public:
  Writer(MemoryDestination::State& state, DatasetRef dataset, const PartitionWindow* window)
      : state_(state), dataset_(std::move(dataset)), window_(window) {
    parts_.resize(window_ != nullptr && dataset_.partitioning != nullptr ? window_->size() : 1);
  }

  void append(const Table& batch) override {
    usable();
    unusable_ = true;  // until this batch is in
    Schema next;
    try {
      next = started_ ? Schema::unify(schema_, batch.schema()) : batch.schema();
    } catch (const DataError& e) {
      throw DestinationError(
          fmt::format("dataset '{}': {}", detail::dataset_name(dataset_), e.what()));
    }
    if (window_ == nullptr && dataset_.partitioning != nullptr) {
      detail::check_every_row_held(dataset_, batch);
    }
    if (window_ == nullptr || dataset_.partitioning == nullptr) {
      parts_[0].append_table(batch);
    } else {
      std::vector<Table> split = split_by_partition(dataset_, *window_, batch);
      for (std::size_t i = 0; i < split.size(); ++i) parts_[i].append_table(split[i]);
    }
    schema_ = std::move(next);
    started_ = true;
    unusable_ = false;
  }

  std::int64_t commit() override {
    usable();
    unusable_ = true;
    std::int64_t rows = 0;
    for (const Table& part : parts_) rows += static_cast<std::int64_t>(part.num_rows());
    replace(state_, dataset_, window_, parts_, schema_);
    return rows;
  }

 private:
  // Replaces what `window` covers with the staged rows, under the lock.
  static void replace(MemoryDestination::State& state, const DatasetRef& dataset,
                      const PartitionWindow* window, std::vector<Table>& parts,
                      const Schema& schema);

  void usable() const {
    if (unusable_) {
      throw DestinationError(fmt::format("dataset '{}': the writer failed or was committed",
                                         detail::dataset_name(dataset_)));
    }
  }

  MemoryDestination::State& state_;
  DatasetRef dataset_;
  const PartitionWindow* window_;
  std::vector<Table> parts_;
  Schema schema_;
  bool started_ = false;
  bool unusable_ = false;
};

MemoryDestination::MemoryDestination() : state_(std::make_unique<State>()) {}
MemoryDestination::~MemoryDestination() = default;

std::unique_ptr<WindowWriter> MemoryDestination::open_writer(const DatasetRef& dataset,
                                                             const PartitionWindow* window) {
  return std::make_unique<Writer>(*state_, dataset, window);
}

void MemoryDestination::Writer::replace(MemoryDestination::State& state, const DatasetRef& dataset,
                                        const PartitionWindow* window, std::vector<Table>& parts,
                                        const Schema& schema) {
  std::lock_guard lock(state.mutex);
  StoredDataset& stored = state.datasets[dataset_key(dataset)];
  // Replaced whole, the dataset takes the write's schema; partitioned, the stored one widens
  // with what arrives, and a clash fails the write before anything changes.
  Schema merged = detail::evolve_schema(dataset, stored.schema, schema);
  const Schema as_doubles = detail::decimals_stored_as_doubles(merged, schema);
  for (Table& part : parts) {
    if (part.num_columns() == 0) part = Table(schema);
    if (!as_doubles.empty()) part.conform(as_doubles);
  }
  if (dataset.partitioning == nullptr) {
    stored.whole = std::move(parts[0]);
  } else if (window == nullptr) {
    replace_everything(stored, dataset, parts[0]);
  } else if (const std::optional<TimePartitionWindow> time = window->as_time_window()) {
    replace_time(stored, *time, dataset.partitioning->column(), parts);
  } else {
    const std::vector<std::string> keys = window->keys();
    for (std::size_t i = 0; i < keys.size(); ++i) stored.keyed[keys[i]] = std::move(parts[i]);
  }
  stored.retired = detail::retired_columns(dataset, merged, schema, stored.retired);
  stored.schema = std::move(merged);
}

Table MemoryDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  StoredDataset* stored = state_->find(dataset);
  if (stored == nullptr) return Table();
  if (dataset.partitioning == nullptr) return stored->whole;

  std::vector<const Table*> pieces;
  std::vector<Table> owned;
  const std::string& column = dataset.partitioning->column();
  if (window == nullptr) {
    for (const auto& [start, slot] : stored->time) pieces.push_back(&slot.rows);
    // A kind that declares its partitions reads in their order; others in key order.
    if (const auto declared = dataset.partitioning->declared_window()) {
      for (const std::string& value : declared->keys()) {
        auto it = stored->keyed.find(value);
        if (it != stored->keyed.end()) pieces.push_back(&it->second);
      }
    } else {
      for (const auto& [key, rows] : stored->keyed) pieces.push_back(&rows);
    }
  } else if (const std::optional<TimePartitionWindow> time = window->as_time_window()) {
    const Bounds bounds = time->bounds();
    for_each_overlapping(stored->time, bounds,
                         [&](TimePoint, const TimeSlot& slot, bool fully_inside) {
                           if (fully_inside) {
                             pieces.push_back(&slot.rows);
                           } else {
                             owned.push_back(rows_by_bounds(slot.rows, column, bounds, true));
                           }
                         });
  } else {
    const std::vector<std::string> keys = window->keys();
    for (const std::string& key : keys) {
      auto it = stored->keyed.find(key);
      if (it != stored->keyed.end()) pieces.push_back(&it->second);
    }
  }
  if (pieces.empty() && owned.empty()) return stored->schema ? Table(*stored->schema) : Table();
  return concatenate(stored->schema, std::move(pieces), std::move(owned));
}

namespace {

// Rows and whether anything was written, for the partition `key`; `period` is its bounds when it
// is a time period (its rows then live in the time slots).
PartitionCount count_partition(const StoredDataset& stored, const DatasetRef& dataset,
                               std::string key, const std::optional<Bounds>& period) {
  PartitionCount count;
  count.key = std::move(key);
  if (period) {
    const Bounds bounds = *period;
    for_each_overlapping(
        stored.time, bounds, [&](TimePoint, const TimeSlot& slot, bool fully_inside) {
          count.written = true;
          count.rows += static_cast<std::int64_t>(
              fully_inside ? slot.rows.num_rows()
                           : rows_by_bounds(slot.rows, dataset.partitioning->column(), bounds, true)
                                 .num_rows());
        });
    return count;
  }
  auto it = stored.keyed.find(count.key);
  if (it != stored.keyed.end()) {
    count.written = true;
    count.rows = static_cast<std::int64_t>(it->second.num_rows());
  }
  return count;
}

}  // namespace

std::int64_t MemoryDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  std::lock_guard lock(state_->mutex);
  StoredDataset* stored = state_->find(dataset);
  if (stored == nullptr) return 0;
  if (dataset.partitioning == nullptr) return static_cast<std::int64_t>(stored->whole.num_rows());
  if (partition == nullptr) {
    std::int64_t total = 0;
    for (const auto& [start, slot] : stored->time) total += slot.rows.num_rows();
    for (const auto& [key, rows] : stored->keyed) total += rows.num_rows();
    return total;
  }
  const std::optional<TimePartitionWindow> time = partition->as_window()->as_time_window();
  return count_partition(*stored, dataset, partition->key(),
                         time ? std::make_optional(time->bounds()) : std::nullopt)
      .rows;
}

std::vector<PartitionCount> MemoryDestination::partition_counts(const DatasetRef& dataset,
                                                                const PartitionWindow& window) {
  std::vector<PartitionCount> counts;
  counts.reserve(window.size());
  std::lock_guard lock(state_->mutex);
  StoredDataset* stored = state_->find(dataset);
  if (const std::optional<TimePartitionWindow> time = window.as_time_window()) {
    for (const TimePartition& partition : *time) {
      if (stored == nullptr || dataset.partitioning == nullptr) {
        counts.push_back({partition.key(), 0, false});
      } else {
        counts.push_back(count_partition(*stored, dataset, partition.key(), partition.bounds()));
      }
    }
    return counts;
  }
  for (std::string& key : window.keys()) {
    if (stored == nullptr || dataset.partitioning == nullptr) {
      counts.push_back({std::move(key), 0, false});
    } else {
      counts.push_back(count_partition(*stored, dataset, std::move(key), std::nullopt));
    }
  }
  return counts;
}

std::optional<Schema> MemoryDestination::schema(const DatasetRef& dataset) {
  std::lock_guard lock(state_->mutex);
  StoredDataset* stored = state_->find(dataset);
  return stored == nullptr ? std::nullopt : stored->schema;
}

std::vector<std::string> MemoryDestination::retired_columns(const DatasetRef& dataset) {
  std::lock_guard lock(state_->mutex);
  StoredDataset* stored = state_->find(dataset);
  return stored == nullptr ? std::vector<std::string>() : stored->retired;
}

void MemoryDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  StoredDataset* stored = state_->find(dataset);
  if (stored == nullptr) return;
  if (window == nullptr || dataset.partitioning == nullptr) {
    state_->datasets.erase(dataset_key(dataset));
    return;
  }
  if (auto time = window->as_time_window()) {
    // A replace by no partitions: slots reaching past the window keep their outside rows.
    std::vector<Table> none;
    replace_time(*stored, *time, dataset.partitioning->column(), none);
    return;
  }
  for (const std::string& key : window->keys()) stored->keyed.erase(key);
}

}  // namespace interloper
