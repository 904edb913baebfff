#include "interloper/destination/window_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "interloper/data/time_value.hpp"

namespace interloper::detail {

TimePoint time_of(const Value& value, std::string_view column) {
  if (std::optional<TimePoint> t = value_time(value)) return *t;
  throw DestinationError(fmt::format("partition column '{}': {} ({}) is not a date or timestamp",
                                     column, value.to_string(), type_name(value.type())));
}

std::string key_of(const Value& value) {
  return value.type() == DataType::string ? value.as_string() : value.to_string();
}

WindowIndex::WindowIndex(const PartitionWindow& window, std::string column)
    : window_(window), column_(std::move(column)), size_(window.size()) {
  time_ = window.as_time_window();
  if (time_) {
    bounds_ = time_->bounds();
    return;
  }
  keys_ = window.keys();
  filters_.reserve(size_);
  // A partition that holds exactly the rows whose column equals its key (the list kind) is
  // found by key lookup; any other is tried by its filter.
  list_ = true;
  for (std::size_t i = 0; i < size_; ++i) {
    filters_.push_back(window.partition_at(i)->filter(column_));
    const Filter& f = filters_.back();
    list_ = list_ && f.kind() == Filter::Kind::membership && f.values().size() == 1 &&
            f.values()[0] == keys_[i];
  }
  if (!list_) return;
  filters_.clear();
  for (std::size_t i = 0; i < keys_.size(); ++i) key_index_.emplace(keys_[i], i);
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

namespace {

// The period a stored time key names, whatever its granularity; nullopt for a key that names
// none (a list key, or not one of ours).
std::optional<Bounds> stored_period(const std::string& key) {
  auto granularity = TimeGranularity::infer(key);
  if (!granularity) return std::nullopt;
  try {
    return granularity->bounds(granularity->parse(key));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::unordered_map<std::string, std::size_t> key_slots(const PartitionWindow& window) {
  const std::vector<std::string> keys = window.keys();
  std::unordered_map<std::string, std::size_t> slots;
  slots.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) slots.emplace(keys[i], i);
  return slots;
}

std::size_t WindowIndex::place(const Value& value) {
  if (value.is_null()) return npos;
  if (placed_ && value == placed_value_) return placed_index_;
  placed_index_ = locate(value);
  placed_value_ = value;
  placed_ = true;
  return placed_index_;
}

std::optional<TimePoint> WindowIndex::overlap_start(const std::string& key) const {
  if (!bounds_) return std::nullopt;
  const std::optional<Bounds> b = stored_period(key);
  if (!b || !(b->start < bounds_->end) || !(bounds_->start < b->end)) return std::nullopt;
  return b->start;
}

std::vector<std::vector<std::size_t>> WindowIndex::split(const DatasetRef& dataset,
                                                         const Table& table) {
  std::vector<std::vector<std::size_t>> parts(size_);
  if (table.num_rows() == 0) return parts;
  auto c = table.column_index(column_);
  if (!c) {
    throw DestinationError(fmt::format("dataset '{}': the rows lack the partition column '{}'",
                                       dataset_name(dataset), column_));
  }
  const auto& cells = table.column(*c);
  // Each row's partition first, so that every part is allocated once at its size.
  std::vector<std::size_t> partition_of(cells.size());
  std::vector<std::size_t> sizes(size_, 0);
  for (std::size_t r = 0; r < cells.size(); ++r) {
    if (cells[r].is_null()) {
      throw DestinationError(fmt::format("dataset '{}': row {} has a null partition column '{}'",
                                         dataset_name(dataset), r, column_));
    }
    std::size_t i;
    try {
      i = locate(cells[r]);
    } catch (const DestinationError& e) {
      // locate names the column and value; the dataset and row are known only here.
      throw DestinationError(
          fmt::format("dataset '{}': row {}: {}", dataset_name(dataset), r, e.what()));
    }
    if (i == npos) {
      throw DestinationError(fmt::format("dataset '{}': row {} ('{}' = {}) lies outside window {}",
                                         dataset_name(dataset), r, column_, cells[r].to_string(),
                                         window_.to_string()));
    }
    partition_of[r] = i;
    ++sizes[i];
  }
  for (std::size_t i = 0; i < size_; ++i) parts[i].reserve(sizes[i]);
  for (std::size_t r = 0; r < cells.size(); ++r) parts[partition_of[r]].push_back(r);
  return parts;
}

KeyRouter::KeyRouter(const DatasetRef& dataset) : dataset_(dataset) {}

std::vector<std::size_t> KeyRouter::slots(const Table& table) {
  std::vector<std::size_t> slot_of(table.num_rows());
  if (table.num_rows() == 0) return slot_of;
  const std::string& column = dataset_.partitioning->column();
  const auto c = table.column_index(column);
  if (!c) {
    throw DestinationError(fmt::format("dataset '{}': the rows lack the partition column '{}'",
                                       dataset_name(dataset_), column));
  }
  const std::vector<Value>& cells = table.column(*c);
  for (std::size_t r = 0; r < cells.size(); ++r) {
    if (r > 0 && cells[r] == cells[r - 1]) {  // rows of one partition mostly come together
      slot_of[r] = slot_of[r - 1];
      continue;
    }
    std::optional<std::string> key = dataset_.partitioning->key_holding(cells[r]);
    if (!key) {
      throw DestinationError(fmt::format(
          "dataset '{}': row {} ('{}' = {}) belongs to no partition of its {} partitioning",
          dataset_name(dataset_), r, column, cells[r].to_string(), dataset_.partitioning->kind()));
    }
    auto [it, added] = slot_.try_emplace(std::move(*key), keys_.size());
    if (added) keys_.push_back(it->first);
    slot_of[r] = it->second;
  }
  return slot_of;
}

std::vector<std::vector<std::size_t>> KeyRouter::split(const Table& table) {
  const std::vector<std::size_t> slot_of = slots(table);
  std::vector<std::vector<std::size_t>> parts(keys_.size());
  for (std::size_t r = 0; r < slot_of.size(); ++r) parts[slot_of[r]].push_back(r);
  return parts;
}

void check_every_row_held(const DatasetRef& dataset, const Table& table) {
  KeyRouter(dataset).slots(table);
}

WindowRowsBuilder::WindowRowsBuilder(const PartitionWindow& window, WindowIndex& index,
                                     const Schema* declared)
    : index_(index),
      rows_(declared ? Table(*declared) : Table()),
      slot_(key_slots(window)),
      written_(index.size(), false) {}

void WindowRowsBuilder::end_object(const std::string& key, bool present) {
  auto it = slot_.find(key);
  const std::size_t slot = it == slot_.end() ? WindowIndex::npos : it->second;
  if (present && slot != WindowIndex::npos) written_[slot] = true;
  ends_.push_back(rows_.num_rows());
  slots_.push_back(slot);
}

WindowRows WindowRowsBuilder::finish() && {
  WindowRows out;
  out.counts.assign(index_.size(), 0);
  out.written = std::move(written_);
  const std::optional<std::size_t> c = rows_.column_index(index_.column());
  std::vector<std::size_t> partition_of(rows_.num_rows(), WindowIndex::npos);
  bool own_rows_only = true;  // each object holds only rows of its own partition of the window
  for (std::size_t p = 0, r = 0; p < ends_.size(); ++p) {
    for (; r < ends_[p]; ++r) {
      const std::size_t i = c ? index_.place(rows_.column(*c)[r]) : WindowIndex::npos;
      if (i != WindowIndex::npos) ++out.counts[i];
      partition_of[r] = i;
      own_rows_only = own_rows_only && i == slots_[p] && i != WindowIndex::npos;
    }
  }
  if (own_rows_only) {
    // Objects came in window order: the rows are in place already.
    out.rows = std::move(rows_);
    return out;
  }
  // Objects of another granularity overlap the window, or hold rows outside it: the rows of
  // the window, partition by partition.
  std::vector<std::size_t> start(index_.size() + 1, 0);
  for (std::size_t i = 0; i < index_.size(); ++i) start[i + 1] = start[i] + out.counts[i];
  std::vector<std::size_t> order(start.back());
  for (std::size_t r = 0; r < partition_of.size(); ++r) {
    if (partition_of[r] != WindowIndex::npos) order[start[partition_of[r]]++] = r;
  }
  out.rows = rows_.select_rows(order);
  return out;
}

std::vector<PartitionCheck> covered_elsewhere(Destination& destination, const DatasetRef& dataset,
                                              const PartitionWindow& window,
                                              std::vector<PartitionCheck> checks) {
  for (std::size_t i = 0; i < checks.size(); ++i) {
    if (checks[i].state != PartitionCheck::State::missing) continue;
    const std::unique_ptr<PartitionWindow> one = window.partition_at(i)->as_window();
    const std::vector<PartitionCount> counts = destination.partition_counts(dataset, *one);
    if (!counts.empty() && counts.front().written) checks[i].state = PartitionCheck::State::present;
  }
  return checks;
}

bool drop_covers(const PartitionWindow& window, const std::string& key) {
  if (auto time = window.as_time_window()) {
    const std::optional<Bounds> stored = stored_period(key);
    if (!stored) return false;
    const Bounds bounds = time->bounds();
    return !(stored->start < bounds.start) && !(bounds.end < stored->end);
  }
  const std::vector<std::string> keys = window.keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::vector<Filter> window_filters(const PartitionWindow& window, const std::string& column,
                                   bool by_union) {
  std::vector<Filter> filters;
  if (by_union) {
    filters.push_back(window.filter(column));
  } else {
    for (std::size_t i = 0; i < window.size(); ++i) {
      filters.push_back(window.partition_at(i)->filter(column));
    }
  }
  return filters;
}

Table in_window_order(Table rows, const PartitionWindow& window, const std::string& column) {
  // The rows of one partition's filter are all of that partition: nothing to place.
  if (window.size() == 1) return rows;
  WindowIndex index(window, column);
  std::vector<std::vector<std::size_t>> parts(index.size());
  const auto& cells = rows.column(column);
  bool ordered = true;
  std::size_t last = 0;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    std::size_t i = cells[r].is_null() ? WindowIndex::npos : index.locate(cells[r]);
    if (i == WindowIndex::npos) continue;
    ordered = ordered && i >= last;
    last = i;
    parts[i].push_back(r);
  }
  std::vector<std::size_t> order;
  order.reserve(rows.num_rows());
  for (const auto& part : parts) order.insert(order.end(), part.begin(), part.end());
  if (ordered && order.size() == rows.num_rows()) return rows;
  return rows.select_rows(order);
}

}  // namespace interloper::detail
