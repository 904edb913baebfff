// A destination opened on first use, so that loading a pipeline never creates files.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "interloper/destination.hpp"

namespace interloper::pipeline {

class LazyDestination final : public Destination {
 public:
  // `url` is absolute (file paths resolved). `local_path` is the file or directory the URL
  // names ("" when none); its parent directory is created when the destination opens.
  LazyDestination(std::string url, std::string local_path, bool is_directory);

  std::string url() const override { return url_; }
  // Opens the destination and checks that its file or directory may be written.
  void check_writable() override;
  std::unique_ptr<WindowWriter> open_writer(const DatasetRef& dataset,
                                            const PartitionWindow* window) override;
  Table read(const DatasetRef& dataset, const PartitionWindow* window) override;
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) override;
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::vector<PartitionCheck> check_partitions(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  // nullopt without opening when the storage does not exist yet.
  std::optional<Schema> schema(const DatasetRef& dataset) override;
  // Empty without opening when the storage does not exist yet.
  std::vector<std::string> retired_columns(const DatasetRef& dataset) override;
  // Does nothing without opening when the storage does not exist yet.
  void drop(const DatasetRef& dataset, const PartitionWindow* window) override;

  // The real destination's capability (opening it).
  QueryableDestination* queryable() override { return target().queryable(); }

  // The real destination, opened on first call. Throws DestinationError.
  Destination& target();
  bool exists() const;

 private:
  std::string url_;
  std::string local_path_;
  bool is_directory_;
  std::mutex mutex_;
  std::shared_ptr<Destination> target_;
};

}  // namespace interloper::pipeline
