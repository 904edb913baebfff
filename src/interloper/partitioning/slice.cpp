// Filter::apply and TimePartition::slice: the in-memory counterpart of a filter's SQL.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/data/time_value.hpp"
#include "interloper/partitioning.hpp"

namespace interloper {

Table Filter::apply(const Table& table) const {
  const std::optional<std::size_t> index = table.column_index(column_);
  if (!index) {
    throw DataError(
        fmt::format("cannot filter on column '{}': the table has no such column", column_));
  }
  const std::vector<Value>& cells = table.column(*index);
  std::vector<std::size_t> keep;
  for (std::size_t row = 0; row < cells.size(); ++row) {
    const Value& cell = cells[row];
    if (cell.is_null()) continue;
    bool match = false;
    if (kind_ == Kind::range) {
      const std::optional<TimePoint> t = detail::value_time(cell);
      match = t && matches(*t);
    } else if (cell.type() == DataType::string) {
      match = matches(std::string_view(cell.as_string()));
    } else {
      match = matches(std::string_view(cell.to_string()));
    }
    if (match) keep.push_back(row);
  }
  return table.select_rows(keep);
}

Table TimePartition::slice(const Table& table, std::string_view column) const {
  return filter(std::string(column)).apply(table);
}

}  // namespace interloper
