// FileDestination: one file per partition under ROOT/SOURCE/ASSET/COLUMN=KEY/.
//
// A partition file is replaced the durable way (posix/durable_file.hpp): a temporary file beside
// it, fsynced, renamed over the old one, the directory fsynced; so a reader (or a crash) sees the
// old or the new file, never a mix. Keys become directory names by escape_key (path_key.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "interloper/data/format.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/file_state.hpp"
#include "interloper/destination/object_text.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/posix/durable_file.hpp"

namespace interloper {

namespace fs = std::filesystem;

namespace {

constexpr const char* key_file = detail::file_key_name;
constexpr const char* schema_file = detail::file_schema_name;
constexpr const char* retired_file = detail::file_retired_name;

// The size a written record names ("SIZE ..."), as text.
std::string_view recorded_size(std::string_view record) {
  return record.substr(0, record.find(' '));
}

}  // namespace

fs::path FileDestination::State::dataset_dir(const DatasetRef& dataset) const {
  fs::path dir = root;
  if (!dataset.source.empty()) dir /= escape_key(dataset.source);
  return dir / escape_key(dataset.asset);
}

std::optional<Schema> FileDestination::State::stored_schema(const fs::path& dir) const {
  auto text = posix::read_file(dir / schema_file);
  if (!text) return std::nullopt;
  try {
    return schema_from_json(*text);
  } catch (const DataError& e) {
    throw DestinationError(
        fmt::format("file destination: '{}': {}", (dir / schema_file).string(), e.what()));
  }
}

std::vector<std::string> FileDestination::State::retired(const fs::path& dir) const {
  auto text = posix::read_file(dir / retired_file);
  if (!text) return {};
  return detail::retired_names(
      *text, fmt::format("file destination: '{}'", (dir / retired_file).string()));
}

void FileDestination::State::record_retired(const fs::path& dir, const DatasetRef& dataset,
                                            const Schema& merged, const Schema& incoming) const {
  const std::vector<std::string> before = retired(dir);
  const std::vector<std::string> after = detail::retired_columns(dataset, merged, incoming, before);
  if (after == before) return;
  if (after.empty()) {
    std::error_code ec;
    fs::remove(dir / retired_file, ec);
    posix::fsync_dir(dir);
    return;
  }
  std::vector<Field> fields;
  for (const std::string& name : after) fields.push_back(merged.field(*merged.find(name)));
  posix::replace_file(dir / retired_file, schema_to_json(Schema(std::move(fields))));
}

std::string FileDestination::State::encode(const Table& table) const {
  if (table.num_rows() == 0) return {};  // an empty partition is an empty file
  try {
    return format == Format::csv ? to_csv(table) : to_json_lines(table);
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("file destination: {}", e.what()));
  }
}

Table FileDestination::State::decode(const fs::path& file, const std::string& text,
                                     const Schema* schema) const {
  if (text.empty()) return schema ? Table(*schema) : Table();
  try {
    return format == Format::csv ? parse_csv(text, schema) : parse_json_lines(text, schema);
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("file destination: '{}': {}", file.string(), e.what()));
  }
}

void FileDestination::State::decode_into(Table& table, const fs::path& file,
                                         const std::string& text, const Schema* schema) const {
  try {
    detail::append_object_rows(table, format, text, schema);
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("file destination: '{}': {}", file.string(), e.what()));
  }
}

// Every partition directory of `dir` for `column`: (key, path).
std::vector<std::pair<std::string, fs::path>> FileDestination::State::partition_dirs(
    const fs::path& dir, const std::string& column) const {
  std::vector<std::pair<std::string, fs::path>> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return out;
    throw DestinationError(
        fmt::format("file destination: cannot list '{}': {}", dir.string(), ec.message()));
  }
  const std::string prefix = escape_key(column) + "=";
  for (const auto& entry : it) {
    std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !entry.is_directory()) continue;
    std::string component = name.substr(prefix.size());
    std::string key;
    if (component.find('~') != std::string::npos) {
      auto stored = posix::read_file(entry.path() / key_file);
      if (!stored) continue;  // a crash before the key file landed: nothing was written
      key = *stored;
    } else {
      try {
        key = unescape_key(component);
      } catch (const DestinationError&) {
        continue;  // not ours
      }
    }
    out.emplace_back(std::move(key), entry.path());
  }
  return out;
}

fs::path FileDestination::State::partition_dir(const fs::path& dir, const std::string& column,
                                               const std::string& key) const {
  return dir / (escape_key(column) + "=" + escape_key(key));
}

std::vector<FileDestination::State::Candidate> FileDestination::State::candidates(
    const fs::path& dir, const std::string& column, const detail::WindowIndex& index) const {
  std::vector<Candidate> candidates;
  if (index.is_list()) {
    for (const auto& key : index.keys()) {
      fs::path p = partition_dir(dir, column, key);
      if (escape_key(key).find('~') == std::string::npos || posix::read_file(p / key_file) == key) {
        candidates.push_back({TimePoint(), key, p});
      }
    }
    return candidates;
  }
  for (auto& [key, path] : partition_dirs(dir, column)) {
    TimePoint start;
    if (index.is_time()) {
      auto overlap = index.overlap_start(key);
      if (!overlap) continue;
      start = *overlap;
    }
    candidates.push_back({start, std::move(key), std::move(path)});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.start < b.start || (a.start == b.start && a.key < b.key);
  });
  return candidates;
}

detail::WindowRows FileDestination::State::collect(const DatasetRef& dataset,
                                                   const PartitionWindow& window) const {
  const fs::path dir = dataset_dir(dataset);
  auto schema = stored_schema(dir);
  const Schema* declared = schema ? &*schema : nullptr;
  detail::WindowIndex index(window, dataset.partitioning->column());
  detail::WindowRowsBuilder rows(window, index, declared);
  for (const auto& candidate : candidates(dir, index.column(), index)) {
    const fs::path file = candidate.path / data_name();
    const auto text = posix::read_file(file);
    if (text) decode_into(rows.table(), file, *text, declared);
    rows.end_object(candidate.key, text.has_value());
  }
  return std::move(rows).finish();
}

Table FileDestination::State::read_unpartitioned(const fs::path& dir) const {
  auto schema = stored_schema(dir);
  fs::path file = dir / data_name();
  auto text = posix::read_file(file);
  if (!text) return schema ? Table(*schema) : Table();
  return decode(file, *text, schema ? &*schema : nullptr);
}

FileDestination::FileDestination(std::string root, Format format)
    : state_(std::make_unique<State>()) {
  state_->root = fs::path(std::move(root));
  state_->format = format;
}

FileDestination::~FileDestination() = default;

std::string FileDestination::url() const {
  std::string root = fs::absolute(state_->root).lexically_normal().string();
  return fmt::format("file://{}?format={}", root, state_->format == Format::csv ? "csv" : "jsonl");
}

Table FileDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  if (!dataset.partitioning) return state_->read_unpartitioned(state_->dataset_dir(dataset));
  if (!window) {
    // Everything: the partition directories in key order, then an unpartitioned file if any.
    const fs::path dir = state_->dataset_dir(dataset);
    auto schema = state_->stored_schema(dir);
    Table out = schema ? Table(*schema) : Table();
    auto dirs = state_->partition_dirs(dir, dataset.partitioning->column());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& [key, path] : dirs) {
      fs::path file = path / state_->data_name();
      if (auto text = posix::read_file(file)) {
        out.append_table(state_->decode(file, *text, schema ? &*schema : nullptr));
      }
    }
    fs::path file = dir / state_->data_name();
    if (auto text = posix::read_file(file)) {
      out.append_table(state_->decode(file, *text, schema ? &*schema : nullptr));
    }
    return out;
  }
  return state_->collect(dataset, *window).rows;
}

std::int64_t FileDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  if (!partition || !dataset.partitioning) {
    return static_cast<std::int64_t>(read(dataset, nullptr).num_rows());
  }
  auto window = partition->as_window();
  std::lock_guard lock(state_->mutex);
  auto collected = state_->collect(dataset, *window);
  return static_cast<std::int64_t>(collected.counts.empty() ? 0 : collected.counts[0]);
}

std::vector<PartitionCount> FileDestination::partition_counts(const DatasetRef& dataset,
                                                              const PartitionWindow& window) {
  std::vector<std::string> keys = window.keys();
  std::vector<PartitionCount> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) out[i].key = keys[i];
  if (!dataset.partitioning) return out;
  std::lock_guard lock(state_->mutex);
  auto collected = state_->collect(dataset, window);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].rows = static_cast<std::int64_t>(collected.counts[i]);
    out[i].written = collected.written[i] || collected.counts[i] > 0;
  }
  return out;
}

std::string FileDestination::State::written_record(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw DestinationError(
        fmt::format("file destination: cannot read '{}': {}", file.string(), std::strerror(errno)));
  }
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits
  std::uint64_t size = 0;
  std::string chunk(std::size_t{1} << 16, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < got; ++i) {
      hash = (hash ^ static_cast<unsigned char>(chunk[i])) * 0x100000001b3ull;
    }
    size += got;
  }
  if (in.bad()) {
    throw DestinationError(
        fmt::format("file destination: cannot read '{}': {}", file.string(), std::strerror(errno)));
  }
  return fmt::format("{} fnv1a64:{:016x}", size, hash);
}

PartitionCheck FileDestination::State::check_partition(const fs::path& dir, std::string key) const {
  const fs::path data = dir / data_name();
  PartitionCheck check{std::move(key), PartitionCheck::State::present, data.string(), {}};
  std::optional<std::string> recorded = posix::read_file(dir / detail::file_written_name);
  if (!recorded || !fs::exists(data)) return check;  // written before records were kept
  while (!recorded->empty() && recorded->back() == '\n') recorded->pop_back();
  const std::string now = written_record(data);
  if (now == *recorded) return check;
  check.state = PartitionCheck::State::changed;
  check.reason =
      recorded_size(now) == recorded_size(*recorded)
          ? fmt::format("content differs from what was written ({} bytes)", recorded_size(now))
          : fmt::format("size {}, written {}", recorded_size(now), recorded_size(*recorded));
  return check;
}

std::vector<PartitionCheck> FileDestination::check_partitions(const DatasetRef& dataset,
                                                              const PartitionWindow& window) {
  if (!dataset.partitioning) return Destination::check_partitions(dataset, window);
  // A partition's own file is compared with its record, never parsed: a truncated file is what
  // this looks for.
  std::vector<PartitionCheck> out;
  {
    std::lock_guard lock(state_->mutex);
    const fs::path dir = state_->dataset_dir(dataset);
    for (std::string& key : window.keys()) {
      const fs::path partition = state_->partition_dir(dir, dataset.partitioning->column(), key);
      if (fs::exists(partition / state_->data_name())) {
        out.push_back(state_->check_partition(partition, std::move(key)));
      } else {
        out.push_back({std::move(key), PartitionCheck::State::missing, {}, {}});
      }
    }
  }
  // One without a file of its own may lie in a partition of another granularity: existence.
  return detail::covered_elsewhere(*this, dataset, window, std::move(out));
}

std::optional<Schema> FileDestination::schema(const DatasetRef& dataset) {
  std::lock_guard lock(state_->mutex);
  return state_->stored_schema(state_->dataset_dir(dataset));
}

std::vector<std::string> FileDestination::retired_columns(const DatasetRef& dataset) {
  std::lock_guard lock(state_->mutex);
  return state_->retired(state_->dataset_dir(dataset));
}

void FileDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  const fs::path dir = state_->dataset_dir(dataset);
  std::error_code ec;
  if (window == nullptr || dataset.partitioning == nullptr) {
    fs::remove_all(dir, ec);
    if (ec) {
      throw DestinationError(
          fmt::format("file destination: cannot remove '{}': {}", dir.string(), ec.message()));
    }
    if (dir.has_parent_path() && fs::exists(dir.parent_path())) posix::fsync_dir(dir.parent_path());
    return;
  }
  bool removed = false;
  for (const auto& [key, path] : state_->partition_dirs(dir, dataset.partitioning->column())) {
    if (!detail::drop_covers(*window, key)) continue;
    fs::remove_all(path, ec);
    if (ec) {
      throw DestinationError(
          fmt::format("file destination: cannot remove '{}': {}", path.string(), ec.message()));
    }
    removed = true;
  }
  if (removed) posix::fsync_dir(dir);
}

}  // namespace interloper
