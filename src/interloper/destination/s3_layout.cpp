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
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper::detail {

namespace {

constexpr const char* schema_name = "_schema.json";
// The stored columns the latest write did not produce, as a schema; absent when none.
constexpr const char* retired_name = "_retired.json";
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

void parallel_for(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn) {
  threads = std::min(n, threads);
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;
  auto work = [&] {
    for (std::size_t i; (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

void fetch_in_order(S3Client& client, const std::vector<std::string>& objects, std::size_t ahead,
                    const std::function<void(std::size_t, std::optional<std::string>&&)>& consume) {
  struct Slot {
    bool done = false;
    std::optional<std::string> body;
    std::exception_ptr error;
  };
  const std::size_t n = objects.size();
  std::vector<Slot> slots(n);
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t next = 0;      // the next object to fetch
  std::size_t consumed = 0;  // bodies taken by the caller
  bool stop = false;
  auto fetch = [&] {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stop || next >= n || next < consumed + ahead; });
      if (stop || next >= n) return;
      const std::size_t i = next++;
      lock.unlock();
      Slot got;
      try {
        got.body = client.get(objects[i]);
      } catch (...) {
        got.error = std::current_exception();
      }
      lock.lock();
      got.done = true;
      slots[i] = std::move(got);
      changed.notify_all();
    }
  };
  // Stops and joins the fetchers however the caller leaves.
  struct Fetchers {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& stop;
    std::vector<std::thread> threads;
    ~Fetchers() {
      {
        std::lock_guard lock(mutex);
        stop = true;
      }
      changed.notify_all();
      for (auto& thread : threads) thread.join();
    }
  } fetchers{mutex, changed, stop, {}};
  for (std::size_t t = 0; t < std::min(n, std::max<std::size_t>(ahead, 1)); ++t) {
    fetchers.threads.emplace_back(fetch);
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::optional<std::string> body;
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return slots[i].done; });
      if (slots[i].error) std::rethrow_exception(slots[i].error);
      body = std::move(slots[i].body);
      consumed = i + 1;
    }
    changed.notify_all();
    consume(i, std::move(body));
  }
}

struct S3Layout::Candidate {
  TimePoint start;
  std::string key;
  std::string object;
  std::int64_t size = -1;  // bytes, when listed
};

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
  if (text.empty()) return;
  try {
    if (format_ == FileDestination::Format::csv) {
      table.append_table(parse_csv(text, schema));
    } else {
      append_json_lines_text(table, text, schema ? ReadOptions{*schema, true} : ReadOptions{});
    }
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

void S3Layout::upload(const std::string& object, Spool& bytes, const S3Metadata& metadata) {
  if (bytes.size() <= part_size_) {
    client_.put(object, bytes.read_all(), metadata);
    return;
  }
  upload_parts(object, metadata, [&](const std::function<void(std::string_view)>& part) {
    bytes.for_each_chunk(part_size_, part);
  });
}

void S3Layout::upload(const std::string& object, std::string_view text,
                      const S3Metadata& metadata) {
  if (text.size() <= part_size_) {
    client_.put(object, text, metadata);
    return;
  }
  upload_parts(object, metadata, [&](const std::function<void(std::string_view)>& part) {
    for (std::size_t at = 0; at < text.size(); at += part_size_) part(text.substr(at, part_size_));
  });
}

void S3Layout::upload_parts(
    const std::string& object, const S3Metadata& metadata,
    const std::function<void(const std::function<void(std::string_view)>&)>& parts) {
  const std::string id = client_.start_multipart(object, metadata);
  try {
    std::vector<std::string> etags;
    parts([&](std::string_view part) {
      etags.push_back(client_.upload_part(object, id, static_cast<int>(etags.size()) + 1, part));
    });
    client_.complete_multipart(object, id, etags);
  } catch (...) {
    client_.abort_multipart(object, id);
    throw;
  }
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
  bool own_rows_only = true;  // each object holds only rows of its own partition of the window
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
