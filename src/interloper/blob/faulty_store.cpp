// FaultyBlobStore: counts calls, fails the chosen one.
#include "interloper/blob/faulty_store.hpp"

#include <fmt/format.h>

#include "interloper/error.hpp"

namespace interloper::blob {

namespace {

// A streamed put gathered whole, handed to the faulty store's put() at commit.
class GatheringWriter final : public BlobWriter {
 public:
  GatheringWriter(FaultyBlobStore& store, std::string name)
      : store_(store), name_(std::move(name)) {}
  void append(std::string_view bytes) override { bytes_.append(bytes); }
  std::size_t size() const override { return bytes_.size(); }
  std::string commit(const Metadata& metadata) override {
    return store_.put(name_, bytes_, metadata);
  }

 private:
  FaultyBlobStore& store_;
  std::string name_;
  std::string bytes_;
};

}  // namespace

void FaultyBlobStore::step(std::string_view what, std::string_view name,
                           std::optional<std::string_view> bytes) {
  const std::size_t call = ++calls_;
  if (call != fail_at_) return;
  if (bytes && tear_after_) {
    auto torn = inner_.open_put(name);
    torn->append(bytes->substr(0, std::min(*tear_after_, bytes->size())));
    // Dropped uncommitted, as a crash would drop it.
  }
  throw DestinationError(
      fmt::format("'{}': injected failure of call {} ({})", inner_.locate(name), call, what));
}

std::optional<std::string> FaultyBlobStore::get(std::string_view name) {
  step("get", name);
  return inner_.get(name);
}

bool FaultyBlobStore::get_chunks(std::string_view name,
                                 const std::function<void(std::string_view)>& consume) {
  step("get", name);
  return inner_.get_chunks(name, consume);
}

std::optional<BlobHead> FaultyBlobStore::head(std::string_view name) {
  step("head", name);
  return inner_.head(name);
}

std::vector<BlobInfo> FaultyBlobStore::list(std::string_view prefix) {
  step("list", prefix);
  return inner_.list(prefix);
}

std::vector<BlobInfo> FaultyBlobStore::list_leaves(std::string_view prefix, std::string_view leaf) {
  step("list", prefix);
  return inner_.list_leaves(prefix, leaf);
}

std::string FaultyBlobStore::put(std::string_view name, std::string_view bytes,
                                 const Metadata& metadata) {
  step("put", name, bytes);
  return inner_.put(name, bytes, metadata);
}

std::unique_ptr<BlobWriter> FaultyBlobStore::open_put(std::string_view name) {
  return std::make_unique<GatheringWriter>(*this, std::string(name));
}

bool FaultyBlobStore::put_if_absent(std::string_view name, std::string_view bytes,
                                    const Metadata& metadata) {
  step("put", name, bytes);
  return inner_.put_if_absent(name, bytes, metadata);
}

void FaultyBlobStore::remove(const std::vector<std::string>& names) {
  step("remove", names.empty() ? std::string_view() : std::string_view(names.front()));
  inner_.remove(names);
}

void FaultyBlobStore::tidy(std::string_view folder) {
  step("tidy", folder);
  inner_.tidy(folder);
}

std::string FaultyBlobStore::tag(std::string_view name) {
  step("tag", name);
  return inner_.tag(name);
}

}  // namespace interloper::blob
