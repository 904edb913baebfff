// Spool: memory first, then an unlinked temporary file.
#include "interloper/blob/spool.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "interloper/error.hpp"

namespace interloper::blob {

namespace {

constexpr std::size_t spill_size = std::size_t{4} << 20;

[[noreturn]] void fail_spool(std::string_view what) {
  throw DestinationError(fmt::format("temporary file: {}: {}", what, std::strerror(errno)));
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_spool("cannot write");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

Spool::~Spool() {
  if (fd_ >= 0) ::close(fd_);
}

Spool::Spool(Spool&& other) noexcept
    : memory_(std::move(other.memory_)), fd_(other.fd_), file_size_(other.file_size_) {
  other.fd_ = -1;
  other.file_size_ = 0;
}

void Spool::append(std::string_view bytes) {
  memory_.append(bytes);
  if (memory_.size() >= spill_size) spill();
}

void Spool::append(std::string&& bytes) {
  if (memory_.empty()) {
    memory_ = std::move(bytes);
    if (memory_.size() >= spill_size) spill();
  } else {
    append(std::string_view(bytes));
  }
}

void Spool::spill() {
  if (memory_.empty()) return;
  if (fd_ < 0) {
    std::string path = (std::filesystem::temp_directory_path() / "il-s3-XXXXXX").string();
    fd_ = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd_ < 0) fail_spool("cannot create");
    ::unlink(path.c_str());  // nothing to clean up, whatever happens to this process
  }
  write_all(fd_, memory_);
  file_size_ += memory_.size();
  memory_.clear();
}

std::string Spool::read_at(std::size_t offset, std::size_t size) const {
  std::string out(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd_, out.data() + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_spool("cannot read");
    done += static_cast<std::size_t>(n);
  }
  return out;
}

std::string Spool::read_all() {
  if (fd_ < 0) return std::move(memory_);
  return read_at(0, file_size_) + memory_;
}

}  // namespace interloper::blob
