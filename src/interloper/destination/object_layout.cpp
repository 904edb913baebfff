// ObjectDestination's layout and formats: naming a dataset's objects, the schema and retired
// columns kept beside them, the metadata and records kept beside data objects.
#include <fmt/format.h>

#include <charconv>

#include "interloper/data/format.hpp"
#include "interloper/destination/object_core.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/s3/client.hpp"

namespace interloper::detail {

namespace {

constexpr const char* schema_name = "_schema.json";
constexpr const char* retired_name = "_retired.json";
constexpr const char* written_name = "_written";
constexpr const char* key_name = "_key";
constexpr const char* rows_meta = "rows";
constexpr const char* key_meta = "partition-key";

class JsonLinesCodec final : public ObjectCodec {
 public:
  const char* data_name() const override { return "data.jsonl"; }
  Table decode(std::string_view text, const Schema* schema) const override {
    if (text.empty()) return schema ? Table(*schema) : Table();
    return parse_json_lines(text, schema);
  }
  void decode_into(Table& table, std::string_view text, const Schema* schema) const override {
    if (text.empty()) return;
    append_json_lines_text(table, text, schema ? ReadOptions{*schema, true} : ReadOptions{});
  }
  bool json_lines_are_object() const override { return true; }
};

class CsvCodec final : public ObjectCodec {
 public:
  const char* data_name() const override { return "data.csv"; }
  Table decode(std::string_view text, const Schema* schema) const override {
    if (text.empty()) return schema ? Table(*schema) : Table();
    return parse_csv(text, schema);
  }
  void decode_into(Table& table, std::string_view text, const Schema* schema) const override {
    if (!text.empty()) table.append_table(parse_csv(text, schema));
  }
  // The JSON lines re-encoded batch by batch, so memory holds one batch rather than the
  // partition. An empty partition is an empty object.
  void write_from_json_lines(blob::Spool& staged, const Schema& schema,
                             blob::BlobWriter& out) const override {
    if (staged.size() == 0) return;
    std::vector<std::string> names;
    std::vector<std::size_t> columns;
    for (std::size_t c = 0; c < schema.size(); ++c) {
      names.push_back(schema.field(c).name);
      columns.push_back(c);
    }
    std::string header;
    append_csv_header(header, names);
    out.append(std::move(header));
    TableStreamParser parser(
        TableStreamParser::Format::json_lines,
        [&](Table&& batch) {
          std::string records;
          append_csv_records(records, batch, columns);
          out.append(std::move(records));
        },
        TableStreamParser::Limits{}, &schema);
    staged.for_each_chunk(std::size_t{1} << 20,
                          [&](std::string_view chunk) { parser.feed(chunk); });
    parser.finish();
  }
};

std::optional<std::int64_t> parse_count(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), n);
  if (ec != std::errc() || end != text->data() + text->size() || n < 0) return std::nullopt;
  return n;
}

std::string folder_of(const std::string& object) { return object.substr(0, object.rfind('/') + 1); }

}  // namespace

void ObjectCodec::write_from_json_lines(blob::Spool& staged, const Schema&,
                                        blob::BlobWriter& out) const {
  staged.for_each_chunk(std::size_t{1} << 20, [&](std::string_view chunk) { out.append(chunk); });
}

const ObjectCodec& ObjectCodec::of(ObjectFormat format) {
  static const JsonLinesCodec json_lines;
  static const CsvCodec csv;
  return format == ObjectFormat::csv ? static_cast<const ObjectCodec&>(csv) : json_lines;
}

std::string ObjectLayout::dataset_prefix(const DatasetRef& dataset) {
  std::string out;
  if (!dataset.source.empty()) out += FileDestination::escape_key(dataset.source) + "/";
  return out + FileDestination::escape_key(dataset.asset) + "/";
}

std::string ObjectLayout::schema_object(const DatasetRef& dataset) {
  return dataset_prefix(dataset) + schema_name;
}

std::string ObjectLayout::retired_object(const DatasetRef& dataset) {
  return dataset_prefix(dataset) + retired_name;
}

std::string ObjectLayout::partitions_prefix(const DatasetRef& dataset) {
  return dataset_prefix(dataset) + FileDestination::escape_key(dataset.partitioning->column()) +
         "=";
}

std::string ObjectLayout::partition_object(const DatasetRef& dataset,
                                           const std::string& key) const {
  return fmt::format("{}{}/{}", partitions_prefix(dataset), FileDestination::escape_key(key),
                     codec_.data_name());
}

std::string ObjectLayout::whole_object(const DatasetRef& dataset) const {
  return dataset_prefix(dataset) + codec_.data_name();
}

std::string ObjectLayout::written_object(const std::string& object) {
  return folder_of(object) + written_name;
}

std::string ObjectLayout::key_object(const std::string& object) {
  return folder_of(object) + key_name;
}

bool ObjectLayout::hashed(const std::string& key) {
  return FileDestination::escape_key(key).find('~') != std::string::npos;
}

std::optional<std::string> ObjectLayout::component_of(const DatasetRef& dataset,
                                                      const std::string& name) const {
  const std::string prefix = partitions_prefix(dataset);
  if (!name.starts_with(prefix)) return std::nullopt;
  std::string_view rest = std::string_view(name).substr(prefix.size());
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos || rest.substr(slash + 1) != codec_.data_name()) {
    return std::nullopt;
  }
  return std::string(rest.substr(0, slash));
}

}  // namespace interloper::detail

namespace interloper {

using detail::ObjectLayout;

ObjectDestination::Core::Core(std::unique_ptr<blob::BlobStore> owned, ObjectFormat format,
                              std::string what)
    : store(*owned),
      owned_store(std::move(owned)),
      format(format),
      codec(detail::ObjectCodec::of(format)),
      layout(codec),
      what(std::move(what)) {}

void ObjectDestination::Core::fail(const std::string& object, std::string_view message) const {
  throw DestinationError(fmt::format("{}: '{}': {}", what, store.locate(object), message));
}

std::optional<Schema> ObjectDestination::Core::stored_schema(const DatasetRef& dataset) {
  const std::string object = ObjectLayout::schema_object(dataset);
  auto text = store.get(object);
  if (!text) return std::nullopt;
  try {
    return schema_from_json(*text);
  } catch (const DataError& e) {
    fail(object, e.what());
  }
}

std::vector<std::string> ObjectDestination::Core::retired_columns(const DatasetRef& dataset) {
  const std::string object = ObjectLayout::retired_object(dataset);
  auto text = store.get(object);
  if (!text) return {};
  return detail::retired_names(*text, fmt::format("{}: '{}'", what, store.locate(object)));
}

Schema ObjectDestination::Core::evolve(const DatasetRef& dataset,
                                       const std::optional<Schema>& stored,
                                       const Schema& written) const {
  try {
    return detail::evolve_schema(dataset, stored, written);
  } catch (const DestinationError& e) {
    fail(ObjectLayout::dataset_prefix(dataset), e.what());
  }
}

Schema ObjectDestination::Core::evolved_schema(const DatasetRef& dataset, const Schema& written) {
  return evolve(dataset, stored_schema(dataset), written);
}

Schema ObjectDestination::Core::store_schema(const DatasetRef& dataset, const Schema& written) {
  std::lock_guard lock(schema_mutex);
  auto stored = stored_schema(dataset);
  Schema merged = evolve(dataset, stored, written);
  if (!stored || !(merged == *stored)) {
    store.put(ObjectLayout::schema_object(dataset), schema_to_json(merged));
  }
  const std::vector<std::string> before = retired_columns(dataset);
  const std::vector<std::string> after = detail::retired_columns(dataset, merged, written, before);
  if (after == before) return merged;
  const std::string object = ObjectLayout::retired_object(dataset);
  if (after.empty()) {
    store.remove({object});
  } else {
    std::vector<Field> fields;
    for (const std::string& name : after) fields.push_back(merged.field(*merged.find(name)));
    store.put(object, schema_to_json(Schema(std::move(fields))));
  }
  return merged;
}

Table ObjectDestination::Core::decode(const std::string& object, std::string_view text,
                                      const Schema* schema) const {
  try {
    return codec.decode(text, schema);
  } catch (const DataError& e) {
    fail(object, e.what());
  }
}

void ObjectDestination::Core::decode_into(Table& table, const std::string& object,
                                          std::string_view text, const Schema* schema) const {
  try {
    codec.decode_into(table, text, schema);
  } catch (const DataError& e) {
    fail(object, e.what());
  }
}

blob::Metadata ObjectDestination::Core::metadata(const std::string& key, std::int64_t rows) const {
  blob::Metadata out{{detail::rows_meta, std::to_string(rows)}};
  if (ObjectLayout::hashed(key))
    out.emplace_back(detail::key_meta, detail::s3_uri_encode(key, false));
  return out;
}

void ObjectDestination::Core::keep_key(const std::string& object, const std::string& key) {
  // A store keeping metadata has the key on the data object already (see metadata()).
  if (!ObjectLayout::hashed(key) || store.keeps_metadata()) return;
  const std::string name = ObjectLayout::key_object(object);
  if (!store.put_if_absent(name, key) && store.get(name) != key) store.put(name, key);
}

void ObjectDestination::Core::add_partition_objects(const std::string& object,
                                                    std::vector<std::string>& names) {
  names.push_back(ObjectLayout::written_object(object));
  names.push_back(ObjectLayout::key_object(object));
  names.push_back(object);  // last: a removal cut short leaves the data it did not remove
}

void ObjectDestination::Core::record_written(const std::string& object, std::size_t size,
                                             const std::string& tag) {
  store.put(ObjectLayout::written_object(object), fmt::format("{} {}", size, tag));
}

std::optional<std::string> ObjectDestination::Core::hashed_key(const std::string& object) {
  if (store.keeps_metadata()) {
    auto head = store.head(object);
    if (!head) return std::nullopt;
    if (auto key = blob::find_meta(head->metadata, detail::key_meta)) {
      return detail::s3_uri_decode(*key);
    }
  }
  return store.get(ObjectLayout::key_object(object));
}

std::vector<detail::StoredPartition> ObjectDestination::Core::stored_partitions(
    const DatasetRef& dataset) {
  std::vector<detail::StoredPartition> out;
  for (blob::BlobInfo& info :
       store.list_leaves(ObjectLayout::partitions_prefix(dataset), codec.data_name())) {
    const auto component = layout.component_of(dataset, info.name);
    if (!component) continue;
    std::optional<std::string> key;
    if (component->find('~') != std::string::npos) {
      key = hashed_key(info.name);  // none: not one of ours, or its write died first
    } else {
      try {
        key = FileDestination::unescape_key(*component);
      } catch (const DestinationError&) {
        // not one of ours
      }
    }
    if (key) out.push_back({std::move(*key), std::move(info.name), info.size});
  }
  return out;
}

std::optional<std::int64_t> ObjectDestination::Core::rows_of(const std::string& object) {
  auto head = store.head(object);
  if (!head) return std::nullopt;
  if (auto rows = detail::parse_count(blob::find_meta(head->metadata, detail::rows_meta))) {
    return rows;
  }
  // A store without metadata, or an object written by another tool: count what it holds.
  auto text = store.get(object);
  if (!text) return std::nullopt;
  return static_cast<std::int64_t>(decode(object, *text, nullptr).num_rows());
}

}  // namespace interloper
