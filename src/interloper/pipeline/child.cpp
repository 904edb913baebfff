#include "interloper/pipeline/child.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cerrno>
#include <mutex>

namespace interloper::pipeline {
namespace detail {
namespace {

// The children being run, so that an interrupt reaches them. An entry lives from the spawn until
// just before the child is reaped: until then its pid, which is its group's id, cannot be reused.
struct Registry {
  std::mutex mutex;
  std::list<Running> running;
  int signal = 0;  // the interrupt sent, for children that start later: 0, SIGTERM or SIGKILL
};

Registry& registry() {
  static Registry instance;
  return instance;
}

void signal_all(int sig) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.signal != SIGKILL) r.signal = sig;
  for (Running& child : r.running) {
    child.interrupted = true;
    ::kill(-child.group, sig);
  }
}

}  // namespace

Child::Child(pid_t pid) : pid_(pid) {
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    entry_ = r.running.insert(r.running.end(), Running{pid, false});
    if (r.signal != 0) {
      entry_->interrupted = true;
      ::kill(-pid, r.signal);
    }
  }
  // A pidfd makes the exit pollable; without one (old kernels) exits are checked on a tick.
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  pidfd_.reset(fd >= 0 ? static_cast<int>(fd) : -1);
}

bool Child::exited() {
  if (exited_) return true;
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    // No such child any more: it ended and was reaped without us (this process ignores
    // SIGCHLD), so its exit status is gone. Said so, rather than waited for forever.
    if (errno != ECHILD) return false;
    exited_ = status_lost_ = true;
    return true;
  }
  if (info.si_pid == 0) return false;
  exited_ = true;
  if (info.si_code == CLD_EXITED) {
    exit_code_ = info.si_status;
  } else {
    signal_ = info.si_status;
  }
  return true;
}

void Child::finish() {
  if (finished_) return;
  finished_ = true;
  ::kill(-pid_, SIGKILL);
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    interrupted_ = entry_->interrupted;
    r.running.erase(entry_);
  }
  int status = 0;
  int reaped = -1;
  while ((reaped = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  if (reaped < 0 && !exited_) exited_ = status_lost_ = true;  // ECHILD: reaped without us
  if (!exited_) {
    exited_ = true;
    if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
  }
}

void Child::report(ProcessResult& result) const {
  result.exit_code = exit_code_;
  result.signal = signal_;
  result.interrupted = interrupted_;
  result.status_lost = status_lost_;
}

}  // namespace detail

void terminate_processes() { detail::signal_all(SIGTERM); }

void kill_processes() { detail::signal_all(SIGKILL); }

bool processes_interrupted() {
  detail::Registry& r = detail::registry();
  std::lock_guard lock(r.mutex);
  return r.signal != 0;
}

void clear_interrupt() {
  detail::Registry& r = detail::registry();
  std::lock_guard lock(r.mutex);
  r.signal = 0;
}

}  // namespace interloper::pipeline
