// FileDestination's writer: batches are staged in temporary files beside each partition's file
// and made durable and renamed into place at commit (posix/durable_file.hpp), each partition's
// with a record of its size and checksum beside it (_written, for status --verify).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>

#include "interloper/data/format.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/file_state.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/posix/durable_file.hpp"

namespace interloper {

namespace fs = std::filesystem;

namespace {

constexpr const char* key_file = detail::file_key_name;
constexpr const char* schema_file = detail::file_schema_name;
constexpr const char* written_file = detail::file_written_name;

}  // namespace

namespace {

// Copies a CSV file this destination wrote, replacing its header with `names` and giving every
// record names.size() fields (the missing trailing ones empty, that is null). Records of a file
// whose columns grew while it was written are shorter than the final header. Every quote in our
// own output is part of a quoted field, so toggling on quotes finds the separators.
void widen_csv(const fs::path& from, const fs::path& to, const std::vector<std::string>& names) {
  const auto fail_read = [&] {
    throw DestinationError(
        fmt::format("file destination: cannot read '{}': {}", from.string(), std::strerror(errno)));
  };
  std::string header;
  detail::append_csv_header(header, names);
  posix::append_to(to, header);
  std::ifstream in(from, std::ios::binary);
  if (!in) fail_read();
  std::string chunk(1 << 16, '\0'), out;
  bool in_quotes = false, in_header = true;
  std::size_t fields = 1;
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < got; ++i) {
      const char c = chunk[i];
      if (c == '"') in_quotes = !in_quotes;
      if (in_header) {
        in_header = in_quotes || c != '\n';  // the old header is dropped
        continue;
      }
      if (!in_quotes && c == ',') ++fields;
      if (!in_quotes && c == '\n') {
        out.append(names.size() - std::min(fields, names.size()), ',');
        fields = 1;
      }
      out.push_back(c);
    }
    if (out.size() >= (std::size_t{1} << 20)) {
      posix::append_to(to, out);
      out.clear();
    }
  }
  if (in.bad()) fail_read();
  posix::append_to(to, out);
}

}  // namespace

// Batches are validated as they arrive, encoded, and appended to a temporary file beside each
// partition's file (through a small buffer per partition, flushed when it alone or all buffers
// together pass a bound). commit() makes every temporary file durable, records the schema, and
// renames them into place. Whatever fails, and when the writer is dropped uncommitted, the
// temporary files are removed.
class FileDestination::Writer final : public WindowWriter {
 public:
  Writer(State& state, DatasetRef dataset, const PartitionWindow* window)
      : state_(state), dataset_(std::move(dataset)), dir_(state.dataset_dir(dataset_)) {
    if (dataset_.partitioning == nullptr) {
      targets_.push_back({dir_, {}, {}, {}, {}});
    } else if (window == nullptr) {
      router_.emplace(dataset_);  // every partition is replaced: the rows say which they are
    } else {
      index_.emplace(*window, dataset_.partitioning->column());
      window_keys_ = window->keys();
      for (const std::string& key : window_keys_) add_target(key);
    }
  }

  ~Writer() override { remove_temps(); }

  void append(const Table& batch) override {
    usable();
    unusable_ = true;  // until this batch is in
    std::vector<std::vector<std::size_t>> parts;
    if (index_) parts = index_->split(dataset_, batch);  // throws before anything is staged
    if (router_) {
      parts = router_->split(batch);
      for (std::size_t i = targets_.size(); i < router_->keys().size(); ++i) {
        add_target(router_->keys()[i]);
      }
    }
    try {
      schema_ = started_ ? Schema::unify(schema_, batch.schema()) : batch.schema();
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("file destination: '{}': {}", dir_.string(), e.what()));
    }
    started_ = true;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      const std::size_t rows = parts.empty() ? batch.num_rows() : parts[i].size();
      if (rows == 0) continue;
      encode(targets_[i], batch, rows == batch.num_rows() ? nullptr : &parts[i]);
      rows_ += static_cast<std::int64_t>(rows);
    }
    if (buffered_ >= kFlushBytes) flush();
    unusable_ = false;
  }

  std::int64_t commit() override {
    usable();
    unusable_ = true;
    try {
      std::lock_guard lock(state_.mutex);
      posix::make_dirs(dir_);
      posix::remove_stale_temps(dir_);
      const Schema schema = merged_schema();
      flush();
      stage_all();
      if (!(stored_ && schema == *stored_))
        posix::replace_file(dir_ / schema_file, schema_to_json(schema));
      state_.record_retired(dir_, dataset_, schema, schema_);
      // Every new file is durable; now swap them in. A crash from here on leaves each partition
      // whole, either old or new.
      for (Target& target : targets_) {
        posix::rename_over(*target.temp, target.dir / state_.data_name());
        target.temp.reset();
        if (target.record) posix::rename_over(*target.record, target.dir / written_file);
        target.record.reset();
      }
      for (std::size_t i = 0; dataset_.partitioning && i < targets_.size(); ++i) {
        posix::fsync_dir(targets_[i].dir);
      }
      if (router_) drop_others();
      posix::fsync_dir(dir_);
    } catch (...) {
      remove_temps();
      throw;
    }
    return rows_;
  }

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{8} << 20;
  static constexpr std::size_t kWriteBytes = std::size_t{1} << 20;

  struct Target {
    fs::path dir;                     // the partition's directory (the dataset's when whole)
    std::optional<fs::path> temp;     // the temporary file, once created
    std::optional<fs::path> record;   // partitions: the temporary record of what temp holds
    std::string buffer;               // encoded rows not yet in the temporary file
    std::vector<std::string> header;  // csv: the columns of the header written
  };

  void usable() const {
    if (unusable_) {
      throw DestinationError(
          fmt::format("file destination: '{}': the writer failed or was committed", dir_.string()));
    }
  }

  // Encodes `rows` of `batch` (all of them when null) for the target. A CSV file's header is the
  // columns known when its first rows arrive; later rows carry every column known by then (a
  // header's prefix or more). The text is encoded into one buffer reused from partition to
  // partition: enough of it to fill a buffer goes to the file at once, less waits in the
  // target's buffer.
  void encode(Target& target, const Table& batch, const std::vector<std::size_t>* rows) {
    scratch_.clear();
    try {
      if (state_.format != Format::csv) {
        detail::append_json_lines(scratch_, batch, rows);
      } else {
        std::vector<std::string> names;
        std::vector<std::size_t> columns;
        for (const Field& f : schema_.fields()) {
          names.push_back(f.name);
          columns.push_back(batch.column_index(f.name).value_or(Schema::npos));
        }
        if (target.header.empty()) {
          detail::append_csv_header(scratch_, names);
          target.header = names;
        }
        detail::append_csv_records(scratch_, batch, columns, rows);
      }
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("file destination: {}", e.what()));
    }
    if (target.buffer.empty() && scratch_.size() >= kWriteBytes) {
      posix::append_to(temp_of(target), scratch_);
      return;
    }
    target.buffer += scratch_;
    buffered_ += scratch_.size();
    if (target.buffer.size() >= kWriteBytes) write_out(target);
  }

  fs::path& temp_of(Target& target) {
    if (!target.temp) {
      posix::make_dirs(target.dir);
      target.temp = posix::temp_beside(target.dir / state_.data_name());
    }
    return *target.temp;
  }

  void flush() {
    for (Target& target : targets_) write_out(target);
  }

  void write_out(Target& target) {
    if (target.buffer.empty()) return;
    posix::append_to(temp_of(target), target.buffer);
    buffered_ -= target.buffer.size();
    target.buffer = std::string();
  }

  // The schema the dataset has after this write (see evolve_schema). Throws before anything is
  // replaced.
  Schema merged_schema() {
    stored_ = state_.stored_schema(dir_);
    try {
      return detail::evolve_schema(dataset_, stored_, schema_);
    } catch (const DestinationError& e) {
      throw DestinationError(fmt::format("file destination: '{}': {}", dir_.string(), e.what()));
    }
  }

  // Gives every target a complete, durable temporary file (an empty one for a partition without
  // rows) and writes the key files of long keys.
  void stage_all() {
    std::vector<std::string> names;
    for (const Field& f : schema_.fields()) names.push_back(f.name);
    for (std::size_t i = 0; i < targets_.size(); ++i) {
      Target& target = targets_[i];
      fs::path& temp = temp_of(target);
      if (dataset_.partitioning) {
        posix::remove_stale_temps(target.dir);
        const std::string& key = keys()[i];
        if (escape_key(key).find('~') != std::string::npos &&
            posix::read_file(target.dir / key_file) != key) {
          posix::replace_file(target.dir / key_file, key);
        }
      }
      if (!fs::exists(temp)) posix::append_to(temp, {});
      if (state_.format == Format::csv && !target.header.empty() && target.header != names) {
        fs::path wide = posix::temp_beside(target.dir / state_.data_name());
        std::optional<fs::path> narrow = std::move(target.temp);
        target.temp = wide;
        widen_csv(*narrow, wide, names);
        posix::remove_quietly(*narrow);
      }
      posix::fsync_file(*target.temp);
      if (dataset_.partitioning) stage_record(target);
    }
  }

  // The record of what the partition's new file holds, to go beside it (status --verify).
  void stage_record(Target& target) {
    target.record = posix::temp_beside(target.dir / written_file);
    posix::append_to(*target.record, State::written_record(*target.temp) + "\n");
    posix::fsync_file(*target.record);
  }

  // The partition of each target (partitioned datasets).
  const std::vector<std::string>& keys() const { return router_ ? router_->keys() : window_keys_; }

  void add_target(const std::string& key) {
    targets_.push_back(
        {state_.partition_dir(dir_, dataset_.partitioning->column(), key), {}, {}, {}, {}});
  }

  // After a write without a window: the partitions it did not write, and rows an earlier version
  // kept beside the partitions, go.
  void drop_others() {
    for (auto& [key, path] : state_.partition_dirs(dir_, dataset_.partitioning->column())) {
      if (router_->holds(key)) continue;
      std::error_code ec;
      fs::remove_all(path, ec);
    }
    posix::remove_quietly(dir_ / state_.data_name());
  }

  void remove_temps() {
    for (Target& target : targets_) {
      if (target.temp) posix::remove_quietly(*target.temp);
      if (target.record) posix::remove_quietly(*target.record);
      target.temp.reset();
      target.record.reset();
    }
  }

  State& state_;
  DatasetRef dataset_;
  const fs::path dir_;
  std::optional<detail::WindowIndex> index_;  // a window's partitions
  std::optional<detail::KeyRouter> router_;   // or, without a window, the rows' own partitions
  std::vector<std::string> window_keys_;
  std::vector<Target> targets_;
  std::optional<Schema> stored_;
  Schema schema_;
  std::size_t buffered_ = 0;
  std::string scratch_;  // a batch's text for one partition
  std::int64_t rows_ = 0;
  bool started_ = false;
  bool unusable_ = false;
};

std::unique_ptr<WindowWriter> FileDestination::open_writer(const DatasetRef& dataset,
                                                           const PartitionWindow* window) {
  return std::make_unique<Writer>(*state_, dataset, window);
}

}  // namespace interloper
