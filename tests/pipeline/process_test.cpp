#include "interloper/pipeline/process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "interloper/error.hpp"

namespace ilp = interloper::pipeline;

namespace {

ilp::ProcessResult sh(const std::string& script, double timeout = 0) {
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.timeout_seconds = timeout;
  return ilp::run_process(spec);
}

TEST(Process, CollectsStdoutAndExitStatus) {
  auto result = sh("printf 'a\\nb\\n'; exit 0");
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.out, "a\nb\n");
  EXPECT_EQ(result.exit_code, 0);
}

TEST(Process, ReportsExitStatusAndStderrTail) {
  auto result = sh("for i in 1 2 3 4 5 6 7; do echo line$i >&2; done; exit 3");
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.describe(0), "exited with status 3");
  ASSERT_EQ(result.stderr_tail.size(), 5u);
  EXPECT_EQ(result.stderr_tail.front(), "line3");
  EXPECT_EQ(result.stderr_tail.back(), "line7");
}

TEST(Process, ReportsSignals) {
  auto result = sh("kill -TERM $$");
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.signal, SIGTERM);
  EXPECT_NE(result.describe(0).find("signal 15"), std::string::npos);
}

TEST(Process, KillsOnTimeoutIncludingChildren) {
  // The grandchild keeps the pipes open; killing the process group ends it too.
  auto result = sh("sleep 30 & sleep 30", 0.2);
  EXPECT_TRUE(result.timed_out);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.describe(0.2), "timed out after 0.2s");
}

TEST(Process, LargeOutputOnBothPipesDoesNotDeadlock) {
  // 1 MiB on each pipe, interleaved: far more than a pipe buffer holds.
  auto result =
      sh("i=0; while [ $i -lt 16 ]; do head -c 65536 /dev/zero | tr '\\0' o; "
         "head -c 65536 /dev/zero | tr '\\0' e >&2; i=$((i+1)); done");
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.out.size(), 16u * 65536u);
}

TEST(Process, PassesEnvironmentAndRemovesStaleVariables) {
  ::setenv("IL_STALE_FOR_TEST", "old", 1);
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo \"$IL_X|${IL_STALE_FOR_TEST-unset}\""};
  spec.env = {{"IL_X", "it's \"quoted\""}};
  spec.unset_env = {"IL_STALE_FOR_TEST"};
  auto result = ilp::run_process(spec);
  EXPECT_EQ(result.out, "it's \"quoted\"|unset\n");
}

TEST(Process, ArgumentsAreNotInterpretedByAShell) {
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/echo", "$HOME; rm -rf /", "a  b"};
  auto result = ilp::run_process(spec);
  EXPECT_EQ(result.out, "$HOME; rm -rf / a  b\n");
}

TEST(Process, CallsBackForEveryStderrLine) {
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "printf 'one\\ntwo\\nthree' >&2"};
  std::vector<std::string> lines;
  spec.on_stderr_line = [&](std::string_view line) { lines.emplace_back(line); };
  ilp::run_process(spec);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
}

TEST(Process, UnknownProgramThrowsNamingIt) {
  ilp::ProcessSpec spec;
  spec.argv = {"/nonexistent/program"};
  try {
    ilp::run_process(spec);
    FAIL() << "expected PipelineError";
  } catch (const interloper::PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/program"), std::string::npos);
  }
}

TEST(Process, RunsInTheGivenWorkingDirectory) {
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/pwd"};
  spec.working_directory = "/tmp";
  EXPECT_EQ(ilp::run_process(spec).out, "/tmp\n");
}

// Whether every process of group `group` is gone, waiting at most `bound`. Orphans whose
// parent died come to this process (a subreaper), which reaps them: a zombie still answers
// kill(-group, 0).
bool group_gone(pid_t group, std::chrono::seconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (true) {
    while (::waitpid(-group, nullptr, WNOHANG) > 0) {
    }
    if (::kill(-group, 0) == -1 && errno == ESRCH) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

TEST(Process, ProgramThatExitsWhileItsChildHoldsStdoutIsDoneNotTimedOut) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 1000 & echo '{\"x\":1}'"};
  spec.timeout_seconds = 60;  // only a bound: the program exits at once
  int group = 0;
  spec.on_started = [&](int pid) { group = pid; };
  auto result = ilp::run_process(spec);
  EXPECT_TRUE(result.ok()) << result.describe(60);
  EXPECT_FALSE(result.timed_out);
  EXPECT_TRUE(result.left_processes);
  EXPECT_EQ(result.out, "{\"x\":1}\n");
  ASSERT_GT(group, 0);
  EXPECT_TRUE(group_gone(group, std::chrono::seconds(10)));
}

TEST(Process, OutputWrittenAfterTheProgramExitsIsReadDuringTheGrace) {
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "(sleep 0.1; echo late) & echo early"};
  spec.linger_seconds = 30;  // the late writer closes stdout well before
  auto result = ilp::run_process(spec);
  EXPECT_TRUE(result.ok());
  EXPECT_FALSE(result.left_processes);
  EXPECT_EQ(result.out, "early\nlate\n");
}

TEST(Process, ProgramThatClosesItsPipesStillTimesOut) {
  auto result = sh("exec >&- 2>&-; sleep 30", 0.2);
  EXPECT_TRUE(result.timed_out);
}

TEST(Process, ExitStatusOfAProgramWhoseChildLingers) {
  auto result = sh("sleep 1000 & exit 4");
  EXPECT_EQ(result.exit_code, 4);
  EXPECT_TRUE(result.left_processes);
  EXPECT_EQ(result.describe(0), "exited with status 4");
}

TEST(Process, TerminateReachesEveryRunningGroupAndMarksItInterrupted) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 300 & sleep 300"};
  spec.timeout_seconds = 120;  // a bound should the interrupt not arrive
  std::atomic<int> group{0};
  spec.on_started = [&](int pid) { group = pid; };
  ilp::ProcessResult result;
  std::thread runner([&] { result = ilp::run_process(spec); });
  while (group == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ilp::terminate_processes();
  runner.join();
  EXPECT_TRUE(ilp::processes_interrupted());
  ilp::clear_interrupt();
  EXPECT_TRUE(result.interrupted);
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.describe(120), "interrupted");
  EXPECT_TRUE(group_gone(group, std::chrono::seconds(10)));
}

TEST(Process, KillReachesAGroupThatIgnoresTerm) {
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "trap '' TERM; sleep 300"};
  spec.timeout_seconds = 120;
  std::atomic<int> group{0};
  spec.on_started = [&](int pid) { group = pid; };
  ilp::ProcessResult result;
  std::thread runner([&] { result = ilp::run_process(spec); });
  while (group == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ilp::terminate_processes();
  ilp::kill_processes();
  runner.join();
  ilp::clear_interrupt();
  EXPECT_TRUE(result.interrupted);
  EXPECT_FALSE(result.timed_out);
}

TEST(Process, ChildStartedAfterAnInterruptIsStoppedAtOnce) {
  ilp::terminate_processes();
  auto result = sh("sleep 300", 120);
  ilp::clear_interrupt();
  EXPECT_TRUE(result.interrupted);
  EXPECT_FALSE(result.timed_out);
  EXPECT_TRUE(sh("true").ok());
}

TEST(Process, EnvironmentTooLargeSaysSoWithTheSizes) {
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/true"};
  spec.env = {{"IL_HUGE", std::string(4u << 20, 'x')}};
  try {
    ilp::run_process(spec);
    FAIL() << "expected PipelineError";
  } catch (const interloper::PipelineError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("too large"), std::string::npos) << what;
    EXPECT_NE(what.find("variable IL_HUGE with 4194313 bytes"), std::string::npos) << what;
    EXPECT_EQ(what.find("Argument list too long"), std::string::npos) << what;
  }
}

TEST(Process, HandsStdoutToTheCallbackInsteadOfCollectingIt) {
  ilp::ProcessSpec spec;
  // 1 MiB: many reads, so the chunks must add up to the whole output in order.
  spec.argv = {"/bin/sh", "-c", "head -c 1048576 /dev/zero | tr '\\0' x; echo end"};
  std::string seen;
  std::size_t chunks = 0;
  spec.on_stdout = [&](std::string_view chunk) {
    seen.append(chunk);
    ++chunks;
  };
  auto result = ilp::run_process(spec);
  EXPECT_TRUE(result.ok());
  EXPECT_TRUE(result.out.empty());
  EXPECT_EQ(seen.size(), 1048576u + 4u);
  EXPECT_EQ(seen.substr(seen.size() - 4), "end\n");
  EXPECT_GT(chunks, 1u);
}

TEST(Process, ACallbackThatThrowsStopsTheWholeProcessGroup) {
  auto pid_file = std::filesystem::temp_directory_path() /
                  ("il_process_test_" + std::to_string(::getpid()) + ".pid");
  ilp::ProcessSpec spec;
  // Endless output from a grandchild whose pid is recorded, so the test can see it was killed.
  spec.argv = {"/bin/sh", "-c", "yes x & echo $! > '" + pid_file.string() + "'; wait"};
  std::size_t bytes = 0;
  spec.on_stdout = [&](std::string_view chunk) {
    bytes += chunk.size();
    if (bytes > 100000) throw std::runtime_error("enough");
  };
  EXPECT_THROW(ilp::run_process(spec), std::runtime_error);
  std::ifstream in(pid_file);
  pid_t grandchild = 0;
  in >> grandchild;
  ASSERT_GT(grandchild, 0);
  // The grandchild is dead once it is gone or a zombie waiting for init to reap it.
  auto dead = [grandchild] {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, name, state;
    if (!(stat >> pid >> name >> state)) return true;
    return state == "Z" || state == "X";
  };
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {  // bounded: at most 2 s
    gone = dead();
    if (!gone) ::usleep(10000);
  }
  std::filesystem::remove(pid_file);
  EXPECT_TRUE(gone);
}

// Sets a signal's disposition for the life of the object, then restores it.
class SignalDisposition {
 public:
  SignalDisposition(int sig, void (*handler)(int)) : sig_(sig) {
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    ::sigaction(sig_, &action, &old_);
  }
  ~SignalDisposition() { ::sigaction(sig_, &old_, nullptr); }
  SignalDisposition(const SignalDisposition&) = delete;
  SignalDisposition& operator=(const SignalDisposition&) = delete;

 private:
  int sig_;
  struct sigaction old_ {};
};

// A process that ignores SIGCHLD has its children reaped by the kernel: their exit status is
// gone. run_process says so at once instead of waiting for a status that never comes (it used to
// spin on the child's pidfd until the timeout, or forever without one), and never takes the lost
// status for success.
TEST(Process, ChildOfAProcessIgnoringSigchldEndsWithItsStatusLost) {
  const auto started = std::chrono::steady_clock::now();
  ilp::ProcessResult result;
  {
    SignalDisposition ignored(SIGCHLD, SIG_IGN);
    result = sh("echo hi; exit 0", 10);
  }
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_FALSE(result.timed_out);
  EXPECT_LT(took, std::chrono::seconds(5));
  EXPECT_EQ(result.out, "hi\n");
  EXPECT_TRUE(result.status_lost);
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.describe(10).find("exit status was lost"), std::string::npos)
      << result.describe(10);
}

// Children start with SIGCHLD at its default and nothing blocked, whatever the caller has: a
// child that inherited an ignored SIGCHLD would lose its own children's statuses.
TEST(Process, ChildrenStartWithDefaultSignalsAndNothingBlocked) {
  SignalDisposition ignored(SIGCHLD, SIG_IGN);
  sigset_t blocked, old;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  sigaddset(&blocked, SIGUSR1);
  ::pthread_sigmask(SIG_BLOCK, &blocked, &old);
  ilp::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "grep -E '^(SigBlk|SigIgn):' /proc/self/status"};
  const ilp::ProcessResult result = ilp::run_process(spec);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  // SigIgn is a mask of ignored signals, bit (n - 1) for signal n.
  std::istringstream lines(result.out);
  std::string name, mask;
  while (lines >> name >> mask) {
    const unsigned long long bits = std::stoull(mask, nullptr, 16);
    if (name == "SigBlk:") {
      EXPECT_EQ(bits, 0u) << result.out;
    } else if (name == "SigIgn:") {
      EXPECT_EQ(bits & (1ull << (SIGCHLD - 1)), 0u) << result.out;
    }
  }
  EXPECT_NE(result.out.find("SigIgn:"), std::string::npos) << result.out;
}

// start_process: the same signal state, the caller's streams, and a pid the caller reaps.
TEST(Process, StartProcessGivesAPidToReap) {
  SignalDisposition ignored(SIGCHLD, SIG_DFL);
  const std::string out =
      (std::filesystem::temp_directory_path() / ("il_start_process_" + std::to_string(::getpid())))
          .string();
  const int pid = ilp::start_process(
      {"/bin/sh", "-c", "grep '^SigIgn:' /proc/self/status > \"$0\"; exit 7", out});
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  std::ifstream in(out);
  std::string name, mask;
  in >> name >> mask;
  std::filesystem::remove(out);
  EXPECT_EQ(name, "SigIgn:");
  EXPECT_EQ(std::stoull(mask, nullptr, 16) & (1ull << (SIGCHLD - 1)), 0u);
  EXPECT_THROW(ilp::start_process({"/nonexistent/program"}), interloper::PipelineError);
}

}  // namespace
