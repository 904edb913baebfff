#include "interloper/cli/interrupt.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <optional>

#include "interloper/pipeline/process.hpp"

namespace interloper::cli {
namespace {

// The write end of the live Interrupts' pipe; one at a time.
std::atomic<int> g_pipe{-1};
struct sigaction g_old_int, g_old_term;

extern "C" void on_signal(int sig) {
  const int saved = errno;
  const int fd = g_pipe.load();
  const unsigned char byte = static_cast<unsigned char>(sig);
  if (fd >= 0) {
    [[maybe_unused]] ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved;
}

constexpr unsigned char kQuit = 0;  // written by the destructor to end the watcher

}  // namespace

Interrupts::Interrupts(std::chrono::milliseconds grace, std::chrono::milliseconds linger,
                       std::function<void(int)> give_up, FirstSignal first)
    : grace_(grace), linger_(linger), give_up_(std::move(give_up)), first_(first) {
  if (::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) return;  // without it, signals act as before
  g_pipe.store(pipe_[1]);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_old_int);
  sigaction(SIGTERM, &action, &g_old_term);
  watcher_ = std::thread([this] { watch(); });
}

Interrupts::~Interrupts() {
  if (pipe_[1] < 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  g_pipe.store(-1);
  const unsigned char quit = kQuit;
  while (::write(pipe_[1], &quit, 1) < 0 && errno == EINTR) {
  }
  watcher_.join();
  ::close(pipe_[0]);
  ::close(pipe_[1]);
  pipeline::clear_interrupt();
}

void Interrupts::watch() {
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> kill_at, give_up_at;
  auto kill_now = [&] {
    pipeline::kill_processes();
    kill_at.reset();
    const auto limit = Clock::now() + linger_;
    if (!give_up_at || *give_up_at > limit) give_up_at = limit;
  };
  while (true) {
    int wait_ms = -1;
    const auto next = kill_at ? kill_at : give_up_at;
    if (next) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now());
      wait_ms = static_cast<int>(std::max<long long>(left.count() + 1, 0));
    }
    pollfd fd{pipe_[0], POLLIN, 0};
    const int ready = ::poll(&fd, 1, wait_ms);
    if (ready < 0 && errno != EINTR) return;
    unsigned char byte = 0;
    while (ready > 0 && ::read(pipe_[0], &byte, 1) == 1) {
      if (byte == kQuit) return;
      signals_.fetch_add(1);
      if (signal_.load() == 0) {
        signal_.store(byte);
        stop_.store(true);
        if (first_ == FirstSignal::terminate) {
          pipeline::terminate_processes();
          kill_at = Clock::now() + grace_;
        }
      } else {
        kill_now();  // a second signal: no more patience
      }
    }
    if (kill_at && Clock::now() >= *kill_at) kill_now();
    if (!kill_at && give_up_at && Clock::now() >= *give_up_at) {
      if (give_up_) give_up_(signal_.load());
      std::fflush(nullptr);
      ::_exit(exit_code());
    }
  }
}

}  // namespace interloper::cli
