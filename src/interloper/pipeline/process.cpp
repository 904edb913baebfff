#include "interloper/pipeline/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>

#include "interloper/error.hpp"

extern char** environ;

namespace interloper::pipeline {
namespace {

// Closes a file descriptor when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

void open_pipe(Pipe& pipe) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw PipelineError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  pipe.read.reset(fds[0]);
  pipe.write.reset(fds[1]);
}

class SpawnActions {
 public:
  SpawnActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

class SpawnAttributes {
 public:
  SpawnAttributes() { posix_spawnattr_init(&attributes_); }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawnattr_t* get() { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

// The parent's environment with `overrides` applied, as "NAME=value" strings.
std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& overrides,
    const std::vector<std::string>& removed) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    vars[std::string(entry.substr(0, eq))] = std::string(entry.substr(eq + 1));
  }
  for (const auto& name : removed) vars.erase(name);
  for (const auto& [name, value] : overrides) vars[name] = value;
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

}  // namespace

std::string ProcessResult::describe(double timeout_seconds) const {
  if (timed_out) return fmt::format("timed out after {}s", timeout_seconds);
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exited with status {}", exit_code);
}

ProcessResult run_process(const ProcessSpec& spec, std::size_t tail_lines) {
  if (spec.argv.empty()) throw PipelineError("cannot run an empty command");
  Pipe out, err;
  open_pipe(out);
  open_pipe(err);

  SpawnActions actions;
  posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(actions.get(), out.write.get(), 1);
  posix_spawn_file_actions_adddup2(actions.get(), err.write.get(), 2);
  if (!spec.working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(actions.get(), spec.working_directory.c_str());
  }
  SpawnAttributes attributes;
  // A process group of its own: a timeout kills the child and everything it started.
  posix_spawnattr_setpgroup(attributes.get(), 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(attributes.get(), &defaults);
  posix_spawnattr_setflags(attributes.get(), POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = child_environment(spec.env, spec.unset_env);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0], actions.get(), attributes.get(), argv.data(), envp.data());
  if (rc != 0) {
    throw PipelineError(fmt::format("cannot run '{}': {}", spec.argv.front(), std::strerror(rc)));
  }
  out.write.reset();
  err.write.reset();

  using Clock = std::chrono::steady_clock;
  const bool limited = spec.timeout_seconds > 0;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(limited ? spec.timeout_seconds : 0));

  ProcessResult result;
  std::deque<std::string> tail;
  std::string err_pending;
  auto stderr_line = [&](std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (spec.on_stderr_line) spec.on_stderr_line(line);
    tail.push_back(std::move(line));
    while (tail.size() > tail_lines) tail.pop_front();
  };

  bool out_open = true, err_open = true;
  char buffer[65536];
  while (out_open || err_open) {
    pollfd fds[2];
    nfds_t n = 0;
    if (out_open) fds[n++] = {out.read.get(), POLLIN, 0};
    if (err_open) fds[n++] = {err.read.get(), POLLIN, 0};
    int wait_ms = -1;
    if (limited) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    int ready = ::poll(fds, n, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      ::kill(-pid, SIGKILL);
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      bool is_out = fds[i].fd == out.read.get();
      ssize_t got = ::read(fds[i].fd, buffer, sizeof buffer);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        (is_out ? out_open : err_open) = false;
        continue;
      }
      if (is_out) {
        std::string_view chunk(buffer, static_cast<std::size_t>(got));
        if (!spec.on_stdout) {
          result.out.append(chunk);
          continue;
        }
        try {
          spec.on_stdout(chunk);
        } catch (...) {
          // The consumer gave up (bad output, too much output): nothing more is wanted from
          // the child, so stop it and everything it started before reporting.
          ::kill(-pid, SIGKILL);
          int ignored = 0;
          while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
          }
          throw;
        }
      } else {
        err_pending.append(buffer, static_cast<std::size_t>(got));
        std::size_t start = 0, nl;
        while ((nl = err_pending.find('\n', start)) != std::string::npos) {
          stderr_line(err_pending.substr(start, nl - start));
          start = nl + 1;
        }
        err_pending.erase(0, start);
      }
    }
  }
  if (!err_pending.empty()) stderr_line(std::move(err_pending));

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  result.stderr_tail.assign(tail.begin(), tail.end());
  return result;
}

}  // namespace interloper::pipeline
