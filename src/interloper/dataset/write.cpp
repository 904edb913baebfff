// Destination::write: a whole table is one batch of the destination's own writer, so every
// destination has a single write path.
#include "interloper/dataset.hpp"

namespace interloper {

std::int64_t Destination::write(const DatasetRef& dataset, const PartitionWindow* window,
                                const Table& table) {
  std::unique_ptr<WindowWriter> writer = open_writer(dataset, window);
  writer->append(table);
  return writer->commit();
}

}  // namespace interloper
