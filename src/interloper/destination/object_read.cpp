// ObjectDestination's reads: the objects that may hold rows of a window, their rows in window
// order, their counts and their checks.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "interloper/destination/object_core.hpp"

namespace interloper {

using detail::ObjectLayout;
using detail::StoredPartition;
using detail::WindowIndex;
using detail::WindowRows;
using detail::WindowRowsBuilder;

struct ObjectDestination::Core::Candidate {
  TimePoint start;
  std::string key;
  std::string object;
  std::int64_t size = -1;  // bytes, when listed
};

std::vector<ObjectDestination::Core::Candidate> ObjectDestination::Core::candidates(
    const DatasetRef& dataset, WindowIndex& index) {
  std::vector<Candidate> out;
  if (index.is_list()) {
    for (const auto& key : index.keys()) {
      std::string object = layout.partition_object(dataset, key);
      // A hashed folder is the key's only when the key kept beside it says so.
      if (ObjectLayout::hashed(key) && hashed_key(object) != key) continue;
      out.push_back({TimePoint(), key, std::move(object)});
    }
    return out;
  }
  for (auto& stored : stored_partitions(dataset)) {
    TimePoint start;
    if (index.is_time()) {
      auto overlap = index.overlap_start(stored.key);
      if (!overlap) continue;
      start = *overlap;
    }
    out.push_back({start, std::move(stored.key), std::move(stored.object), stored.size});
  }
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return a.start < b.start || (a.start == b.start && a.key < b.key);
  });
  return out;
}

WindowRows ObjectDestination::Core::collect(const DatasetRef& dataset,
                                            const PartitionWindow& window) {
  auto schema = stored_schema(dataset);
  const Schema* declared = schema ? &*schema : nullptr;
  WindowIndex index(window, dataset.partitioning->column());
  const std::vector<Candidate> found = candidates(dataset, index);
  std::vector<std::string> objects;
  std::int64_t listed_bytes = 0;  // -1 when some size is not known
  for (const Candidate& c : found) {
    objects.push_back(c.object);
    listed_bytes = listed_bytes < 0 || c.size < 0 ? -1 : listed_bytes + c.size;
  }
  // Objects are decoded in window order straight into one table while the next ones are
  // fetched.
  WindowRowsBuilder rows(window, index, declared);
  bool reserved = false;
  detail::fetch_in_order(
      store, objects, store.read_ahead(), [&](std::size_t p, std::optional<std::string>&& text) {
        if (text) {
          Table& table = rows.table();
          const std::size_t before = table.num_rows();
          decode_into(table, found[p].object, *text, declared);
          if (!reserved && p + 1 < found.size() && table.num_rows() > before) {
            // Room for every object at the first one's rows per byte (when more follow), so that
            // the result is not regrown (and copied) as it fills.
            const double bytes = listed_bytes >= 0
                                     ? static_cast<double>(listed_bytes)
                                     : static_cast<double>(text->size()) * found.size();
            const double per_byte = static_cast<double>(table.num_rows() - before) / text->size();
            table.reserve(static_cast<std::size_t>(bytes * per_byte * 1.1) + 64);
            reserved = true;
          }
        }
        rows.end_object(found[p].key, text.has_value());
      });
  return std::move(rows).finish();
}

std::vector<PartitionCount> ObjectDestination::Core::counts(const DatasetRef& dataset,
                                                            const PartitionWindow& window) {
  WindowIndex index(window, dataset.partitioning->column());
  const std::vector<std::string> keys = window.keys();
  const std::unordered_map<std::string, std::size_t> slot = detail::key_slots(window);
  std::vector<PartitionCount> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) out[i].key = keys[i];

  auto found = candidates(dataset, index);
  const bool exact = std::all_of(found.begin(), found.end(),
                                 [&](const Candidate& c) { return slot.count(c.key) != 0; });
  if (exact) {
    // Each object holds exactly its partition's rows: its metadata answers.
    detail::parallel_for(found.size(), detail::parallel_requests, [&](std::size_t i) {
      PartitionCount& count = out[slot.at(found[i].key)];
      if (auto rows = rows_of(found[i].object)) {
        count.rows = *rows;
        count.written = true;
      }
    });
    return out;
  }
  // Objects of another granularity overlap the window: place their rows one by one.
  WindowRows collected = collect(dataset, window);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].rows = static_cast<std::int64_t>(collected.counts[i]);
    out[i].written = collected.written[i] || collected.counts[i] > 0;
  }
  return out;
}

namespace {

// How an object of `size` bytes tagged `tag` differs from the record "SIZE TAG" written beside
// it, or "" when it does not.
std::string difference(std::int64_t size, const std::string& tag, std::string_view record) {
  while (!record.empty() && (record.back() == '\n' || record.back() == ' ')) {
    record.remove_suffix(1);
  }
  const std::size_t space = record.find(' ');
  const std::string_view written_size = record.substr(0, space);
  const std::string_view written_tag =
      space == std::string_view::npos ? std::string_view() : record.substr(space + 1);
  if (written_size != std::to_string(size)) {
    return fmt::format("size {}, written {}", size, written_size);
  }
  if (written_tag == tag) return {};
  if (tag.starts_with("etag:")) {
    const std::string_view was =
        written_tag.starts_with("etag:") ? written_tag.substr(5) : written_tag;
    return fmt::format("ETag {}, written {} ({} bytes)", tag.substr(5), was, size);
  }
  return fmt::format("content differs from what was written ({} bytes)", size);
}

}  // namespace

std::vector<PartitionCheck> ObjectDestination::Core::check(const DatasetRef& dataset,
                                                           const PartitionWindow& window) {
  // One listing gives every data object's size (and its tag, where listing has it) and which
  // have a record beside them; no object is parsed (a truncated one would not parse).
  std::unordered_map<std::string, blob::BlobInfo> listed;
  for (blob::BlobInfo& info : store.list(ObjectLayout::partitions_prefix(dataset))) {
    listed.emplace(info.name, std::move(info));
  }
  std::vector<PartitionCheck> out;
  std::vector<std::size_t> recorded;  // indices into out
  std::vector<std::string> records;
  for (std::string& key : window.keys()) {
    const std::string object = layout.partition_object(dataset, key);
    if (listed.count(object) == 0) {
      out.push_back({std::move(key), PartitionCheck::State::missing, {}, {}});
      continue;
    }
    out.push_back({std::move(key), PartitionCheck::State::present, store.locate(object), {}});
    const std::string record = ObjectLayout::written_object(object);
    if (listed.count(record) == 0) continue;  // written before records were kept
    recorded.push_back(out.size() - 1);
    records.push_back(record);
  }
  detail::fetch_in_order(store, records, store.read_ahead(),
                         [&](std::size_t j, std::optional<std::string>&& text) {
                           if (!text) return;
                           PartitionCheck& check = out[recorded[j]];
                           const std::string object = layout.partition_object(dataset, check.key);
                           const blob::BlobInfo& now = listed.at(object);
                           const std::string tag = now.tag.empty() ? store.tag(object) : now.tag;
                           check.reason = difference(now.size, tag, *text);
                           if (!check.reason.empty()) check.state = PartitionCheck::State::changed;
                         });
  return out;
}

Table ObjectDestination::Core::read_whole(const DatasetRef& dataset) {
  auto schema = stored_schema(dataset);
  const std::string object = layout.whole_object(dataset);
  auto text = store.get(object);
  if (!text) return schema ? Table(*schema) : Table();
  return decode(object, *text, schema ? &*schema : nullptr);
}

Table ObjectDestination::Core::read_everything(const DatasetRef& dataset) {
  auto schema = stored_schema(dataset);
  const Schema* declared = schema ? &*schema : nullptr;
  Table out = schema ? Table(*schema) : Table();
  auto stored = stored_partitions(dataset);
  std::sort(stored.begin(), stored.end(),
            [](const StoredPartition& a, const StoredPartition& b) { return a.key < b.key; });
  for (const StoredPartition& partition : stored) {
    if (auto text = store.get(partition.object)) {
      out.append_table(decode(partition.object, *text, declared));
    }
  }
  const std::string object = layout.whole_object(dataset);
  if (auto text = store.get(object)) out.append_table(decode(object, *text, declared));
  return out;
}

std::int64_t ObjectDestination::Core::whole_count(const DatasetRef& dataset) {
  return rows_of(layout.whole_object(dataset)).value_or(0);
}

}  // namespace interloper
