// The `interloper` binary started by a parent that left signals in a state a shell would not:
// SIGCHLD ignored (the kernel then reaps every child before its status can be read) or SIGINT
// and SIGTERM blocked. The binary starts from the defaults whatever it inherits.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/cli_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using interloper::testing::query;
using interloper::testing::read_file;

namespace {

// How the parent leaves the signals the binary inherits.
struct Inherited {
  bool sigchld_ignored = false;
  bool term_and_int_blocked = false;
};

// Starts the binary with `args` in `dir`, its stdout and stderr into `err`, as a child that
// inherited `inherited`. Everything the child needs is prepared before fork().
pid_t start_under(const Inherited& inherited, const std::vector<std::string>& args,
                  const fs::path& dir, const fs::path& err) {
  const std::string binary = interloper::testing::interloper_binary();
  std::vector<std::string> strings = {binary};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  sigset_t blocked;
  sigemptyset(&blocked);
  if (inherited.term_and_int_blocked) {
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (inherited.sigchld_ignored) ::signal(SIGCHLD, SIG_IGN);
    ::sigprocmask(SIG_SETMASK, &blocked, nullptr);
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::dup2(fd, 1) < 0 || ::dup2(fd, 2) < 0 || ::chdir(dir.c_str()) != 0) {
      ::_exit(126);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// The exit code of `pid` (128 + signal when a signal ended it), or -1 when it did not end within
// `limit` (it is then killed and reaped).
int wait_bounded(pid_t pid, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > until) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

class InheritedSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    // `slow` writes `started`, then takes 20 s: long enough to be interrupted.
    temp_.write(
        "pipeline.yaml",
        "sources:\n"
        "  - name: shop\n"
        "    destination: sqlite:data.db\n"
        "    assets:\n"
        "      - name: events\n"
        "        partitioning: {kind: time, column: date, granularity: day}\n"
        "        command: [/bin/sh, -c, 'echo \"{{\\\"date\\\":\\\"$0\\\",\\\"n\\\":1}}\"',"
        " \"{partition.key}\"]\n"
        "      - name: slow\n"
        "        command: [/bin/sh, -c, 'touch started; sleep 20; echo \"{{\\\"n\\\":1}}\"']\n");
  }

  interloper::testing::TempDir temp_{"il_signals"};
  const fs::path dir_ = temp_.path();
};

// A parent that ignores SIGCHLD (a server that never waits for its children, say) used to leave
// `materialize` spinning forever on a command that had long finished.
TEST_F(InheritedSignals, MaterializeFinishesUnderAParentThatIgnoresSigchld) {
  const pid_t pid = start_under(
      {.sigchld_ignored = true},
      {"materialize", "pipeline.yaml", "--asset", "events", "--partition", "2026-03-02"}, dir_,
      dir_ / "err.txt");
  EXPECT_EQ(wait_bounded(pid, std::chrono::seconds(30)), 0) << read_file(dir_ / "err.txt");
  EXPECT_EQ(query(dir_ / "data.db", "SELECT date, n FROM shop__events"),
            std::vector<std::string>{"2026-03-02|1"});
}

TEST_F(InheritedSignals, BackfillFinishesUnderAParentThatIgnoresSigchld) {
  const pid_t pid = start_under({.sigchld_ignored = true},
                                {"backfill", "pipeline.yaml", "--asset", "events", "--window",
                                 "2026-03-01..2026-03-04", "--concurrency", "2"},
                                dir_, dir_ / "err.txt");
  EXPECT_EQ(wait_bounded(pid, std::chrono::seconds(30)), 0) << read_file(dir_ / "err.txt");
  EXPECT_EQ(query(dir_ / "data.db", "SELECT COUNT(*) FROM shop__events"),
            std::vector<std::string>{"4"});
}

// SIGTERM blocked by the parent used to stay pending: the run went on to its end.
TEST_F(InheritedSignals, SigtermStopsARunWhoseParentBlockedIt) {
  const pid_t pid =
      start_under({.term_and_int_blocked = true},
                  {"materialize", "pipeline.yaml", "--asset", "slow"}, dir_, dir_ / "err.txt");
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(dir_ / "started") && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(fs::exists(dir_ / "started")) << read_file(dir_ / "err.txt");
  const auto sent = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  EXPECT_EQ(wait_bounded(pid, std::chrono::seconds(30)), 128 + SIGTERM)
      << read_file(dir_ / "err.txt");
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(10));
}

}  // namespace
