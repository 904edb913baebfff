// FaultyBlobStore: a BlobStore over another that fails one chosen call, the way SQLite's
// test_vfs fails one file operation, for fault sweeps.
//
// Every call to the store counts (get, get_chunks, head, list, put, put_if_absent, remove, tag,
// tidy, and a streamed put's commit); appends to a streamed put do not. Call number `fail_at`
// (1-based; 0 never) throws DestinationError instead of reaching the inner store. When it is a
// put and `tear_after` is set, the inner store first receives a streamed put of that many of
// its bytes, abandoned as a crash would abandon it: an atomic store shows nothing of it.
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>

#include "interloper/blob/blob_store.hpp"

namespace interloper::blob {

class FaultyBlobStore final : public BlobStore {
 public:
  explicit FaultyBlobStore(BlobStore& inner, std::size_t fail_at = 0,
                           std::optional<std::size_t> tear_after = std::nullopt)
      : inner_(inner), fail_at_(fail_at), tear_after_(tear_after) {}

  // The calls made so far.
  std::size_t calls() const { return calls_; }

  std::string locate(std::string_view name) const override { return inner_.locate(name); }
  bool keeps_metadata() const override { return inner_.keeps_metadata(); }
  std::size_t read_ahead() const override { return inner_.read_ahead(); }
  std::optional<std::string> get(std::string_view name) override;
  bool get_chunks(std::string_view name,
                  const std::function<void(std::string_view)>& consume) override;
  std::optional<BlobHead> head(std::string_view name) override;
  std::vector<BlobInfo> list(std::string_view prefix) override;
  std::vector<BlobInfo> list_leaves(std::string_view prefix, std::string_view leaf) override;
  std::string put(std::string_view name, std::string_view bytes,
                  const Metadata& metadata = {}) override;
  std::unique_ptr<BlobWriter> open_put(std::string_view name) override;
  bool put_if_absent(std::string_view name, std::string_view bytes,
                     const Metadata& metadata = {}) override;
  void remove(const std::vector<std::string>& names) override;
  void tidy(std::string_view folder) override;
  std::string tag(std::string_view name) override;

 private:
  // Counts a call; throws when it is the one to fail (after tearing `bytes` into `name` when
  // the call is a put).
  void step(std::string_view what, std::string_view name,
            std::optional<std::string_view> bytes = std::nullopt);

  BlobStore& inner_;
  const std::size_t fail_at_;
  const std::optional<std::size_t> tear_after_;
  std::atomic<std::size_t> calls_{0};
};

}  // namespace interloper::blob
