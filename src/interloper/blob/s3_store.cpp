// The S3 BlobStore: one PUT per blob, or one multipart upload above the part size.
#include <fmt/format.h>

#include "interloper/blob/spool.hpp"
#include "interloper/blob/stores.hpp"
#include "interloper/error.hpp"

namespace interloper::blob {

namespace {

std::string etag_tag(const std::string& etag) { return "etag:" + etag; }

class S3Store final : public BlobStore {
 public:
  S3Store(std::shared_ptr<detail::S3Client> client, std::string prefix, std::size_t part_size)
      : owner_(std::move(client)),
        client_(*owner_),
        prefix_(std::move(prefix)),
        part_size_(part_size) {}

  std::string locate(std::string_view name) const override {
    return fmt::format("s3://{}/{}", client_.location().bucket, key(name));
  }
  bool keeps_metadata() const override { return true; }

  std::optional<std::string> get(std::string_view name) override { return client_.get(key(name)); }

  std::optional<BlobHead> head(std::string_view name) override {
    auto head = client_.head(key(name));
    if (!head) return std::nullopt;
    return BlobHead{head->size, std::move(head->metadata)};
  }

  std::vector<BlobInfo> list(std::string_view prefix) override {
    std::vector<BlobInfo> out;
    for (detail::S3ObjectInfo& info : client_.list(key(prefix))) {
      out.push_back({info.key.substr(prefix_.size()), info.size, etag_tag(info.etag)});
    }
    return out;
  }

  std::string put(std::string_view name, std::string_view bytes,
                  const Metadata& metadata) override {
    if (bytes.size() <= part_size_) return etag_tag(client_.put(key(name), bytes, metadata));
    return upload_parts(name, metadata, [&](const std::function<void(std::string_view)>& part) {
      for (std::size_t at = 0; at < bytes.size(); at += part_size_) {
        part(bytes.substr(at, part_size_));
      }
    });
  }

  std::unique_ptr<BlobWriter> open_put(std::string_view name) override {
    return std::make_unique<Writer>(*this, std::string(name));
  }

  // S3 answers a conditional PUT (If-None-Match) only on some servers: a HEAD first.
  bool put_if_absent(std::string_view name, std::string_view bytes,
                     const Metadata& metadata) override {
    if (client_.head(key(name))) return false;
    put(name, bytes, metadata);
    return true;
  }

  void remove(const std::vector<std::string>& names) override {
    std::vector<std::string> keys;
    keys.reserve(names.size());
    for (const std::string& name : names) keys.push_back(key(name));
    client_.remove(keys);
  }

  std::string tag(std::string_view name) override {
    for (const BlobInfo& info : list(name)) {
      if (info.name == name) return info.tag;
    }
    throw DestinationError(fmt::format("'{}': no such object", locate(name)));
  }

 private:
  // The bytes of a put, in a spool until commit.
  class Writer final : public BlobWriter {
   public:
    Writer(S3Store& store, std::string name) : store_(store), name_(std::move(name)) {}
    void append(std::string_view bytes) override { bytes_.append(bytes); }
    void append(std::string&& bytes) override { bytes_.append(std::move(bytes)); }
    std::size_t size() const override { return bytes_.size(); }
    std::string commit(const Metadata& metadata) override {
      if (bytes_.size() <= store_.part_size_) {
        return store_.put(name_, bytes_.read_all(), metadata);
      }
      return store_.upload_parts(name_, metadata,
                                 [&](const std::function<void(std::string_view)>& part) {
                                   bytes_.for_each_chunk(store_.part_size_, part);
                                 });
    }

   private:
    S3Store& store_;
    std::string name_;
    Spool bytes_;
  };

  std::string key(std::string_view name) const { return prefix_ + std::string(name); }

  // A multipart upload of the parts `parts` hands to its argument, in order; aborted when
  // anything fails, so that nothing appears.
  std::string upload_parts(
      std::string_view name, const Metadata& metadata,
      const std::function<void(const std::function<void(std::string_view)>&)>& parts) {
    const std::string object = key(name);
    const std::string id = client_.start_multipart(object, metadata);
    try {
      std::vector<std::string> etags;
      parts([&](std::string_view part) {
        etags.push_back(client_.upload_part(object, id, static_cast<int>(etags.size()) + 1, part));
      });
      return etag_tag(client_.complete_multipart(object, id, etags));
    } catch (...) {
      client_.abort_multipart(object, id);
      throw;
    }
  }

  std::shared_ptr<detail::S3Client> owner_;
  detail::S3Client& client_;
  std::string prefix_;
  std::size_t part_size_;
};

}  // namespace

std::unique_ptr<BlobStore> s3_store(std::shared_ptr<detail::S3Client> client, std::string prefix,
                                    std::size_t part_size) {
  return std::make_unique<S3Store>(std::move(client), std::move(prefix), part_size);
}

}  // namespace interloper::blob
