// A child process of run_process: its file descriptors, its registration for interrupts
// (terminate_processes() and kill_processes() reach every registered child), and its reaping.
// Private to the pipeline layer.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <list>

#include "interloper/pipeline/process.hpp"

namespace interloper::pipeline::detail {

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

// A child being run, as the interrupt registry knows it.
struct Running {
  pid_t group;  // its pid, which is its group's id
  bool interrupted;
};

// A spawned child: registered for interrupts, its exit observed without reaping it, and on
// finish() its group killed, its entry removed and the child reaped.
class Child {
 public:
  explicit Child(pid_t pid);
  ~Child() { finish(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // A descriptor that polls readable once the child exits; -1 on kernels without pidfds.
  int pidfd() const { return pidfd_.get(); }
  // Whether the child has exited. WNOWAIT leaves it a zombie, so its pid stays reserved; a
  // child reaped by the system (SIGCHLD ignored) has exited with its status lost.
  bool exited();
  // Kills what is left of the group, unregisters and reaps the child. Idempotent.
  void finish();
  void report(ProcessResult& result) const;

 private:
  pid_t pid_;
  Fd pidfd_;
  std::list<Running>::iterator entry_;
  bool exited_ = false, finished_ = false, interrupted_ = false, status_lost_ = false;
  int exit_code_ = -1, signal_ = 0;
};

}  // namespace interloper::pipeline::detail
