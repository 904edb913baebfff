// Runs a program directly (no shell) and collects its output.
//
// The child gets its own process group so that a timeout or an interrupt can kill whatever it
// started too. stdout and stderr are read concurrently with poll(), so a child that fills one
// pipe while we wait on the other never deadlocks.
//
// The child's end is its own exit, not the closing of its pipes: once it has exited, what its
// pipes still hold is read for `linger_seconds`, then anything left in its process group (a
// background process that inherited stdout, say) is killed. A program's processes never
// outlive it.
//
// Interrupts: terminate_processes() and kill_processes() reach every child run_process is
// running, from any thread; the runs they reach report `interrupted`.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace interloper::pipeline {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH unless it contains a '/'
  // Variables set (or replaced) in the inherited environment.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> unset_env;  // variables removed from the inherited environment
  std::string working_directory;       // empty: the current one
  double timeout_seconds = 0;          // <= 0: no limit
  // After the program exits, how long output its leftover processes still write is read.
  double linger_seconds = 1;
  // Called for every complete stderr line (without the newline), on the calling thread.
  std::function<void(std::string_view)> on_stderr_line;
  // Called once the child runs, with its pid (which is also its process group id).
  std::function<void(int pid)> on_started;
  // When set, receives stdout as it arrives, one chunk per read (chunks split lines anywhere),
  // on the calling thread, and ProcessResult::out stays empty: the caller consumes the output
  // in bounded memory. When it throws, the child's process group is killed and reaped and the
  // exception propagates out of run_process.
  std::function<void(std::string_view)> on_stdout;
};

struct ProcessResult {
  std::string out;     // everything written to stdout (empty when on_stdout is set)
  int exit_code = -1;  // valid when signal == 0
  int signal = 0;      // the terminating signal, or 0
  bool timed_out = false;
  bool interrupted = false;  // terminate_processes() or kill_processes() reached it
  // The program exited while processes it started still held its output open; they were
  // killed after ProcessSpec::linger_seconds.
  bool left_processes = false;
  // The program ended but its exit status could not be read: something else reaped it (this
  // process ignores SIGCHLD, so the kernel does). A lost status is never taken for success.
  bool status_lost = false;
  std::vector<std::string> stderr_tail;  // the last few stderr lines, oldest first
  bool ok() const {
    return signal == 0 && exit_code == 0 && !timed_out && !interrupted && !status_lost;
  }
  // "exited with status 3", "killed by signal 9 (Killed)", "timed out after 5s", "interrupted",
  // "ended, but its exit status was lost (...)".
  std::string describe(double timeout_seconds) const;
};

// Runs the program and waits for it. Throws PipelineError when it cannot be started (the
// message names the program and the reason; when the arguments and environment exceed the
// system's limit, their sizes).
ProcessResult run_process(const ProcessSpec& spec, std::size_t tail_lines = 5);

// Starts `argv` (argv[0] looked up in PATH unless it contains a '/') with this process's
// standard streams, environment and process group, and returns its pid without waiting: the
// caller reaps it (waitpid). Like run_process's children, it starts with SIGCHLD, SIGPIPE,
// SIGINT and SIGTERM at their defaults and no signal blocked. Throws PipelineError when it
// cannot be started.
int start_process(const std::vector<std::string>& argv);

// Sends SIGTERM to the process group of every child being run, and marks them interrupted.
// Children started afterwards are sent SIGTERM as soon as they run, until clear_interrupt().
// Thread-safe; not async-signal-safe (call it from a thread that watches for signals).
void terminate_processes();
// The same with SIGKILL: for children that ignored SIGTERM, or a user who insists.
void kill_processes();
// Whether terminate_processes() or kill_processes() was called since the last clear.
bool processes_interrupted();
// Lets children start normally again.
void clear_interrupt();

}  // namespace interloper::pipeline
