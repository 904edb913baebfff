// Internal: where S3Destination keeps a dataset's objects, and how it reads and writes them.
//
//   PREFIX/SOURCE/ASSET/_schema.json           the schema last written
//   PREFIX/SOURCE/ASSET/COLUMN=KEY/data.jsonl   one partition (data.csv in csv format)
//   PREFIX/SOURCE/ASSET/COLUMN=KEY/_written     "SIZE etag:ETAG" of the partition's object as
//                                               written, for status --verify
//   PREFIX/SOURCE/ASSET/data.jsonl              an unpartitioned dataset
//
// Components are escaped exactly as the file destination escapes directory names. Object
// metadata: "rows" (the row count) on every data object, "partition-key" (the key,
// percent-encoded) when the escaped key is a hash.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "interloper/destination.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/s3/client.hpp"

namespace interloper::detail {

struct StoredPartition {
  std::string key;
  std::string object;
  std::int64_t size = -1;  // bytes, as listed (-1: not known)
};

// The bytes of one object being written: in memory at first, in an unlinked temporary file once
// they pass a few MiB, so a writer's memory stays bounded whatever the partition size.
class Spool {
 public:
  Spool() = default;
  explicit Spool(std::string bytes) : memory_(std::move(bytes)) {}
  ~Spool();
  Spool(Spool&& other) noexcept;
  Spool& operator=(Spool&&) = delete;
  Spool(const Spool&) = delete;

  void append(std::string_view bytes);
  void append(std::string&& bytes);  // takes the buffer over when the spool is empty
  std::size_t size() const { return file_size_ + memory_.size(); }
  // Every byte, in memory. Throws DestinationError when the temporary file cannot be read.
  std::string read_all();
  // Calls `consume(chunk)` for consecutive chunks of at most `chunk_size` bytes.
  template <typename Consume>
  void for_each_chunk(std::size_t chunk_size, Consume consume);

 private:
  void spill();
  std::string read_at(std::size_t offset, std::size_t size) const;

  std::string memory_;
  int fd_ = -1;
  std::size_t file_size_ = 0;
};

template <typename Consume>
void Spool::for_each_chunk(std::size_t chunk_size, Consume consume) {
  if (fd_ < 0) {
    for (std::size_t at = 0; at < memory_.size(); at += chunk_size) {
      consume(std::string_view(memory_).substr(at, chunk_size));
    }
    return;
  }
  spill();
  for (std::size_t at = 0; at < file_size_; at += chunk_size) {
    consume(std::string_view(read_at(at, std::min(chunk_size, file_size_ - at))));
  }
}

// Runs fn(0) ... fn(n - 1) on up to `threads` threads (the caller's included), so that requests
// to the store overlap each other and the encoding or decoding around them. Rethrows the first
// exception once every thread has stopped; indices not yet started are then skipped.
void parallel_for(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn);

// Fetches objects[0], objects[1], ... with up to `ahead` GETs in flight and hands each body
// (nullopt for a missing object) to `consume` on the calling thread, in order, so that decoding
// one object overlaps the transfer of the next while no more than `ahead` bodies wait in memory.
// Rethrows the first failure (of a fetch, in order, or of `consume`) once every fetch has
// stopped.
void fetch_in_order(S3Client& client, const std::vector<std::string>& objects, std::size_t ahead,
                    const std::function<void(std::size_t, std::optional<std::string>&&)>& consume);

// Requests a destination keeps in flight at once.
constexpr std::size_t s3_parallel_requests = 4;

class S3Layout {
 public:
  S3Layout(S3Client& client, std::string prefix, FileDestination::Format format,
           std::size_t part_size);

  S3Client& client() { return client_; }
  FileDestination::Format format() const { return format_; }

  std::string dataset_prefix(const DatasetRef& dataset) const;  // ends with '/'
  std::string partition_object(const DatasetRef& dataset, const std::string& key) const;
  std::string whole_object(const DatasetRef& dataset) const;
  // The metadata a data object of `rows` rows for partition `key` carries ("" unpartitioned).
  S3Metadata metadata(const std::string& key, std::int64_t rows) const;

  std::optional<Schema> stored_schema(const DatasetRef& dataset);
  // The stored columns the latest write did not produce (Destination::retired_columns).
  std::vector<std::string> retired_columns(const DatasetRef& dataset);
  // Stores the union of the stored schema and `written`, and which of its columns `written`
  // lacks; returns the union. Throws DestinationError when the types clash.
  Schema store_schema(const DatasetRef& dataset, const Schema& written);

  std::string encode(const Table& table) const;  // in the destination's format
  Table decode(const std::string& object, const std::string& text, const Schema* schema) const;
  // Adds the rows of `text` to `table` (a table of `schema`'s columns when it is given).
  void decode_into(Table& table, const std::string& object, const std::string& text,
                   const Schema* schema) const;

  // One upload: a single PUT up to the part size, a multipart upload beyond. Returns the
  // object's ETag.
  std::string upload(const std::string& object, Spool& bytes, const S3Metadata& metadata);
  std::string upload(const std::string& object, std::string_view text, const S3Metadata& metadata);
  // Records beside a partition's data object what it holds as written (its size and ETag).
  void record_written(const std::string& object, std::size_t size, const std::string& etag);
  // The object holding that record for a partition's data object.
  static std::string written_object(const std::string& object);
  // status --verify: each partition of the window whose own object is listed, present or
  // changed since written; the others missing (see covered_elsewhere).
  std::vector<PartitionCheck> check(const DatasetRef& dataset, const PartitionWindow& window);

  // Every partition object of the dataset (one listing).
  std::vector<StoredPartition> stored_partitions(const DatasetRef& dataset);
  // The rows an object holds (from its metadata), or nullopt when there is no such object.
  std::optional<std::int64_t> rows_of(const std::string& object);

  WindowRows collect(const DatasetRef& dataset, const PartitionWindow& window);
  std::vector<PartitionCount> counts(const DatasetRef& dataset, const PartitionWindow& window);
  Table read_whole(const DatasetRef& dataset);
  Table read_everything(const DatasetRef& dataset);
  std::int64_t whole_count(const DatasetRef& dataset);

  std::unique_ptr<WindowWriter> open_writer(const DatasetRef& dataset,
                                            const PartitionWindow* window);

 private:
  struct Candidate;
  std::vector<Candidate> candidates(const DatasetRef& dataset, WindowIndex& index);
  // A multipart upload of the parts `parts` hands to its argument, in order.
  std::string upload_parts(
      const std::string& object, const S3Metadata& metadata,
      const std::function<void(const std::function<void(std::string_view)>&)>& parts);

  S3Client& client_;
  std::string prefix_;  // "" or ending with '/'
  FileDestination::Format format_;
  std::size_t part_size_;
  std::mutex schema_mutex_;
};

}  // namespace interloper::detail
