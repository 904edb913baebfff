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
      // Any granularity: a monthly object may hold rows of a daily window.
      auto granularity = TimeGranularity::infer(stored.key);
      if (!granularity) continue;
      Bounds b;
      try {
        b = granularity->bounds(granularity->parse(stored.key));
      } catch (const std::exception&) {
        continue;
      }
      if (!(b.start < index.bounds()->end) || !(index.bounds()->start < b.end)) continue;
      start = b.start;
    }
    out.push_back({start, std::move(stored.key), std::move(stored.object), stored.size});
  }
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
    return a.start < b.start || (a.start == b.start && a.key < b.key);
  });
  return out;
}

S3Layout::Collected S3Layout::collect(const DatasetRef& dataset, const PartitionWindow& window) {
  const std::string& column = dataset.partitioning->column();
  auto schema = stored_schema(dataset);
  const Schema* declared = schema ? &*schema : nullptr;
  WindowIndex index(window, column);
  Collected out;
  out.counts.assign(index.size(), 0);
  out.written.assign(index.size(), false);
  std::unordered_map<std::string, std::size_t> slot;
  std::vector<std::string> keys = window.keys();
  for (std::size_t i = 0; i < keys.size(); ++i) slot.emplace(keys[i], i);

  const std::vector<Candidate> found = candidates(dataset, index);
  std::vector<std::string> objects;
  std::int64_t listed_bytes = 0;  // -1 when some size is not known
  for (const Candidate& c : found) {
    objects.push_back(c.object);
    listed_bytes = listed_bytes < 0 || c.size < 0 ? -1 : listed_bytes + c.size;
  }
  // Objects are decoded in window order straight into one table while the next ones are
  // fetched; the rows of candidate p end at row ends[p].
  Table rows = declared ? Table(*declared) : Table();
  std::vector<std::size_t> ends(found.size());
  bool reserved = false;
  fetch_in_order(client_, objects, s3_parallel_requests,
                 [&](std::size_t p, std::optional<std::string>&& text) {
                   if (text) {
                     if (auto it = slot.find(found[p].key); it != slot.end()) {
                       out.written[it->second] = true;
                     }
                     const std::size_t before = rows.num_rows();
                     decode_into(rows, found[p].object, *text, declared);
                     if (!reserved && rows.num_rows() > before) {
                       // Room for every object at the first one's rows per byte, so that the
                       // result is not regrown (and copied) as it fills.
                       const double bytes = listed_bytes >= 0
                                                ? static_cast<double>(listed_bytes)
                                                : static_cast<double>(text->size()) * found.size();
                       const double per_byte =
                           static_cast<double>(rows.num_rows() - before) / text->size();
                       rows.reserve(static_cast<std::size_t>(bytes * per_byte * 1.1) + 64);
                       reserved = true;
                     }
                   }
                   ends[p] = rows.num_rows();
                 });
  // Where each row belongs in the window.
  const std::optional<std::size_t> c = rows.column_index(column);
  std::vector<std::size_t> partition_of(rows.num_rows(), WindowIndex::npos);
  bool own_rows_only = true;    // each object holds only rows of its own partition of the window
  const Value* last = nullptr;  // rows of one partition mostly share their value: locate it once
  std::size_t last_index = WindowIndex::npos;
  for (std::size_t p = 0, r = 0; p < found.size(); ++p) {
    auto it = slot.find(found[p].key);
    for (; r < ends[p]; ++r) {
      const Value* v = c ? &rows.column(*c)[r] : nullptr;
      std::size_t i = WindowIndex::npos;
      if (v != nullptr && !v->is_null()) {
        i = last != nullptr && *v == *last ? last_index : index.locate(*v);
        last = v;
        last_index = i;
      }
      if (i != WindowIndex::npos) ++out.counts[i];
      partition_of[r] = i;
      own_rows_only = own_rows_only && it != slot.end() && i == it->second;
    }
  }
  if (own_rows_only) {
    // Candidates come in window order: the rows are in place already.
    out.rows = std::move(rows);
    return out;
  }
  // Objects of another granularity overlap the window: rows of the window, partition by
  // partition.
  std::vector<std::size_t> start(index.size() + 1, 0);
  for (std::size_t i = 0; i < index.size(); ++i) start[i + 1] = start[i] + out.counts[i];
  std::vector<std::size_t> order(start.back());
  for (std::size_t r = 0; r < partition_of.size(); ++r) {
    if (partition_of[r] != WindowIndex::npos) order[start[partition_of[r]]++] = r;
  }
  out.rows = rows.select_rows(order);
  return out;
}

std::vector<PartitionCount> S3Layout::counts(const DatasetRef& dataset,
                                             const PartitionWindow& window) {
  WindowIndex index(window, dataset.partitioning->column());
  std::vector<std::string> keys = window.keys();
  std::unordered_map<std::string, std::size_t> slot;
  for (std::size_t i = 0; i < keys.size(); ++i) slot.emplace(keys[i], i);
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
  Collected collected = collect(dataset, window);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].rows = static_cast<std::int64_t>(collected.counts[i]);
    out[i].written = collected.written[i] || collected.counts[i] > 0;
  }
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
