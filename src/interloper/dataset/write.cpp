// Destination::write: a whole table is one batch of the destination's own writer, so every
// destination has a single write path.
#include "interloper/dataset.hpp"

namespace interloper {

std::int64_t Destination::write(const DatasetRef& dataset, const PartitionWindow* window,
                                const Table& table) {
  return open_writer(dataset, window)->append_and_commit(table);
}

std::int64_t WindowWriter::append_and_commit(const Table& last) {
  append(last);
  return commit();
}

}  // namespace interloper
