// ObjectDestination's streaming writer: each partition's rows are encoded as they arrive and
// staged (JSON lines straight into the partition's streamed put; other formats as JSON lines in
// a spool, encoded at commit from the unified schema), and commit puts every partition.
#include <fmt/format.h>

#include <mutex>
#include <optional>

#include "interloper/data/format.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/destination/object_core.hpp"

namespace interloper::detail {

namespace {

// One partition's rows on their way to its data object: JSON lines appended straight to the
// object's streamed put when the format is JSON lines, else gathered in a spool and encoded at
// commit.
class Stage {
 public:
  std::size_t size() const { return put_ ? put_->size() : spool_.size(); }

  void append(ObjectDestination::Core& core, const std::string& object, std::string&& text) {
    if (!core.codec.json_lines_are_object()) return spool_.append(std::move(text));
    if (!put_) put_ = core.store.open_put(object);
    put_->append(std::move(text));
  }

  // Makes every byte of the object ready to appear (in the columns of `schema` when the format
  // is encoded at commit): what can fail for lack of room fails here.
  void prepare(ObjectDestination::Core& core, const std::string& object, const Schema& schema) {
    if (!put_) {
      put_ = core.store.open_put(object);
      core.codec.write_from_json_lines(spool_, schema, *put_);
    }
    put_->prepare();
  }

  // Makes the object appear; returns its size and tag.
  std::pair<std::size_t, std::string> commit(const blob::Metadata& metadata) {
    const std::size_t size = put_->size();  // a commit may take the bytes over
    std::string tag = put_->commit(metadata);
    put_.reset();
    return {size, std::move(tag)};
  }

 private:
  blob::Spool spool_;
  std::unique_ptr<blob::BlobWriter> put_;
};

class ObjectWindowWriter final : public WindowWriter {
 public:
  ObjectWindowWriter(ObjectDestination::Core& core, DatasetRef dataset,
                     const PartitionWindow* window)
      : core_(core), dataset_(std::move(dataset)) {
    if (window != nullptr && dataset_.partitioning != nullptr) {
      index_.emplace(*window, dataset_.partitioning->column());
      window_keys_ = window->keys();
    } else if (dataset_.partitioning != nullptr) {
      router_.emplace(dataset_);  // every partition is replaced: the rows say which they are
    }
    stages_.resize(dataset_.partitioning ? window_keys_.size() : 1);
    rows_.assign(stages_.size(), 0);
  }

  void append(const Table& batch) override {
    Batch in = take(batch);
    // Partitions are encoded side by side, each from its rows of the batch into its own spool.
    parallel_for(stages_.size(), parallel_requests, [&](std::size_t i) { in.add(*this, i); });
    schema_ = std::move(in.schema);
    started_ = true;
    unusable_ = false;
  }

  std::int64_t commit() override {
    usable();
    unusable_ = true;
    return finish(nullptr);
  }

  // The last batch's partitions are each encoded and sent in one go, several at a time, so
  // that sending one overlaps encoding the next. The batch is checked whole first (window,
  // types, numbers JSON can hold), so that a bad row still leaves storage as it was.
  std::int64_t append_and_commit(const Table& last) override {
    Batch in = take(last);
    try {
      check_json_numbers(last);
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("dataset '{}': {}", dataset_name(dataset_), e.what()));
    }
    schema_ = std::move(in.schema);
    started_ = true;
    return finish(&in);
  }

 private:
  // A batch checked against the window and the earlier batches, not yet encoded.
  struct Batch {
    const Table& rows;
    Schema schema;                                // the columns with this batch's
    std::vector<std::vector<std::size_t>> parts;  // its rows per partition (none: all in 0)

    // Partition i's rows (nullptr: every row).
    const std::vector<std::size_t>* rows_of(std::size_t i) const {
      return parts.empty() || parts[i].size() == rows.num_rows() ? nullptr : &parts[i];
    }
    std::size_t size_of(std::size_t i) const {
      return parts.empty() ? rows.num_rows() : parts[i].size();
    }
    // Encodes partition i's rows as JSON lines into its stage and counts them.
    void add(ObjectWindowWriter& writer, std::size_t i) const {
      if (size_of(i) == 0) return;
      std::string text;
      try {
        append_json_lines(text, rows, rows_of(i));
      } catch (const DataError& e) {
        throw DestinationError(
            fmt::format("dataset '{}': {}", dataset_name(writer.dataset_), e.what()));
      }
      writer.rows_[i] += static_cast<std::int64_t>(size_of(i));
      writer.stages_[i].append(writer.core_, writer.object_of(i), std::move(text));
    }
  };

  void usable() const {
    if (unusable_) {
      throw DestinationError(
          fmt::format("dataset '{}': the writer failed or was committed", dataset_name(dataset_)));
    }
  }

  // Checks `batch` (leaving the writer unusable until it is in) and splits it by partition.
  Batch take(const Table& batch) {
    usable();
    unusable_ = true;
    Batch in{batch, {}, {}};
    try {
      in.schema = started_ ? Schema::unify(schema_, batch.schema()) : batch.schema();
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("dataset '{}': {}", dataset_name(dataset_), e.what()));
    }
    if (index_) in.parts = index_->split(dataset_, batch);  // throws before anything is added
    if (router_) {
      in.parts = router_->split(batch);
      stages_.resize(router_->keys().size());
      rows_.resize(router_->keys().size(), 0);
    }
    return in;
  }

  // Stages every partition (after adding its rows of `last` when given), stores the schema
  // once the first partition is staged, and makes each partition appear. Returns the rows
  // written.
  std::int64_t finish(const Batch* last) {
    core_.store.tidy(ObjectLayout::dataset_prefix(dataset_));
    // The columns of a format encoded at commit (its header): the stored ones and this write's.
    // A type clash is refused here, before anything is staged.
    const Schema columns = core_.evolved_schema(dataset_, schema_);
    std::once_flag stored;
    const auto store_schema = [&] {
      std::call_once(stored, [&] { core_.store_schema(dataset_, schema_); });
    };
    // Partitions go several at a time; each is one put.
    parallel_for(stages_.size(), parallel_requests, [&](std::size_t i) {
      const std::string key = dataset_.partitioning ? keys()[i] : std::string();
      const std::string object = object_of(i);
      if (dataset_.partitioning) core_.keep_key(object, key);
      if (last != nullptr) last->add(*this, i);
      try {
        stages_[i].prepare(core_, object, columns);
      } catch (const DataError& e) {
        throw DestinationError(fmt::format("dataset '{}': {}", dataset_name(dataset_), e.what()));
      }
      // The schema is stored before any partition appears: it covers the old rows and the new.
      store_schema();
      auto [size, tag] = stages_[i].commit(core_.metadata(key, rows_[i]));
      if (dataset_.partitioning) core_.record_written(object, size, tag);
    });
    store_schema();
    if (router_) drop_others();
    std::int64_t total = 0;
    for (std::int64_t rows : rows_) total += rows;
    return total;
  }

  // The partition of each stage (partitioned datasets).
  const std::vector<std::string>& keys() const { return router_ ? router_->keys() : window_keys_; }

  // The object of stage i.
  std::string object_of(std::size_t i) const {
    return dataset_.partitioning ? core_.layout.partition_object(dataset_, keys()[i])
                                 : core_.layout.whole_object(dataset_);
  }

  // After a write without a window: the partitions it did not write, and rows an earlier version
  // kept beside the partitions, go.
  void drop_others() {
    std::vector<std::string> objects{core_.layout.whole_object(dataset_)};
    for (auto& stored : core_.stored_partitions(dataset_)) {
      if (!router_->holds(stored.key)) core_.add_partition_objects(stored.object, objects);
    }
    core_.store.remove(objects);
  }

  ObjectDestination::Core& core_;
  DatasetRef dataset_;
  std::optional<WindowIndex> index_;  // a window's partitions
  std::optional<KeyRouter> router_;   // or, without a window, the rows' own partitions
  std::vector<std::string> window_keys_;
  // Per partition, the rows of batches before the last, as JSON lines: they need no header, so
  // batches whose columns differ concatenate; another format is encoded once, at commit, from
  // the unified schema.
  std::vector<Stage> stages_;
  std::vector<std::int64_t> rows_;
  Schema schema_;
  bool started_ = false;
  bool unusable_ = false;
};

}  // namespace

}  // namespace interloper::detail

namespace interloper {

std::unique_ptr<WindowWriter> ObjectDestination::Core::open_writer(const DatasetRef& dataset,
                                                                   const PartitionWindow* window) {
  return std::make_unique<detail::ObjectWindowWriter>(*this, dataset, window);
}

}  // namespace interloper
