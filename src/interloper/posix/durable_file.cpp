#include "interloper/posix/durable_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

#include "interloper/error.hpp"

namespace interloper::posix {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail_errno(std::string_view what, const fs::path& path) {
  throw DestinationError(fmt::format("{} '{}': {}", what, path.string(), std::strerror(errno)));
}

// Closes `fd` after a failed call, keeping that call's errno for the message.
[[noreturn]] void close_and_fail(int fd, std::string_view what, const fs::path& path) {
  int saved = errno;
  ::close(fd);
  errno = saved;
  fail_errno(what, path);
}

void write_all(int fd, std::string_view bytes, const fs::path& path) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      close_and_fail(fd, "cannot write", path);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::atomic<std::uint64_t> temp_counter{0};

// The writer PID in a temporary file name ".NAME.tmp-PID-N", or 0 when `name` is not one.
pid_t temp_owner(std::string_view name) {
  if (name.empty() || name[0] != '.') return 0;
  auto at = name.rfind(".tmp-");
  if (at == std::string_view::npos || at == 0) return 0;
  std::string_view rest = name.substr(at + 5);
  auto dash = rest.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == rest.size()) return 0;
  std::string_view counter = rest.substr(dash + 1);
  if (counter.find_first_not_of("0123456789") != std::string_view::npos) return 0;
  long pid = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + dash, pid);
  if (ec != std::errc() || end != rest.data() + dash || pid <= 0 || pid > INT_MAX) return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace

void make_dirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw DestinationError(
        fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
  }
}

void write_synced(const fs::path& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot create", path);
  write_all(fd, bytes, path);
  if (::fsync(fd) != 0) close_and_fail(fd, "cannot fsync", path);
  if (::close(fd) != 0) fail_errno("cannot close", path);
}

void append_to(const fs::path& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail_errno("cannot create", path);
  write_all(fd, bytes, path);
  if (::close(fd) != 0) fail_errno("cannot close", path);
}

void fsync_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open", path);
  if (::fsync(fd) != 0) close_and_fail(fd, "cannot fsync", path);
  if (::close(fd) != 0) fail_errno("cannot close", path);
}

void fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail_errno("cannot open directory", dir);
  if (::fsync(fd) != 0) close_and_fail(fd, "cannot fsync directory", dir);
  ::close(fd);
}

void rename_over(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) fail_errno("cannot rename into", to);
}

void remove_quietly(const fs::path& path) noexcept { ::unlink(path.c_str()); }

std::optional<std::string> read_file(const fs::path& path) {
  // Absence is told by open()'s own errno: asking exists() afterwards races with a writer that
  // renames the file into place in between.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail_errno("cannot read", path);
  }
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) close_and_fail(fd, "cannot read", path);
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

fs::path temp_beside(const fs::path& target) {
  return target.parent_path() /
         fmt::format(".{}.tmp-{}-{}", target.filename().string(), ::getpid(), ++temp_counter);
}

void remove_stale_temps(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return;
  const pid_t self = ::getpid();
  for (const auto& entry : it) {
    pid_t pid = temp_owner(entry.path().filename().native());
    if (pid == 0 || pid == self) continue;
    if (::kill(pid, 0) == -1 && errno == ESRCH) ::unlink(entry.path().c_str());
  }
}

void replace_file(const fs::path& target, std::string_view bytes) {
  fs::path temp = temp_beside(target);
  try {
    write_synced(temp, bytes);
    rename_over(temp, target);
  } catch (...) {
    remove_quietly(temp);  // a full disk must not keep the half-written file
    throw;
  }
}

}  // namespace interloper::posix
