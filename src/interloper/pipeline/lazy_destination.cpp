#include "interloper/pipeline/lazy_destination.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace interloper::pipeline {

namespace fs = std::filesystem;

LazyDestination::LazyDestination(std::string url, std::string local_path, bool is_directory)
    : url_(std::move(url)), local_path_(std::move(local_path)), is_directory_(is_directory) {}

bool LazyDestination::exists() const {
  std::error_code ec;
  return local_path_.empty() || fs::exists(local_path_, ec);
}

Destination& LazyDestination::target() {
  std::lock_guard lock(mutex_);
  if (!target_) {
    if (!local_path_.empty()) {
      fs::path dir = is_directory_ ? fs::path(local_path_) : fs::path(local_path_).parent_path();
      std::error_code ec;
      if (!dir.empty()) fs::create_directories(dir, ec);
      if (ec) {
        throw DestinationError(
            fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
      }
    }
    target_ = open_destination(url_);
  }
  return *target_;
}

void LazyDestination::check_writable() {
  Destination& opened = target();
  if (!local_path_.empty()) {
    // A database needs its file and its directory (journal, WAL); files need the directory.
    std::vector<fs::path> paths{fs::path(local_path_)};
    if (!is_directory_) paths.push_back(fs::path(local_path_).parent_path());
    for (const fs::path& path : paths) {
      std::error_code ec;
      if (!fs::exists(path, ec) || ::access(path.c_str(), W_OK) == 0) continue;
      throw DestinationError(
          fmt::format("cannot write to '{}': {}", path.string(), std::strerror(errno)));
    }
  }
  opened.check_writable();
}

std::unique_ptr<WindowWriter> LazyDestination::open_writer(const DatasetRef& dataset,
                                                           const PartitionWindow* window) {
  return target().open_writer(dataset, window);
}

Table LazyDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  return target().read(dataset, window);
}

std::int64_t LazyDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  return target().row_count(dataset, partition);
}

std::vector<PartitionCount> LazyDestination::partition_counts(const DatasetRef& dataset,
                                                              const PartitionWindow& window) {
  return target().partition_counts(dataset, window);
}

std::vector<PartitionCheck> LazyDestination::check_partitions(const DatasetRef& dataset,
                                                              const PartitionWindow& window) {
  return target().check_partitions(dataset, window);
}

std::optional<Schema> LazyDestination::schema(const DatasetRef& dataset) {
  {
    std::lock_guard lock(mutex_);
    if (!target_ && !exists()) return std::nullopt;
  }
  return target().schema(dataset);
}

std::vector<std::string> LazyDestination::retired_columns(const DatasetRef& dataset) {
  {
    std::lock_guard lock(mutex_);
    if (!target_ && !exists()) return {};
  }
  return target().retired_columns(dataset);
}

void LazyDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  {
    std::lock_guard lock(mutex_);
    if (!target_ && !exists()) return;
  }
  target().drop(dataset, window);
}

}  // namespace interloper::pipeline
