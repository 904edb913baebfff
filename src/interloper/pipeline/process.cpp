#include "interloper/pipeline/process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <list>
#include <map>
#include <mutex>
#include <optional>

#include "interloper/error.hpp"
#include "interloper/pipeline/child.hpp"

extern char** environ;

namespace interloper::pipeline {
namespace {

using detail::Child;
using detail::Fd;

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

// Why execve refused: the arguments and environment exceed ARG_MAX in all, or one string
// exceeds the kernel's per-string limit (32 pages).
std::string too_large(const ProcessSpec& spec, const std::vector<std::string>& env) {
  std::size_t args = 0, vars = 0, largest = 0;
  std::string largest_name;
  auto weigh = [&](const std::string& s, std::size_t& total, std::string_view name) {
    total += s.size() + 1 + sizeof(char*);
    if (s.size() + 1 > largest) {
      largest = s.size() + 1;
      largest_name = std::string(name);
    }
  };
  for (std::size_t i = 0; i < spec.argv.size(); ++i) {
    weigh(spec.argv[i], args, fmt::format("argument {}", i));
  }
  for (const std::string& e : env) {
    weigh(e, vars, "variable " + e.substr(0, e.find('=')));
  }
  const long arg_max = ::sysconf(_SC_ARG_MAX);
  const long page = ::sysconf(_SC_PAGESIZE);
  return fmt::format(
      "cannot run '{}': its arguments and environment are too large for the system "
      "({} bytes of arguments, {} bytes of environment; the largest is {} with {} bytes; the "
      "limit is {} bytes in all and {} bytes for one argument or variable)",
      spec.argv.front(), args, vars, largest_name, largest, arg_max, 32 * page);
}

int milliseconds_until(std::chrono::steady_clock::time_point t) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(t - std::chrono::steady_clock::now());
  // Round up, so that a wake-up never comes before the deadline it waits for.
  return static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 1 << 30));
}

// The signal state every child starts with, whatever the caller's: SIGCHLD, SIGPIPE, SIGINT
// and SIGTERM at their defaults (a child that inherited an ignored SIGCHLD would lose its own
// children's exit statuses) and no signal blocked (the caller may block some for a thread that
// watches for them). `flags` are further POSIX_SPAWN_* flags.
void reset_signals(SpawnAttributes& attributes, short flags) {
  sigset_t defaults;
  sigemptyset(&defaults);
  for (const int sig : {SIGCHLD, SIGPIPE, SIGINT, SIGTERM}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(attributes.get(), &defaults);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(attributes.get(), &none);
  posix_spawnattr_setflags(
      attributes.get(), static_cast<short>(flags | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK));
}

// Starts `spec`'s program with its environment and returns the pid; throws PipelineError naming
// the program and why it cannot start.
pid_t spawn_with(const ProcessSpec& spec, const posix_spawn_file_actions_t* actions,
                 const posix_spawnattr_t* attributes) {
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = child_environment(spec.env, spec.unset_env);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, argv[0], actions, attributes, argv.data(), envp.data());
  if (rc == E2BIG) throw PipelineError(too_large(spec, env_strings));
  if (rc != 0) {
    throw PipelineError(fmt::format("cannot run '{}': {}", spec.argv.front(), std::strerror(rc)));
  }
  return pid;
}

// Starts `spec` with stdin from /dev/null and stdout and stderr into the pipes' write ends, in a
// process group of its own (so that a timeout or an interrupt reaches everything it starts), with
// the signal state of reset_signals.
pid_t spawn(const ProcessSpec& spec, const Pipe& out, const Pipe& err) {
  SpawnActions actions;
  posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(actions.get(), out.write.get(), 1);
  posix_spawn_file_actions_adddup2(actions.get(), err.write.get(), 2);
  if (!spec.working_directory.empty()) {
    posix_spawn_file_actions_addchdir_np(actions.get(), spec.working_directory.c_str());
  }
  SpawnAttributes attributes;
  posix_spawnattr_setpgroup(attributes.get(), 0);
  reset_signals(attributes, POSIX_SPAWN_SETPGROUP);
  return spawn_with(spec, actions.get(), attributes.get());
}

// Drains a child's stdout and stderr as they fill, without blocking: stdout goes to the spec's
// consumer (or into the result), stderr line by line to the spec's consumer and a bounded tail.
class OutputReader {
 public:
  OutputReader(const ProcessSpec& spec, std::size_t tail_lines, int out, int err,
               ProcessResult& result)
      : spec_(spec), tail_lines_(tail_lines), out_(out), err_(err), result_(result) {
    ::fcntl(out_, F_SETFL, O_NONBLOCK);
    ::fcntl(err_, F_SETFL, O_NONBLOCK);
  }

  bool open() const { return out_open_ || err_open_; }

  // Adds the pipes still open to a poll set.
  void watch(pollfd* fds, nfds_t& n) const {
    if (out_open_) fds[n++] = {out_, POLLIN, 0};
    if (err_open_) fds[n++] = {err_, POLLIN, 0};
  }

  // Reads what the pipes hold now.
  void read_ready() {
    if (out_open_) out_open_ = read_from(out_, true);
    if (err_open_) err_open_ = read_from(err_, false);
  }

  // Passes on a last stderr line without its newline and keeps the tail in the result.
  void finish() {
    if (!err_pending_.empty()) stderr_line(std::move(err_pending_));
    result_.stderr_tail.assign(tail_.begin(), tail_.end());
  }

 private:
  // Reads what `fd` holds now; false once it is closed.
  bool read_from(int fd, bool is_out) {
    while (true) {
      const ssize_t got = ::read(fd, buffer_, sizeof buffer_);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && errno == EAGAIN) return true;
      if (got <= 0) return false;
      const std::string_view chunk(buffer_, static_cast<std::size_t>(got));
      if (!is_out) {
        stderr_chunk(chunk);
      } else if (!spec_.on_stdout) {
        result_.out.append(chunk);
      } else {
        // When the consumer gives up (bad output, too much output), nothing more is wanted
        // from the child: its Child kills the group and reaps it as the exception leaves.
        spec_.on_stdout(chunk);
      }
      if (static_cast<std::size_t>(got) < sizeof buffer_) return true;
    }
  }

  void stderr_chunk(std::string_view chunk) {
    err_pending_.append(chunk);
    std::size_t start = 0, nl;
    while ((nl = err_pending_.find('\n', start)) != std::string::npos) {
      stderr_line(err_pending_.substr(start, nl - start));
      start = nl + 1;
    }
    err_pending_.erase(0, start);
  }

  void stderr_line(std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (spec_.on_stderr_line) spec_.on_stderr_line(line);
    tail_.push_back(std::move(line));
    while (tail_.size() > tail_lines_) tail_.pop_front();
  }

  const ProcessSpec& spec_;
  std::size_t tail_lines_;
  int out_, err_;
  ProcessResult& result_;
  bool out_open_ = true, err_open_ = true;
  std::deque<std::string> tail_;
  std::string err_pending_;
  char buffer_[65536];
};

using Clock = std::chrono::steady_clock;

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Reads the child's output until both pipes close after it exited, its timeout passes (the group
// is killed), or it exited and what it started still holds a pipe after the linger period (the
// group is killed, what the pipes hold is kept).
void follow(Child& child, pid_t group, const ProcessSpec& spec, OutputReader& output,
            ProcessResult& result) {
  const bool limited = spec.timeout_seconds > 0;
  const auto deadline = after(limited ? spec.timeout_seconds : 0);
  std::optional<Clock::time_point> linger_until;  // set once the program has exited
  while (true) {
    if (!linger_until && child.exited()) linger_until = after(spec.linger_seconds);
    if (linger_until && !output.open()) return;
    if (linger_until && Clock::now() >= *linger_until) {
      result.left_processes = true;
      ::kill(-group, SIGKILL);
      output.read_ready();
      return;
    }
    if (!linger_until && limited && Clock::now() >= deadline) {
      result.timed_out = true;
      ::kill(-group, SIGKILL);
      return;
    }
    pollfd fds[3];
    nfds_t n = 0;
    output.watch(fds, n);
    int wait_ms = -1;
    if (linger_until) {
      wait_ms = milliseconds_until(*linger_until);
    } else {
      if (child.pidfd() >= 0) fds[n++] = {child.pidfd(), POLLIN, 0};
      if (limited) wait_ms = milliseconds_until(deadline);
      if (child.pidfd() < 0) wait_ms = wait_ms < 0 ? 50 : std::min(wait_ms, 50);
    }
    if (::poll(fds, n, wait_ms) < 0 && errno != EINTR) {
      ::kill(-group, SIGKILL);
      return;
    }
    output.read_ready();
  }
}

}  // namespace

std::string ProcessResult::describe(double timeout_seconds) const {
  if (interrupted) return "interrupted";
  if (timed_out) return fmt::format("timed out after {}s", timeout_seconds);
  if (status_lost) {
    return "ended, but its exit status was lost (this process ignores SIGCHLD, so the system "
           "reaped it)";
  }
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exited with status {}", exit_code);
}

int start_process(const std::vector<std::string>& argv) {
  if (argv.empty()) throw PipelineError("cannot run an empty command");
  ProcessSpec spec;
  spec.argv = argv;
  SpawnAttributes attributes;
  reset_signals(attributes, 0);
  return static_cast<int>(spawn_with(spec, nullptr, attributes.get()));
}

ProcessResult run_process(const ProcessSpec& spec, std::size_t tail_lines) {
  if (spec.argv.empty()) throw PipelineError("cannot run an empty command");
  Pipe out, err;
  open_pipe(out);
  open_pipe(err);
  const pid_t pid = spawn(spec, out, err);
  Child child(pid);
  out.write.reset();
  err.write.reset();
  ProcessResult result;
  OutputReader output(spec, tail_lines, out.read.get(), err.read.get(), result);
  if (spec.on_started) spec.on_started(static_cast<int>(pid));
  follow(child, pid, spec, output, result);
  output.finish();
  child.finish();
  child.report(result);
  return result;
}

}  // namespace interloper::pipeline
