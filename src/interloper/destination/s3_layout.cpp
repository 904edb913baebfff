// S3Layout: naming, listing, counting and reading a dataset's objects.
#include "interloper/destination/s3_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <exception>
#include <thread>
#include <unordered_map>

#include "interloper/data/format.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/destination/object_text.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper::detail {

namespace {

constexpr const char* schema_name = "_schema.json";
// The stored columns the latest write did not produce, as a schema; absent when none.
constexpr const char* retired_name = "_retired.json";
constexpr const char* written_name = "_written";
constexpr const char* rows_meta = "rows";
constexpr const char* key_meta = "partition-key";

bool hashed(const std::string& component) { return component.find('~') != std::string::npos; }

std::optional<std::int64_t> parse_count(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc() || end != text->data() + text->size() || n < 0) return std::nullopt;
  return n;
}

}  // namespace

S3Layout::S3Layout(S3Client& client, std::string prefix, FileDestination::Format format,
                   std::size_t part_size)
    : client_(client), prefix_(std::move(prefix)), format_(format), part_size_(part_size) {
  if (!prefix_.empty()) prefix_ += '/';
}

std::string S3Layout::dataset_prefix(const DatasetRef& dataset) const {
  std::string out = prefix_;
  if (!dataset.source.empty()) out += FileDestination::escape_key(dataset.source) + "/";
  return out + FileDestination::escape_key(dataset.asset) + "/";
}

std::string S3Layout::partition_object(const DatasetRef& dataset, const std::string& key) const {
  return fmt::format("{}{}={}/{}", dataset_prefix(dataset),
                     FileDestination::escape_key(dataset.partitioning->column()),
                     FileDestination::escape_key(key),
                     format_ == FileDestination::Format::csv ? "data.csv" : "data.jsonl");
}

std::string S3Layout::whole_object(const DatasetRef& dataset) const {
  return dataset_prefix(dataset) +
         (format_ == FileDestination::Format::csv ? "data.csv" : "data.jsonl");
}

S3Metadata S3Layout::metadata(const std::string& key, std::int64_t rows) const {
  S3Metadata out{{rows_meta, std::to_string(rows)}};
  if (hashed(FileDestination::escape_key(key))) {
    out.emplace_back(key_meta, s3_uri_encode(key, false));
  }
  return out;
}

std::optional<Schema> S3Layout::stored_schema(const DatasetRef& dataset) {
  const std::string object = dataset_prefix(dataset) + schema_name;
  auto text = client_.get(object);
  if (!text) return std::nullopt;
  try {
    return schema_from_json(*text);
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("s3 destination: '{}': {}", object, e.what()));
  }
}

std::vector<std::string> S3Layout::retired_columns(const DatasetRef& dataset) {
  const std::string object = dataset_prefix(dataset) + retired_name;
  auto text = client_.get(object);
  if (!text) return {};
  return detail::retired_names(*text, fmt::format("s3 destination: '{}'", object));
}

Schema S3Layout::store_schema(const DatasetRef& dataset, const Schema& written) {
  std::lock_guard lock(schema_mutex_);
  auto stored = stored_schema(dataset);
  Schema merged = detail::evolve_schema(dataset, stored, written);
  if (!stored || !(merged == *stored)) {
    client_.put(dataset_prefix(dataset) + schema_name, schema_to_json(merged));
  }
  if (dataset.partitioning == nullptr) return merged;
  const std::vector<std::string> before = retired_columns(dataset);
  const std::vector<std::string> after = detail::retired_columns(dataset, merged, written, before);
  if (after == before) return merged;
  const std::string object = dataset_prefix(dataset) + retired_name;
  if (after.empty()) {
    client_.remove({object});
  } else {
    std::vector<Field> fields;
    for (const std::string& name : after) fields.push_back(merged.field(*merged.find(name)));
    client_.put(object, schema_to_json(Schema(std::move(fields))));
  }
  return merged;
}

std::string S3Layout::encode(const Table& table) const {
  if (table.num_rows() == 0) return {};  // an empty partition is an empty object
  try {
    return format_ == FileDestination::Format::csv ? to_csv(table) : to_json_lines(table);
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("s3 destination: {}", e.what()));
  }
}

void S3Layout::decode_into(Table& table, const std::string& object, const std::string& text,
                           const Schema* schema) const {
  try {
    append_object_rows(table, format_, text, schema);
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("s3 destination: '{}': {}", object, e.what()));
  }
}

Table S3Layout::decode(const std::string& object, const std::string& text,
                       const Schema* schema) const {
  if (text.empty()) return schema ? Table(*schema) : Table();
  try {
    return format_ == FileDestination::Format::csv ? parse_csv(text, schema)
                                                   : parse_json_lines(text, schema);
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("s3 destination: '{}': {}", object, e.what()));
  }
}

std::string S3Layout::upload(const std::string& object, Spool& bytes, const S3Metadata& metadata) {
  if (bytes.size() <= part_size_) return client_.put(object, bytes.read_all(), metadata);
  return upload_parts(object, metadata, [&](const std::function<void(std::string_view)>& part) {
    bytes.for_each_chunk(part_size_, part);
  });
}

std::string S3Layout::upload(const std::string& object, std::string_view text,
                             const S3Metadata& metadata) {
  if (text.size() <= part_size_) return client_.put(object, text, metadata);
  return upload_parts(object, metadata, [&](const std::function<void(std::string_view)>& part) {
    for (std::size_t at = 0; at < text.size(); at += part_size_) part(text.substr(at, part_size_));
  });
}

std::string S3Layout::upload_parts(
    const std::string& object, const S3Metadata& metadata,
    const std::function<void(const std::function<void(std::string_view)>&)>& parts) {
  const std::string id = client_.start_multipart(object, metadata);
  try {
    std::vector<std::string> etags;
    parts([&](std::string_view part) {
      etags.push_back(client_.upload_part(object, id, static_cast<int>(etags.size()) + 1, part));
    });
    return client_.complete_multipart(object, id, etags);
  } catch (...) {
    client_.abort_multipart(object, id);
    throw;
  }
}

std::string S3Layout::written_object(const std::string& object) {
  return object.substr(0, object.rfind('/') + 1) + written_name;
}

void S3Layout::record_written(const std::string& object, std::size_t size,
                              const std::string& etag) {
  client_.put(written_object(object), fmt::format("{} etag:{}", size, etag));
}

std::vector<StoredPartition> S3Layout::stored_partitions(const DatasetRef& dataset) {
  const std::string prefix =
      dataset_prefix(dataset) + FileDestination::escape_key(dataset.partitioning->column()) + "=";
  const std::string suffix = format_ == FileDestination::Format::csv ? "/data.csv" : "/data.jsonl";
  std::vector<StoredPartition> out;
  for (const S3ObjectInfo& info : client_.list(prefix)) {
    std::string_view rest = std::string_view(info.key).substr(prefix.size());
    auto slash = rest.find('/');
    if (slash == std::string_view::npos || rest.substr(slash) != suffix) continue;
    std::string component(rest.substr(0, slash));
    std::string key;
    if (hashed(component)) {
      auto head = client_.head(info.key);
      auto stored = head ? head->meta(key_meta) : std::nullopt;
      if (!stored) continue;  // not one of ours
      key = s3_uri_decode(*stored);
    } else {
      try {
        key = FileDestination::unescape_key(component);
      } catch (const DestinationError&) {
        continue;  // not one of ours
      }
    }
    out.push_back({std::move(key), info.key, info.size});
  }
  return out;
}

std::optional<std::int64_t> S3Layout::rows_of(const std::string& object) {
  auto head = client_.head(object);
  if (!head) return std::nullopt;
  if (auto rows = parse_count(head->meta(rows_meta))) return rows;
  // An object written by another tool: count what it holds.
  auto text = client_.get(object);
  if (!text) return std::nullopt;
  return static_cast<std::int64_t>(decode(object, *text, nullptr).num_rows());
}

}  // namespace interloper::detail
