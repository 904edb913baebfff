// ObjectDestination: a Destination over a BlobStore, the one implementation of FileDestination
// and S3Destination.
#include <fmt/format.h>

#include <algorithm>

#include "interloper/destination.hpp"
#include "interloper/destination/object_core.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper {

using detail::ObjectLayout;
using detail::StoredPartition;

ObjectDestination::ObjectDestination() = default;
ObjectDestination::~ObjectDestination() = default;

void ObjectDestination::set_core(std::unique_ptr<Core> core) { core_ = std::move(core); }

std::unique_ptr<WindowWriter> ObjectDestination::open_writer(const DatasetRef& dataset,
                                                             const PartitionWindow* window) {
  return core_->open_writer(dataset, window);
}

Table ObjectDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  if (!dataset.partitioning) return core_->read_whole(dataset);
  if (!window) return core_->read_everything(dataset);
  return core_->collect(dataset, *window).rows;
}

std::int64_t ObjectDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  if (!dataset.partitioning) return core_->whole_count(dataset);
  if (!partition) {
    std::int64_t total = core_->whole_count(dataset);
    for (const StoredPartition& stored : core_->stored_partitions(dataset)) {
      total += core_->rows_of(stored.object).value_or(0);
    }
    return total;
  }
  auto window = partition->as_window();
  return core_->counts(dataset, *window).front().rows;
}

std::vector<PartitionCount> ObjectDestination::partition_counts(const DatasetRef& dataset,
                                                                const PartitionWindow& window) {
  if (!dataset.partitioning) {
    std::vector<PartitionCount> out;
    for (auto& key : window.keys()) out.push_back({key, 0, false});
    return out;
  }
  return core_->counts(dataset, window);
}

std::vector<PartitionCheck> ObjectDestination::check_partitions(const DatasetRef& dataset,
                                                                const PartitionWindow& window) {
  if (!dataset.partitioning) return Destination::check_partitions(dataset, window);
  // One without an object of its own may lie in a partition of another granularity: existence.
  return detail::covered_elsewhere(*this, dataset, window, core_->check(dataset, window));
}

std::optional<Schema> ObjectDestination::schema(const DatasetRef& dataset) {
  return core_->stored_schema(dataset);
}

std::vector<std::string> ObjectDestination::retired_columns(const DatasetRef& dataset) {
  return core_->retired_columns(dataset);
}

std::vector<std::string> ObjectDestination::partition_keys(const DatasetRef& dataset) {
  std::vector<std::string> out;
  if (!dataset.partitioning) return out;
  for (auto& stored : core_->stored_partitions(dataset)) out.push_back(stored.key);
  std::sort(out.begin(), out.end());
  return out;
}

void ObjectDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  core_->drop(dataset, window);
}

void ObjectDestination::Core::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  std::vector<std::string> objects;
  if (window == nullptr || dataset.partitioning == nullptr) {
    // The schema object goes last: a drop cut short keeps the schema of the rows it left.
    const std::string schema = ObjectLayout::schema_object(dataset);
    bool has_schema = false;
    for (const blob::BlobInfo& info : store.list(ObjectLayout::dataset_prefix(dataset))) {
      if (info.name == schema) {
        has_schema = true;
      } else {
        objects.push_back(info.name);
      }
    }
    store.remove(objects);
    if (has_schema) store.remove({schema});
    return;
  }
  for (const StoredPartition& stored : stored_partitions(dataset)) {
    if (detail::drop_covers(*window, stored.key)) add_partition_objects(stored.object, objects);
  }
  store.remove(objects);
}

namespace {

// An ObjectDestination over a store given whole.
class StoreDestination final : public ObjectDestination {
 public:
  StoreDestination(std::unique_ptr<blob::BlobStore> store, ObjectFormat format, std::string url)
      : url_(std::move(url)) {
    set_core(std::make_unique<Core>(std::move(store), format, "object destination"));
  }
  std::string url() const override { return url_; }

 private:
  std::string url_;
};

}  // namespace

std::unique_ptr<ObjectDestination> detail::object_destination(
    std::unique_ptr<blob::BlobStore> store, ObjectFormat format, std::string url) {
  return std::make_unique<StoreDestination>(std::move(store), format, std::move(url));
}

}  // namespace interloper
