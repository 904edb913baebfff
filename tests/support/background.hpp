// The `interloper` binary running on a thread of its own while a test acts on it (sends it a
// signal, kills it, starts a second one), and a wait for a number a child writes to a file.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "interloper/pipeline/process.hpp"
#include "support/cli_process.hpp"

namespace interloper::testing {

// Runs the built binary with `args` in `dir`, with `env` ("NAME=VALUE" each) added to its
// environment, bounded to 120 s. The child leads a process group of its own (as a terminal's
// foreground job does), so that a signal can be sent to that group. join() waits for it.
class BackgroundCli {
 public:
  BackgroundCli(std::vector<std::string> args, const std::filesystem::path& dir,
                std::vector<std::string> env = {}) {
    thread_ = std::thread([this, args = std::move(args), dir, env = std::move(env)] {
      pipeline::ProcessSpec spec;
      spec.argv = {"/usr/bin/env"};
      spec.argv.insert(spec.argv.end(), env.begin(), env.end());
      spec.argv.push_back(interloper_binary());
      spec.argv.insert(spec.argv.end(), args.begin(), args.end());
      spec.working_directory = dir.string();
      spec.timeout_seconds = 120;  // a bound, should the test's signal not work
      spec.on_started = [this](int pid) { pid_ = pid; };
      spec.on_stderr_line = [this](std::string_view line) {
        outcome_.err += line;
        outcome_.err += '\n';
      };
      auto result = pipeline::run_process(spec);
      outcome_.code = result.timed_out     ? -1
                      : result.signal != 0 ? 128 + result.signal
                                           : result.exit_code;
      outcome_.out = result.out;
    });
  }
  ~BackgroundCli() {
    if (thread_.joinable()) thread_.join();
  }
  BackgroundCli(const BackgroundCli&) = delete;
  BackgroundCli& operator=(const BackgroundCli&) = delete;

  // The child's pid, once it has started.
  int pid() const {
    while (pid_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return pid_;
  }
  Outcome join() {
    thread_.join();
    return outcome_;
  }

 private:
  std::atomic<int> pid_{0};
  Outcome outcome_;
  std::thread thread_;
};

// Waits (at most 60 s) for `file` to hold a positive number, and returns it (0 and a test
// failure when none appears).
inline int number_in(const std::filesystem::path& file) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(file);
    int value = 0;
    if (in >> value && value > 0) return value;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "no number appeared in " << file;
  return 0;
}

}  // namespace interloper::testing
