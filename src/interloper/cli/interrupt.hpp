// Turns SIGINT and SIGTERM during a run into an orderly stop.
//
// While an Interrupts object lives, the first SIGINT or SIGTERM sets stop() (the runner starts
// nothing new), sends SIGTERM to every running command's process group and, `grace` later,
// SIGKILL to those still running. A second signal sends SIGKILL at once. The run then ends on
// its own: its interrupted tasks fail with "interrupted" and the caller reports and exits with
// exit_code(). C++ assets cannot be stopped from outside: when the run has not ended `linger`
// after the SIGKILL (a C++ asset still computing), `give_up` is called and the process exits
// with exit_code() at once.
//
// A worker drains instead (FirstSignal::finish): the first signal only sets stop(), letting the
// running commands finish; the second kills them as above.
//
// The signal handler only writes the signal's number into a pipe (async-signal-safe); a watcher
// thread does the rest.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

namespace interloper::cli {

// How long commands get between SIGTERM and SIGKILL, and how long a run may go on after the
// SIGKILL before the process gives up on it.
inline constexpr std::chrono::milliseconds kInterruptGrace{3000};
inline constexpr std::chrono::milliseconds kInterruptLinger{2000};

class Interrupts {
 public:
  enum class FirstSignal : std::uint8_t { terminate, finish };

  Interrupts(std::chrono::milliseconds grace, std::chrono::milliseconds linger,
             std::function<void(int signal)> give_up,
             FirstSignal first = FirstSignal::terminate);
  ~Interrupts();  // restores the previous handlers and lets commands start again
  Interrupts(const Interrupts&) = delete;
  Interrupts& operator=(const Interrupts&) = delete;

  const std::atomic<bool>& stop() const { return stop_; }
  int signal() const { return signal_.load(); }  // the first signal received, or 0
  int signals() const { return signals_.load(); }  // how many were received
  int exit_code() const { return 128 + signal(); }

 private:
  void watch();

  std::chrono::milliseconds grace_, linger_;
  std::function<void(int)> give_up_;
  FirstSignal first_;
  std::atomic<bool> stop_{false};
  std::atomic<int> signal_{0};
  std::atomic<int> signals_{0};
  int pipe_[2] = {-1, -1};
  std::thread watcher_;
};

}  // namespace interloper::cli
