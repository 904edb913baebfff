// BlobStore: named byte strings under one root (a directory, a bucket and prefix, memory), the
// storage an object destination is written over.
//
// Names are relative, '/'-separated ("shop/orders/day=2026-01-01/data.jsonl"); a store never
// interprets them beyond that. Every put is all or nothing: a reader (or a crash) sees the old
// blob or the new one, never a part of the new one and never neither —
//
//   local files  a temporary file beside the target, fsynced, renamed over it, the directory
//                fsynced (posix/durable_file.hpp);
//   S3           one PUT, or one completed multipart upload above the part size;
//   memory       one assignment under a lock.
//
// A streamed put (open_put) gathers its bytes first and makes them appear at commit(); a
// writer dropped uncommitted leaves nothing behind. Metadata (short ASCII pairs) goes with a
// put where the backend keeps it cheaply (S3, memory); `keeps_metadata()` says whether it does,
// and a store that does not drops it.
//
// Failures throw DestinationError naming the blob (locate()) and the backend's reason.
// Thread safety: every store may be used from several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace interloper::blob {

using Metadata = std::vector<std::pair<std::string, std::string>>;

// The value called `name` in `metadata`, if present.
std::optional<std::string> find_meta(const Metadata& metadata, std::string_view name);

struct BlobInfo {
  std::string name;
  std::int64_t size = 0;
  // What the backend says identifies these bytes when listing gives it for free ("etag:..."
  // on S3); "" otherwise (see BlobStore::tag).
  std::string tag;
};

struct BlobHead {
  std::int64_t size = 0;
  Metadata metadata;  // empty where the store keeps none
};

// One streamed put: bytes appended, then made to appear whole by commit().
class BlobWriter {
 public:
  virtual ~BlobWriter() = default;  // uncommitted: nothing appears, nothing is left behind
  virtual void append(std::string_view bytes) = 0;
  // Takes `bytes` over where the backend can (no copy); otherwise as append(string_view).
  virtual void append(std::string&& bytes) { append(std::string_view(bytes)); }
  virtual std::size_t size() const = 0;
  // Makes the bytes ready to appear where the backend stages them (a local store's temporary
  // file written and fsynced), so that what can fail for lack of room fails here and commit()
  // only publishes them. Optional: commit() prepares first when it was not called.
  virtual void prepare() {}
  // Replaces the blob with the bytes appended, carrying `metadata`; returns the new blob's tag.
  // The writer is spent afterwards, whether commit succeeded or threw.
  virtual std::string commit(const Metadata& metadata) = 0;
};

class BlobStore {
 public:
  virtual ~BlobStore() = default;

  // Where `name` lives, for messages and status ("/data/shop/_schema.json",
  // "s3://bucket/raw/shop/_schema.json").
  virtual std::string locate(std::string_view name) const = 0;
  // Whether puts keep their metadata (see head()).
  virtual bool keeps_metadata() const = 0;
  // How many gets are worth keeping in flight ahead of a reader: several for a remote store,
  // none where a get is a local read that a thread of its own would only delay.
  virtual std::size_t read_ahead() const { return 4; }

  // The blob's bytes, or nullopt when there is none.
  virtual std::optional<std::string> get(std::string_view name) = 0;
  // The blob's bytes in consecutive chunks; false (and no call) when there is no such blob.
  virtual bool get_chunks(std::string_view name,
                          const std::function<void(std::string_view)>& consume);
  // Size and metadata, or nullopt when there is no such blob.
  virtual std::optional<BlobHead> head(std::string_view name) = 0;
  // Every blob whose name starts with `prefix`, in name order, with its size.
  virtual std::vector<BlobInfo> list(std::string_view prefix) = 0;
  // The blobs PREFIX + X + "/" + LEAF with X holding no '/', in name order: one folder level
  // below the prefix. A store that can (local files) looks at those folders only.
  virtual std::vector<BlobInfo> list_leaves(std::string_view prefix, std::string_view leaf);

  // Replaces (or creates) the blob; returns its tag.
  virtual std::string put(std::string_view name, std::string_view bytes,
                          const Metadata& metadata = {});
  // A streamed put of `name` (see BlobWriter).
  virtual std::unique_ptr<BlobWriter> open_put(std::string_view name) = 0;
  // Creates the blob only when there is none by that name: true when it did, false when one
  // was there (and stays untouched). Atomic on local files and memory; on S3 a HEAD then a PUT.
  virtual bool put_if_absent(std::string_view name, std::string_view bytes,
                             const Metadata& metadata = {}) = 0;
  // Removes the blobs (missing ones are not an error).
  virtual void remove(const std::vector<std::string>& names) = 0;
  // Clears what writers that died mid-put left in `folder` (a name ending with '/'): a local
  // store's stale temporary files there. A no-op where nothing can be left.
  virtual void tidy(std::string_view folder) { (void)folder; }

  // What identifies the blob's current bytes, in the form commit() and put() return it
  // ("fnv1a64:HEX" of the bytes on local files and memory, "etag:ETAG" on S3). Throws
  // DestinationError when there is no such blob.
  virtual std::string tag(std::string_view name) = 0;
};

// The 64-bit FNV-1a of bytes fed in pieces, as local stores tag their blobs.
class Fnv1a64 {
 public:
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) hash_ = (hash_ ^ c) * 0x100000001b3ull;
  }
  std::string tag() const;  // "fnv1a64:HEX", 16 lower-case digits

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace interloper::blob
