// The memory BlobStore: a sorted map under a lock.
#include <fmt/format.h>

#include <map>
#include <mutex>

#include "interloper/blob/stores.hpp"
#include "interloper/error.hpp"

namespace interloper::blob {

namespace {

struct Stored {
  std::string bytes;
  Metadata metadata;
};

std::string tag_of(std::string_view bytes) {
  Fnv1a64 hash;
  hash.add(bytes);
  return hash.tag();
}

class MemoryStore final : public BlobStore {
 public:
  std::string locate(std::string_view name) const override {
    return fmt::format("memory:{}", name);
  }
  std::size_t read_ahead() const override { return 0; }
  bool keeps_metadata() const override { return true; }

  std::optional<std::string> get(std::string_view name) override {
    std::lock_guard lock(mutex_);
    auto it = blobs_.find(name);
    if (it == blobs_.end()) return std::nullopt;
    return it->second.bytes;
  }

  std::optional<BlobHead> head(std::string_view name) override {
    std::lock_guard lock(mutex_);
    auto it = blobs_.find(name);
    if (it == blobs_.end()) return std::nullopt;
    return BlobHead{static_cast<std::int64_t>(it->second.bytes.size()), it->second.metadata};
  }

  std::vector<BlobInfo> list(std::string_view prefix) override {
    std::lock_guard lock(mutex_);
    std::vector<BlobInfo> out;
    for (auto it = blobs_.lower_bound(prefix); it != blobs_.end(); ++it) {
      if (!std::string_view(it->first).starts_with(prefix)) break;
      out.push_back({it->first, static_cast<std::int64_t>(it->second.bytes.size()), {}});
    }
    return out;
  }

  std::unique_ptr<BlobWriter> open_put(std::string_view name) override {
    return std::make_unique<Writer>(*this, std::string(name));
  }

  bool put_if_absent(std::string_view name, std::string_view bytes,
                     const Metadata& metadata) override {
    std::lock_guard lock(mutex_);
    return blobs_.emplace(std::string(name), Stored{std::string(bytes), metadata}).second;
  }

  void remove(const std::vector<std::string>& names) override {
    std::lock_guard lock(mutex_);
    for (const std::string& name : names) blobs_.erase(name);
  }

  std::string tag(std::string_view name) override {
    auto bytes = get(name);
    if (!bytes) throw DestinationError(fmt::format("'{}': no such blob", locate(name)));
    return tag_of(*bytes);
  }

 private:
  class Writer final : public BlobWriter {
   public:
    Writer(MemoryStore& store, std::string name) : store_(store), name_(std::move(name)) {}
    void append(std::string_view bytes) override { bytes_.append(bytes); }
    void append(std::string&& bytes) override {
      if (bytes_.empty()) {
        bytes_ = std::move(bytes);
      } else {
        bytes_.append(bytes);
      }
    }
    std::size_t size() const override { return bytes_.size(); }
    std::string commit(const Metadata& metadata) override {
      std::string tag = tag_of(bytes_);
      std::lock_guard lock(store_.mutex_);
      store_.blobs_[name_] = Stored{std::move(bytes_), metadata};
      return tag;
    }

   private:
    MemoryStore& store_;
    std::string name_;
    std::string bytes_;
  };

  std::mutex mutex_;
  std::map<std::string, Stored, std::less<>> blobs_;
};

}  // namespace

std::unique_ptr<BlobStore> memory_store() { return std::make_unique<MemoryStore>(); }

}  // namespace interloper::blob
