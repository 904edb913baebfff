// split_by_partition: routing each row of a written table to its partition of the window.
#include <fmt/format.h>

#include <vector>

#include "interloper/destination.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper {

std::vector<Table> split_by_partition(const DatasetRef& dataset, const PartitionWindow& window,
                                      const Table& table) {
  if (dataset.partitioning == nullptr) {
    throw DestinationError(
        fmt::format("dataset '{}' is not partitioned: it cannot be split by window {}",
                    detail::dataset_name(dataset), window.to_string()));
  }
  detail::WindowIndex index(window, dataset.partitioning->column());
  const std::vector<std::vector<std::size_t>> rows = index.split(dataset, table);

  std::vector<Table> parts;
  parts.reserve(rows.size());
  for (const std::vector<std::size_t>& part : rows) {
    if (part.size() == table.num_rows()) {
      parts.push_back(table);  // the common case of a one-partition write: no row copying
    } else {
      parts.push_back(table.select_rows(part));
    }
  }
  return parts;
}

}  // namespace interloper
