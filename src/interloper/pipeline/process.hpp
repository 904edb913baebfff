// Runs a program directly (no shell) and collects its output.
//
// The child gets its own process group so that a timeout can kill whatever it started too.
// stdout and stderr are read concurrently with poll(), so a child that fills one pipe while
// we wait on the other never deadlocks.
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
  // Called for every complete stderr line (without the newline), on the calling thread.
  std::function<void(std::string_view)> on_stderr_line;
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
  std::vector<std::string> stderr_tail;  // the last few stderr lines, oldest first
  bool ok() const { return signal == 0 && exit_code == 0 && !timed_out; }
  // "exited with status 3", "killed by signal 9 (Killed)", "timed out after 5s".
  std::string describe(double timeout_seconds) const;
};

// Runs the program and waits for it. Throws PipelineError when it cannot be started (the
// message names the program and the reason).
ProcessResult run_process(const ProcessSpec& spec, std::size_t tail_lines = 5);

}  // namespace interloper::pipeline
