// Spool: the bytes of one blob being gathered, in memory at first and in an unlinked temporary
// file once they pass a few MiB, so a writer's memory stays bounded whatever the blob's size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace interloper::blob {

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
  // Every byte, in memory (the spool is left empty). Throws DestinationError when the
  // temporary file cannot be read.
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

}  // namespace interloper::blob
