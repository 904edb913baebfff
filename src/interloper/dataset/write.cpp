// Destination::write: a whole table is one batch of the destination's own writer, so every
// destination has a single write path. Destination::check_partitions: existence, by default.
#include "interloper/dataset.hpp"

namespace interloper {

std::int64_t Destination::write(const DatasetRef& dataset, const PartitionWindow* window,
                                const Table& table) {
  return open_writer(dataset, window)->append_and_commit(table);
}

std::vector<PartitionCheck> PartitionCheck::by_existence(std::vector<PartitionCount> counts) {
  std::vector<PartitionCheck> out;
  out.reserve(counts.size());
  for (PartitionCount& count : counts) {
    out.push_back({std::move(count.key), count.written ? State::present : State::missing, {}, {}});
  }
  return out;
}

std::vector<PartitionCheck> Destination::check_partitions(const DatasetRef& dataset,
                                                          const PartitionWindow& window) {
  return PartitionCheck::by_existence(partition_counts(dataset, window));
}

std::int64_t WindowWriter::append_and_commit(const Table& last) {
  append(last);
  return commit();
}

}  // namespace interloper
