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
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/posix/durable_file.hpp"

namespace interloper {

namespace fs = std::filesystem;

namespace {

constexpr const char* key_file = detail::file_key_name;
constexpr const char* schema_file = detail::file_schema_name;
constexpr const char* retired_file = detail::file_retired_name;

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
  } else {
    for (auto& [key, path] : partition_dirs(dir, column)) {
      TimePoint start;
      if (index.is_time()) {
        // Any granularity: a monthly directory may hold rows of a daily window.
        auto granularity = TimeGranularity::infer(key);
        if (!granularity) continue;
        Bounds b;
        try {
          b = granularity->bounds(granularity->parse(key));
        } catch (const std::exception&) {
          continue;
        }
        if (!(b.start < index.bounds()->end) || !(index.bounds()->start < b.end)) continue;
        start = b.start;
      }
      candidates.push_back({start, std::move(key), std::move(path)});
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      return a.start < b.start || (a.start == b.start && a.key < b.key);
    });
  }
  return candidates;
}

FileDestination::State::Collected FileDestination::State::collect(
    const DatasetRef& dataset, const PartitionWindow& window) const {
  const fs::path dir = dataset_dir(dataset);
  const std::string& column = dataset.partitioning->column();
  auto schema = stored_schema(dir);
  const Schema* declared = schema ? &*schema : nullptr;
  detail::WindowIndex index(window, column);
  Collected out;
  out.counts.assign(index.size(), 0);
  out.written.assign(index.size(), false);

  const std::vector<Candidate> found = candidates(dir, column, index);
  std::unordered_map<std::string, std::size_t> key_slot;
  std::vector<std::string> keys = window.keys();
  for (std::size_t i = 0; i < keys.size(); ++i) key_slot.emplace(keys[i], i);

  std::vector<Table> pieces;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> buckets(index.size());
  for (const auto& candidate : found) {
    fs::path file = candidate.path / data_name();
    auto text = posix::read_file(file);
    if (!text) continue;
    if (auto it = key_slot.find(candidate.key); it != key_slot.end()) {
      out.written[it->second] = true;
    }
    Table piece = decode(file, *text, declared);
    if (piece.num_rows() == 0) continue;
    auto c = piece.column_index(column);
    if (!c) continue;
    const auto& cells = piece.column(*c);
    // Rows of one partition mostly share their value: it is located once.
    const Value* last = nullptr;
    std::size_t last_index = detail::WindowIndex::npos;
    for (std::size_t r = 0; r < cells.size(); ++r) {
      std::size_t i = detail::WindowIndex::npos;
      if (!cells[r].is_null()) {
        i = last != nullptr && cells[r] == *last ? last_index : index.locate(cells[r]);
        last = &cells[r];
        last_index = i;
      }
      if (i != detail::WindowIndex::npos) buckets[i].emplace_back(pieces.size(), r);
    }
    pieces.push_back(std::move(piece));
  }
  for (std::size_t i = 0; i < buckets.size(); ++i) out.counts[i] = buckets[i].size();

  // One piece read in order: hand it back as it is.
  if (pieces.size() == 1) {
    std::vector<std::size_t> order;
    bool in_order = true;
    for (const auto& bucket : buckets) {
      for (const auto& [p, r] : bucket) {
        in_order = in_order && r == order.size();
        order.push_back(r);
      }
    }
    out.rows = in_order && order.size() == pieces[0].num_rows() ? std::move(pieces[0])
                                                                : pieces[0].select_rows(order);
    return out;
  }
  out.rows = declared ? Table(*declared) : Table();
  if (pieces.empty()) return out;
  if (!declared) {
    for (const auto& piece : pieces) out.rows.append_table(Table(piece.schema()));
  }
  const Schema& result_schema = out.rows.schema();
  for (const auto& bucket : buckets) {
    for (const auto& [p, r] : bucket) {
      const Table& piece = pieces[p];
      std::vector<Value> row;
      row.reserve(result_schema.size());
      for (const Field& f : result_schema.fields()) {
        auto c = piece.column_index(f.name);
        row.push_back(c ? piece.column(*c)[r] : Value());
      }
      out.rows.append_row(std::move(row));
    }
  }
  return out;
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
