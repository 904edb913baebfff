// split_by_partition: routing each row of a written table to its partition of the window.
#include <fmt/format.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "interloper/data/time_value.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/dataset_name.hpp"

namespace interloper {

std::vector<Table> split_by_partition(const DatasetRef& dataset, const PartitionWindow& window,
                                      const Table& table) {
  if (dataset.partitioning == nullptr) {
    throw DestinationError(
        fmt::format("dataset '{}' is not partitioned: it cannot be split by window {}",
                    detail::dataset_name(dataset), window.to_string()));
  }
  const std::string& column = dataset.partitioning->column();
  const std::size_t n = window.size();
  std::vector<std::vector<std::size_t>> rows(n);

  const std::optional<std::size_t> index = table.column_index(column);
  if (!index && table.num_rows() > 0) {
    throw DestinationError(fmt::format("dataset '{}': the rows lack the partition column '{}'",
                                       detail::dataset_name(dataset), column));
  }
  auto outside = [&](std::size_t row, const Value& cell) {
    return DestinationError(fmt::format("dataset '{}': row {} has {} = {}, outside window {}",
                                        detail::dataset_name(dataset), row, column,
                                        cell.to_string(), window.to_string()));
  };
  auto null_cell = [&](std::size_t row) {
    return DestinationError(fmt::format("dataset '{}': row {} has a null partition column '{}'",
                                        detail::dataset_name(dataset), row, column));
  };

  if (index) {
    const std::vector<Value>& cells = table.column(*index);
    if (const auto* time = dynamic_cast<const TimePartitionWindow*>(&window)) {
      // Arithmetic: the period holding the value, counted from the window's first period.
      const Bounds bounds = time->bounds();
      const TimeGranularity granularity = time->granularity();
      for (std::size_t row = 0; row < cells.size(); ++row) {
        if (cells[row].is_null()) throw null_cell(row);
        const std::optional<TimePoint> t = detail::value_time(cells[row]);
        if (!t) {
          throw DestinationError(
              fmt::format("dataset '{}': row {} has {} = {} ({}), which is not a date or timestamp",
                          detail::dataset_name(dataset), row, column, cells[row].to_string(),
                          type_name(cells[row].type())));
        }
        if (*t < bounds.start || !(*t < bounds.end)) throw outside(row, cells[row]);
        rows[static_cast<std::size_t>(granularity.periods_between(bounds.start, *t))].push_back(
            row);
      }
    } else if (const auto* list = dynamic_cast<const ListPartitionWindow*>(&window)) {
      std::unordered_map<std::string, std::size_t> position;
      const std::vector<std::string> values = list->values();
      for (std::size_t i = 0; i < values.size(); ++i) position.emplace(values[i], i);
      for (std::size_t row = 0; row < cells.size(); ++row) {
        const Value& cell = cells[row];
        if (cell.is_null()) throw null_cell(row);
        auto it = cell.type() == DataType::string ? position.find(cell.as_string())
                                                  : position.find(cell.to_string());
        if (it == position.end()) throw outside(row, cell);
        rows[it->second].push_back(row);
      }
    } else {
      // Another kind: ask each partition's filter.
      std::vector<Filter> filters;
      filters.reserve(n);
      for (std::size_t i = 0; i < n; ++i) filters.push_back(window.partition_at(i)->filter(column));
      for (std::size_t row = 0; row < cells.size(); ++row) {
        const Value& cell = cells[row];
        if (cell.is_null()) throw null_cell(row);
        const std::optional<TimePoint> t = detail::value_time(cell);
        const std::string text =
            cell.type() == DataType::string ? cell.as_string() : cell.to_string();
        std::size_t found = n;
        for (std::size_t i = 0; i < n && found == n; ++i) {
          if ((t && filters[i].matches(*t)) || filters[i].matches(std::string_view(text))) {
            found = i;
          }
        }
        if (found == n) throw outside(row, cell);
        rows[found].push_back(row);
      }
    }
  }

  std::vector<Table> parts;
  parts.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (rows[i].size() == table.num_rows()) {
      parts.push_back(table);  // the common case of a one-partition write: no row copying
    } else {
      parts.push_back(table.select_rows(rows[i]));
    }
  }
  return parts;
}

}  // namespace interloper
