// S3Layout's reads: the objects that may hold rows of a window, their rows in window order,
// and their counts.
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
#include "interloper/destination/s3_layout.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper::detail {

struct S3Layout::Candidate {
  TimePoint start;
  std::string key;
  std::string object;
  std::int64_t size = -1;  // bytes, when listed
};

std::vector<S3Layout::Candidate> S3Layout::candidates(const DatasetRef& dataset,
                                                      WindowIndex& index) {
  std::vector<Candidate> out;
  if (index.is_list()) {
    for (const auto& key : index.keys())
      out.push_back({TimePoint(), key, partition_object(dataset, key)});
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

WindowRows S3Layout::collect(const DatasetRef& dataset, const PartitionWindow& window) {
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
  fetch_in_order(client_, objects, s3_parallel_requests,
                 [&](std::size_t p, std::optional<std::string>&& text) {
                   if (text) {
                     Table& table = rows.table();
                     const std::size_t before = table.num_rows();
                     decode_into(table, found[p].object, *text, declared);
                     if (!reserved && table.num_rows() > before) {
                       // Room for every object at the first one's rows per byte, so that the
                       // result is not regrown (and copied) as it fills.
                       const double bytes = listed_bytes >= 0
                                                ? static_cast<double>(listed_bytes)
                                                : static_cast<double>(text->size()) * found.size();
                       const double per_byte =
                           static_cast<double>(table.num_rows() - before) / text->size();
                       table.reserve(static_cast<std::size_t>(bytes * per_byte * 1.1) + 64);
                       reserved = true;
                     }
                   }
                   rows.end_object(found[p].key, text.has_value());
                 });
  return std::move(rows).finish();
}

std::vector<PartitionCount> S3Layout::counts(const DatasetRef& dataset,
                                             const PartitionWindow& window) {
  WindowIndex index(window, dataset.partitioning->column());
  const std::vector<std::string> keys = window.keys();
  const std::unordered_map<std::string, std::size_t> slot = key_slots(window);
  std::vector<PartitionCount> out(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) out[i].key = keys[i];

  auto found = candidates(dataset, index);
  const bool exact = std::all_of(found.begin(), found.end(),
                                 [&](const Candidate& c) { return slot.count(c.key) != 0; });
  if (exact) {
    // Each object holds exactly its partition's rows: its metadata answers.
    parallel_for(found.size(), s3_parallel_requests, [&](std::size_t i) {
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

// How a listed object differs from the record "SIZE etag:ETAG" written beside it, or "" when
// it does not.
std::string difference(const S3ObjectInfo& now, std::string_view record) {
  while (!record.empty() && (record.back() == '\n' || record.back() == ' ')) {
    record.remove_suffix(1);
  }
  const std::size_t space = record.find(' ');
  const std::string_view size = record.substr(0, space);
  const std::string_view etag =
      space == std::string_view::npos ? std::string_view() : record.substr(space + 1);
  if (size != std::to_string(now.size)) return fmt::format("size {}, written {}", now.size, size);
  if (etag != "etag:" + now.etag) {
    const std::string_view written = etag.starts_with("etag:") ? etag.substr(5) : etag;
    return fmt::format("ETag {}, written {} ({} bytes)", now.etag, written, size);
  }
  return {};
}

}  // namespace

std::vector<PartitionCheck> S3Layout::check(const DatasetRef& dataset,
                                            const PartitionWindow& window) {
  // One listing gives every data object's size and ETag and which have a record beside them; no
  // object is read (a truncated one would not parse).
  const std::string prefix =
      dataset_prefix(dataset) + FileDestination::escape_key(dataset.partitioning->column()) + "=";
  std::unordered_map<std::string, S3ObjectInfo> listed;
  for (S3ObjectInfo& info : client_.list(prefix)) listed.emplace(info.key, std::move(info));
  std::vector<PartitionCheck> out;
  std::vector<std::size_t> recorded;  // indices into out
  std::vector<std::string> records;
  for (std::string& key : window.keys()) {
    const std::string object = partition_object(dataset, key);
    if (listed.count(object) == 0) {
      out.push_back({std::move(key), PartitionCheck::State::missing, {}, {}});
      continue;
    }
    out.push_back({std::move(key),
                   PartitionCheck::State::present,
                   fmt::format("s3://{}/{}", client_.location().bucket, object),
                   {}});
    if (listed.count(written_object(object)) == 0) continue;  // written before records were kept
    recorded.push_back(out.size() - 1);
    records.push_back(written_object(object));
  }
  fetch_in_order(client_, records, s3_parallel_requests,
                 [&](std::size_t j, std::optional<std::string>&& text) {
                   if (!text) return;
                   PartitionCheck& check = out[recorded[j]];
                   const std::string object = partition_object(dataset, check.key);
                   check.reason = difference(listed.at(object), *text);
                   if (!check.reason.empty()) check.state = PartitionCheck::State::changed;
                 });
  return out;
}

Table S3Layout::read_whole(const DatasetRef& dataset) {
  auto schema = stored_schema(dataset);
  const std::string object = whole_object(dataset);
  auto text = client_.get(object);
  if (!text) return schema ? Table(*schema) : Table();
  return decode(object, *text, schema ? &*schema : nullptr);
}

Table S3Layout::read_everything(const DatasetRef& dataset) {
  auto schema = stored_schema(dataset);
  const Schema* declared = schema ? &*schema : nullptr;
  Table out = schema ? Table(*schema) : Table();
  auto stored = stored_partitions(dataset);
  std::sort(stored.begin(), stored.end(),
            [](const StoredPartition& a, const StoredPartition& b) { return a.key < b.key; });
  for (const StoredPartition& partition : stored) {
    if (auto text = client_.get(partition.object)) {
      out.append_table(decode(partition.object, *text, declared));
    }
  }
  const std::string object = whole_object(dataset);
  if (auto text = client_.get(object)) out.append_table(decode(object, *text, declared));
  return out;
}

std::int64_t S3Layout::whole_count(const DatasetRef& dataset) {
  return rows_of(whole_object(dataset)).value_or(0);
}

}  // namespace interloper::detail
