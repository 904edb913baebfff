// The S3 destination's streaming writer: each partition's rows are encoded as they arrive into
// a spool (memory, then an unlinked temporary file), and commit uploads every partition.
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>

#include "interloper/data/format.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/destination/s3_layout.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper::detail {

namespace {

constexpr std::size_t spill_size = std::size_t{4} << 20;

[[noreturn]] void fail_spool(std::string_view what) {
  throw DestinationError(
      fmt::format("s3 destination: temporary file: {}: {}", what, std::strerror(errno)));
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_spool("cannot write");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

Spool::~Spool() {
  if (fd_ >= 0) ::close(fd_);
}

Spool::Spool(Spool&& other) noexcept
    : memory_(std::move(other.memory_)), fd_(other.fd_), file_size_(other.file_size_) {
  other.fd_ = -1;
  other.file_size_ = 0;
}

void Spool::append(std::string_view bytes) {
  memory_.append(bytes);
  if (memory_.size() >= spill_size) spill();
}

void Spool::append(std::string&& bytes) {
  if (memory_.empty()) {
    memory_ = std::move(bytes);
    if (memory_.size() >= spill_size) spill();
  } else {
    append(std::string_view(bytes));
  }
}

void Spool::spill() {
  if (memory_.empty()) return;
  if (fd_ < 0) {
    std::string path = (std::filesystem::temp_directory_path() / "il-s3-XXXXXX").string();
    fd_ = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd_ < 0) fail_spool("cannot create");
    ::unlink(path.c_str());  // nothing to clean up, whatever happens to this process
  }
  write_all(fd_, memory_);
  file_size_ += memory_.size();
  memory_.clear();
}

std::string Spool::read_at(std::size_t offset, std::size_t size) const {
  std::string out(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_spool("cannot read");
    done += static_cast<std::size_t>(n);
  }
  return out;
}

std::string Spool::read_all() {
  if (fd_ < 0) return std::move(memory_);
  return read_at(0, file_size_) + memory_;
}

namespace {

class S3WindowWriter final : public WindowWriter {
 public:
  S3WindowWriter(S3Layout& layout, DatasetRef dataset, const PartitionWindow* window)
      : layout_(layout), dataset_(std::move(dataset)) {
    if (window != nullptr && dataset_.partitioning != nullptr) {
      index_.emplace(*window, dataset_.partitioning->column());
      window_keys_ = window->keys();
    } else if (dataset_.partitioning != nullptr) {
      router_.emplace(dataset_);  // every partition is replaced: the rows say which they are
    }
    spools_.resize(dataset_.partitioning ? window_keys_.size() : 1);
    rows_.assign(spools_.size(), 0);
  }

  void append(const Table& batch) override {
    Batch in = take(batch);
    // Partitions are encoded side by side, each from its rows of the batch into its own spool.
    parallel_for(spools_.size(), s3_parallel_requests, [&](std::size_t i) { in.add(*this, i); });
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
    // Adds partition i's rows to its spool.
    void add(S3WindowWriter& writer, std::size_t i) const {
      if (size_of(i) == 0) return;
      std::string text;
      add_to(writer, i, text);
      writer.spools_[i].append(std::move(text));
    }
    // Encodes partition i's rows as JSON lines into `text` and counts them.
    void add_to(S3WindowWriter& writer, std::size_t i, std::string& text) const {
      try {
        append_json_lines(text, rows, rows_of(i));
      } catch (const DataError& e) {
        throw DestinationError(
            fmt::format("dataset '{}': {}", dataset_name(writer.dataset_), e.what()));
      }
      writer.rows_[i] += static_cast<std::int64_t>(size_of(i));
    }
  };

  // Buffers handed from one partition to the next.
  class Buffers {
   public:
    std::string take() {
      std::lock_guard lock(mutex_);
      if (free_.empty()) return {};
      std::string out = std::move(free_.back());
      free_.pop_back();
      return out;
    }
    void give(std::string buffer) {
      buffer.clear();
      std::lock_guard lock(mutex_);
      free_.push_back(std::move(buffer));
    }

   private:
    std::mutex mutex_;
    std::vector<std::string> free_;
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
      spools_.resize(router_->keys().size());
      rows_.resize(router_->keys().size(), 0);
    }
    return in;
  }

  // Stores the schema, then uploads every partition, after adding its rows of `last` when
  // given. Returns the rows written.
  std::int64_t finish(const Batch* last) {
    const Schema schema = layout_.store_schema(dataset_, schema_);
    // Partitions go up several at a time; each is one PUT (or one multipart upload).
    Buffers buffers;
    parallel_for(spools_.size(), s3_parallel_requests, [&](std::size_t i) {
      const std::string key = dataset_.partitioning ? keys()[i] : std::string();
      const std::string object = dataset_.partitioning ? layout_.partition_object(dataset_, key)
                                                       : layout_.whole_object(dataset_);
      if (last != nullptr && spools_[i].size() == 0 &&
          layout_.format() == FileDestination::Format::jsonl) {
        // Only the last batch's rows: encoded into a buffer that, once sent, takes the next
        // partition's text, so that memory is reused rather than taken afresh.
        std::string text = buffers.take();
        last->add_to(*this, i, text);
        const std::string etag = layout_.upload(object, text, layout_.metadata(key, rows_[i]));
        record(object, text.size(), etag);
        buffers.give(std::move(text));
        return;
      }
      if (last != nullptr) last->add(*this, i);
      std::optional<Spool> csv;
      if (layout_.format() == FileDestination::Format::csv)
        csv.emplace(csv_spool(spools_[i], schema));
      Spool& bytes = csv ? *csv : spools_[i];
      const std::size_t size = bytes.size();  // an upload may take the bytes over
      record(object, size, layout_.upload(object, bytes, layout_.metadata(key, rows_[i])));
    });
    if (router_) drop_others();
    std::int64_t total = 0;
    for (std::int64_t rows : rows_) total += rows;
    return total;
  }

  // Records what a partition's object holds as written (status --verify checks it).
  void record(const std::string& object, std::size_t size, const std::string& etag) {
    if (dataset_.partitioning) layout_.record_written(object, size, etag);
  }

  // The partition of each spool (partitioned datasets).
  const std::vector<std::string>& keys() const { return router_ ? router_->keys() : window_keys_; }

  // After a write without a window: the partitions it did not write, and rows an earlier version
  // kept beside the partitions, go.
  void drop_others() {
    std::vector<std::string> objects{layout_.whole_object(dataset_)};
    for (auto& stored : layout_.stored_partitions(dataset_)) {
      if (router_->holds(stored.key)) continue;
      objects.push_back(S3Layout::written_object(stored.object));
      objects.push_back(std::move(stored.object));
    }
    layout_.client().remove(objects);
  }

 private:
  // The partition's JSON lines re-encoded as CSV with the unified schema's columns, batch by
  // batch, so memory holds one batch rather than the partition.
  Spool csv_spool(Spool& json, const Schema& schema) {
    Spool csv;
    if (json.size() == 0) return csv;  // an empty partition is an empty object
    std::vector<std::string> names;
    std::vector<std::size_t> columns;
    for (std::size_t c = 0; c < schema.size(); ++c) {
      names.push_back(schema.field(c).name);
      columns.push_back(c);
    }
    std::string header;
    append_csv_header(header, names);
    csv.append(std::move(header));
    try {
      TableStreamParser parser(
          TableStreamParser::Format::json_lines,
          [&](Table&& batch) {
            std::string records;
            append_csv_records(records, batch, columns);
            csv.append(std::move(records));
          },
          TableStreamParser::Limits{}, &schema);
      json.for_each_chunk(std::size_t{1} << 20,
                          [&](std::string_view chunk) { parser.feed(chunk); });
      parser.finish();
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("dataset '{}': {}", dataset_name(dataset_), e.what()));
    }
    return csv;
  }

  S3Layout& layout_;
  DatasetRef dataset_;
  std::optional<WindowIndex> index_;  // a window's partitions
  std::optional<KeyRouter> router_;   // or, without a window, the rows' own partitions
  std::vector<std::string> window_keys_;
  // Per partition, the rows of batches before the last. A spool holds JSON lines whatever the
  // format: they need no header, so batches whose columns differ concatenate; csv is encoded
  // once, at commit, from the unified schema.
  std::vector<Spool> spools_;
  std::vector<std::int64_t> rows_;
  Schema schema_;
  bool started_ = false;
  bool unusable_ = false;
};

}  // namespace

std::unique_ptr<WindowWriter> S3Layout::open_writer(const DatasetRef& dataset,
                                                    const PartitionWindow* window) {
  return std::make_unique<S3WindowWriter>(*this, dataset, window);
}

}  // namespace interloper::detail
