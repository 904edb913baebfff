// Internal: ObjectDestination's implementation over a BlobStore — the layout of a dataset's
// objects (written once, whatever the store), the format of its data objects, and the reads,
// counts and checks over them. object_writer.cpp writes through it.
//
//   SOURCE/ASSET/_schema.json            the schema last written
//   SOURCE/ASSET/_retired.json           stored columns the latest write did not produce
//   SOURCE/ASSET/COLUMN=KEY/data.jsonl   one partition (data.csv in csv format)
//   SOURCE/ASSET/COLUMN=KEY/_written     "SIZE TAG" of the data object as written (TAG from the
//                                        store: fnv1a64:HEX on files, etag:ETAG on S3), for
//                                        status --verify
//   SOURCE/ASSET/COLUMN=KEY/_key         a hashed KEY's own text (see path_key.cpp)
//   SOURCE/ASSET/data.jsonl              an unpartitioned dataset
//
// Components are escaped by FileDestination::escape_key. Data objects carry metadata where the
// store keeps it: "rows" (the row count) always, "partition-key" (percent-encoded) for a hashed
// key; a store without metadata counts by reading and finds hashed keys in _key.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "interloper/blob/blob_store.hpp"
#include "interloper/blob/spool.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper::detail {

// How a data object's rows are stored: the one place a new format (Parquet) is added.
class ObjectCodec {
 public:
  virtual ~ObjectCodec() = default;
  static const ObjectCodec& of(ObjectFormat format);

  virtual const char* data_name() const = 0;  // "data.jsonl"
  // The rows of an object's text (an empty text is an empty table, of `schema` when given).
  virtual Table decode(std::string_view text, const Schema* schema) const = 0;
  // Adds the rows of `text` to `table` (a table of `schema`'s columns when it is given).
  virtual void decode_into(Table& table, std::string_view text, const Schema* schema) const = 0;
  // Whether a partition's rows, staged as JSON lines batch by batch, are the object itself.
  virtual bool json_lines_are_object() const { return false; }
  // Writes the object of a partition whose rows were staged as JSON lines (columns of `schema`).
  virtual void write_from_json_lines(blob::Spool& staged, const Schema& schema,
                                     blob::BlobWriter& out) const;
};

// Where a dataset's objects are.
class ObjectLayout {
 public:
  explicit ObjectLayout(const ObjectCodec& codec) : codec_(codec) {}

  static std::string dataset_prefix(const DatasetRef& dataset);  // ends with '/'
  static std::string schema_object(const DatasetRef& dataset);
  static std::string retired_object(const DatasetRef& dataset);
  // "SOURCE/ASSET/COLUMN=": what every partition's objects start with.
  static std::string partitions_prefix(const DatasetRef& dataset);
  std::string partition_object(const DatasetRef& dataset, const std::string& key) const;
  std::string whole_object(const DatasetRef& dataset) const;
  // The record of what a partition's data object held as written, and a hashed key's text,
  // beside the data object.
  static std::string written_object(const std::string& object);
  static std::string key_object(const std::string& object);
  // Whether partition `key`'s component is a hash (its text is kept beside it).
  static bool hashed(const std::string& key);
  // The partition component of a listed name when it is a data object of the dataset.
  std::optional<std::string> component_of(const DatasetRef& dataset, const std::string& name) const;

 private:
  const ObjectCodec& codec_;
};

struct StoredPartition {
  std::string key;
  std::string object;
  std::int64_t size = -1;  // bytes, as listed (-1: not known)
};

// Runs fn(0) ... fn(n - 1) on up to `threads` threads (the caller's included), so that requests
// to the store overlap each other and the encoding or decoding around them. Rethrows the first
// exception once every thread has stopped; indices not yet started are then skipped.
void parallel_for(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn);

// Fetches blobs[0], blobs[1], ... with up to `ahead` gets in flight (none: one by one, on the
// calling thread) and hands each body (nullopt
// for a missing blob) to `consume` on the calling thread, in order, so that decoding one
// overlaps the transfer of the next while no more than `ahead` bodies wait in memory. Rethrows
// the first failure once every fetch has stopped.
void fetch_in_order(blob::BlobStore& store, const std::vector<std::string>& blobs,
                    std::size_t ahead,
                    const std::function<void(std::size_t, std::optional<std::string>&&)>& consume);

// Requests a destination keeps in flight at once.
constexpr std::size_t parallel_requests = 4;

}  // namespace interloper::detail

namespace interloper {

struct ObjectDestination::Core {
  // `what` names the destination in messages ("file destination").
  Core(std::unique_ptr<blob::BlobStore> owned, ObjectFormat format, std::string what);

  blob::BlobStore& store;
  std::unique_ptr<blob::BlobStore> owned_store;
  ObjectFormat format;
  const detail::ObjectCodec& codec;
  detail::ObjectLayout layout;
  std::string what;
  std::mutex schema_mutex;

  // A DestinationError "WHAT: 'OBJECT': MESSAGE".
  [[noreturn]] void fail(const std::string& object, std::string_view message) const;

  std::optional<Schema> stored_schema(const DatasetRef& dataset);
  std::vector<std::string> retired_columns(const DatasetRef& dataset);
  // The union of the stored schema and `written` (see evolve_schema). Throws DestinationError
  // when the types clash.
  Schema evolved_schema(const DatasetRef& dataset, const Schema& written);
  // Stores that union, and which of its columns `written` lacks; returns the union.
  Schema store_schema(const DatasetRef& dataset, const Schema& written);

  Table decode(const std::string& object, std::string_view text, const Schema* schema) const;
  void decode_into(Table& table, const std::string& object, std::string_view text,
                   const Schema* schema) const;
  // The metadata a data object of `rows` rows for partition `key` carries ("" unpartitioned).
  blob::Metadata metadata(const std::string& key, std::int64_t rows) const;
  // Writes partition `key`'s own text beside its data object when the key is hashed and the
  // store keeps no metadata (before the data: a hashed folder without it holds nothing).
  void keep_key(const std::string& object, const std::string& key);
  // Adds a partition's data object and the objects beside it (record, key) to `names`.
  static void add_partition_objects(const std::string& object, std::vector<std::string>& names);
  // Records beside a partition's data object what it holds as written.
  void record_written(const std::string& object, std::size_t size, const std::string& tag);

  // Every partition data object of the dataset (one listing).
  std::vector<detail::StoredPartition> stored_partitions(const DatasetRef& dataset);
  // The rows a data object holds (from its metadata, else by reading it), or nullopt when
  // there is no such object.
  std::optional<std::int64_t> rows_of(const std::string& object);

  detail::WindowRows collect(const DatasetRef& dataset, const PartitionWindow& window);
  std::vector<PartitionCount> counts(const DatasetRef& dataset, const PartitionWindow& window);
  std::vector<PartitionCheck> check(const DatasetRef& dataset, const PartitionWindow& window);
  Table read_whole(const DatasetRef& dataset);
  Table read_everything(const DatasetRef& dataset);
  std::int64_t whole_count(const DatasetRef& dataset);
  void drop(const DatasetRef& dataset, const PartitionWindow* window);

  std::unique_ptr<WindowWriter> open_writer(const DatasetRef& dataset,
                                            const PartitionWindow* window);

 private:
  struct Candidate;
  std::vector<Candidate> candidates(const DatasetRef& dataset, detail::WindowIndex& index);
  // The key of a hashed partition folder (from the data object's metadata or _key), or
  // nullopt when it holds none (not ours, or a write that died before its key landed).
  std::optional<std::string> hashed_key(const std::string& object);
  Schema evolve(const DatasetRef& dataset, const std::optional<Schema>& stored,
                const Schema& written) const;
};

}  // namespace interloper

namespace interloper::detail {

// An ObjectDestination over `store` (fault sweeps, the blob contract): `url` is what url()
// says.
std::unique_ptr<ObjectDestination> object_destination(std::unique_ptr<blob::BlobStore> store,
                                                      ObjectFormat format, std::string url);

}  // namespace interloper::detail
