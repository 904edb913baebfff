// End-to-end tests of stopping the `interloper` binary with SIGINT and SIGTERM while its
// commands run, of --fail-fast, and of the checks before a run: real processes, real SQLite
// files.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "interloper/pipeline/process.hpp"
#include "support/background.hpp"
#include "support/cli_process.hpp"
#include "support/postgres.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;
using interloper::testing::BackgroundCli;
using interloper::testing::number_in;
using interloper::testing::Outcome;
using interloper::testing::query;
using interloper::testing::read_file;

namespace {

// Whether every process of group `group` is gone, waiting at most 10 s. Orphans come to this
// process (a subreaper), which reaps them: a zombie still answers kill(-group, 0).
bool group_gone(pid_t group) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (true) {
    while (::waitpid(-group, nullptr, WNOHANG) > 0) {
    }
    if (::kill(-group, 0) == -1 && errno == ESRCH) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

class Interrupt : public ::testing::Test {
 protected:
  void SetUp() override {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    std::string pattern = (fs::temp_directory_path() / "il_interrupt_XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
    fs::create_directories(dir_ / "pids");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // A daily command asset: it records its process group in pids/KEY, prints one row, and
  // then (for the keys listed in hang.txt, or always with `always_hang`) waits in a child
  // and a grandchild. `prelude` runs first. `store`: where the state is kept ("" for the
  // default file beside the pipeline).
  std::string pipeline(const std::string& prelude = "", bool always_hang = true,
                       const std::string& store = "") {
    const std::string hang =
        always_hang ? "true" : "grep -qx \"$IL_PARTITION_KEY\" hang.txt 2>/dev/null";
    std::ofstream(dir_ / "emit.sh")
        << "#!/bin/sh\n"
        << prelude << "\n"
        << "echo $$ > pids/$IL_PARTITION_KEY.tmp && mv pids/$IL_PARTITION_KEY.tmp "
           "pids/$IL_PARTITION_KEY\n"
        << "echo \"{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\",\\\"run\\\":\\\"$RUN\\\"}\"\n"
        << "if " << hang << "; then sleep 300 & sleep 300; fi\n";
    fs::permissions(dir_ / "emit.sh", fs::perms::owner_all, fs::perm_options::add);
    const fs::path file = dir_ / "pipeline.yaml";
    std::ofstream(file) << (store.empty() ? "" : "store: " + store + "\n")
                        << "sources:\n"
                           "  - name: s\n"
                           "    assets:\n"
                           "      - name: slow\n"
                           "        partitioning: {kind: time, column: date}\n"
                           "        command: [./emit.sh]\n";
    return file.string();
  }
  json status(const std::string& path, const std::string& window) {
    Outcome out = interloper::testing::run_interloper(
        {"--json", "status", path, "--window", window}, dir_.string());
    EXPECT_EQ(out.code, 0) << out.err;
    return json::parse(out.out)[0];
  }
  json last_run(const std::string& path) {
    Outcome out = interloper::testing::run_interloper({"--json", "runs", path}, dir_.string());
    EXPECT_EQ(out.code, 0) << out.err;
    return json::parse(out.out)[0];
  }

  // Backfills four days two at a time keeping the state in `store`, stops the run with SIGINT
  // once two tasks run, and returns what `runs` shows of it, as text and as JSON.
  std::pair<std::string, json> interrupted_backfill_runs(const std::string& store) {
    const std::string path = pipeline("", true, store);
    {
      BackgroundCli cli({"backfill", path, "--window", "2026-11-01..2026-11-04", "--concurrency", "2"},
                     dir_);
      number_in(dir_ / "pids" / "2026-11-04");
      number_in(dir_ / "pids" / "2026-11-03");
      ::kill(-cli.pid(), SIGINT);
      Outcome outcome = cli.join();
      EXPECT_EQ(outcome.code, 130) << outcome.err;
    }
    Outcome text = interloper::testing::run_interloper({"runs", path}, dir_.string());
    EXPECT_EQ(text.code, 0) << text.err;
    return {text.out, last_run(path)};
  }
  // The two tasks running when the signal came failed; the two waiting were canceled.
  static void expect_canceled_shown(const std::pair<std::string, json>& shown) {
    const auto& [text, run] = shown;
    EXPECT_EQ(run["status"], "interrupted") << run;
    EXPECT_EQ(run["succeeded"], 0) << run;
    EXPECT_EQ(run["failed"], 2) << run;
    EXPECT_EQ(run["canceled"], 2) << run;
    EXPECT_EQ(run["skipped"], 0) << run;
    EXPECT_NE(text.find("  interrupted  "), std::string::npos) << text;
    EXPECT_NE(text.find("4 partitions: 0 ok, 2 failed, 2 canceled, 0 skipped"), std::string::npos)
        << text;
  }

  fs::path dir_;
};

TEST_F(Interrupt, RunsShowsTheTasksAnInterruptedBackfillCanceled) {
  expect_canceled_shown(interrupted_backfill_runs(""));
}

TEST_F(Interrupt, RunsShowsTheTasksAnInterruptedBackfillCanceledOnPostgres) {
  IL_REQUIRE_POSTGRES(url);
  (void)url;
  static std::atomic<int> counter{0};
  const std::string schema =
      "il_interrupt_" + std::to_string(::getpid()) + "_" + std::to_string(++counter);
  expect_canceled_shown(interrupted_backfill_runs("${IL_TEST_POSTGRES_URL}?schema=" + schema));
}

TEST_F(Interrupt, SigintStopsABackfillAndKillsEveryCommandGroup) {
  const std::string path = pipeline();
  BackgroundCli cli({"backfill", path, "--window", "2026-11-01..2026-11-04", "--concurrency", "2"},
                 dir_);
  // Newest first, two at a time: 11-04 and 11-03 run, 11-02 and 11-01 wait.
  const pid_t first = number_in(dir_ / "pids" / "2026-11-04");
  const pid_t second = number_in(dir_ / "pids" / "2026-11-03");
  ::kill(-cli.pid(), SIGINT);  // what Ctrl-C sends to the terminal's foreground group
  Outcome outcome = cli.join();

  EXPECT_EQ(outcome.code, 130) << outcome.err;
  EXPECT_TRUE(group_gone(first));
  EXPECT_TRUE(group_gone(second));
  EXPECT_NE(outcome.out.find("backfill 2026-11-01..2026-11-04: 4 tasks, 0 succeeded, 2 failed, "
                             "2 canceled, 0 skipped"),
            std::string::npos)
      << outcome.out;
  EXPECT_NE(outcome.out.find("FAILED    slow  2026-11-04  interrupted\n"), std::string::npos);
  EXPECT_NE(outcome.err.find("interrupted by SIGINT"), std::string::npos) << outcome.err;
  EXPECT_FALSE(fs::exists(dir_ / "pids" / "2026-11-02"));  // never started

  json state = status(path, "2026-11-01..2026-11-04");
  EXPECT_EQ(state["failed"], json::array({"2026-11-03..2026-11-04"})) << state;
  EXPECT_EQ(state["missing"], json::array({"2026-11-01..2026-11-02"})) << state;
  EXPECT_EQ(state["materialized"], json::array()) << state;
  ASSERT_FALSE(state["failures"].empty()) << state;
  for (const json& failure : state["failures"]) EXPECT_EQ(failure["error"], "interrupted");
  json run = last_run(path);
  EXPECT_EQ(run["status"], "interrupted") << run;
  EXPECT_EQ(run["failed"], 2) << run;
}

TEST_F(Interrupt, SigtermDuringAWriteKeepsThePreviousDataAndRecordsNoMaterialization) {
  const std::string path = pipeline("", false);
  ::setenv("RUN", "first", 1);
  Outcome done = interloper::testing::run_interloper(
      {"materialize", path, "--partition", "2026-11-03"}, dir_.string());
  ASSERT_EQ(done.code, 0) << done.err;
  fs::remove(dir_ / "pids" / "2026-11-03");

  // The second run prints its row, then hangs while the partition's replace is open.
  std::ofstream(dir_ / "hang.txt") << "2026-11-03\n";
  ::setenv("RUN", "second", 1);
  BackgroundCli cli({"materialize", path, "--partition", "2026-11-03"}, dir_);
  const pid_t group = number_in(dir_ / "pids" / "2026-11-03");
  ::kill(cli.pid(), SIGTERM);
  Outcome outcome = cli.join();
  ::unsetenv("RUN");

  EXPECT_EQ(outcome.code, 143) << outcome.err;
  EXPECT_TRUE(group_gone(group));
  EXPECT_NE(outcome.out.find("FAILED    slow  2026-11-03  interrupted"), std::string::npos)
      << outcome.out;
  EXPECT_NE(outcome.err.find("interrupted by SIGTERM"), std::string::npos) << outcome.err;
  EXPECT_EQ(query(dir_ / ".interloper" / "data.db", "SELECT date, run FROM \"s__slow\""),
            std::vector<std::string>{"2026-11-03|first"});
  json state = status(path, "2026-11-03");
  EXPECT_EQ(state["failed"], json::array({"2026-11-03"})) << state;
  EXPECT_EQ(state["failures"][0]["error"], "interrupted") << state;
  EXPECT_EQ(last_run(path)["status"], "interrupted");
}

TEST_F(Interrupt, SecondSigintKillsACommandThatIgnoresTerm) {
  // The shell outlives SIGTERM (its sleeps do not) and says it got it.
  const std::string path =
      pipeline("trap 'echo $$ > got_term' TERM; echo $$ > pids/2026-11-03; "
               "while :; do sleep 1; done");
  BackgroundCli cli({"materialize", path, "--partition", "2026-11-03"}, dir_);
  const pid_t group = number_in(dir_ / "pids" / "2026-11-03");
  ::kill(-cli.pid(), SIGINT);
  number_in(dir_ / "got_term");  // the first one arrived: the second is a second one
  ::kill(-cli.pid(), SIGINT);
  Outcome outcome = cli.join();
  EXPECT_EQ(outcome.code, 130) << outcome.err;
  EXPECT_TRUE(group_gone(group));
  EXPECT_EQ(last_run(path)["status"], "interrupted");
}

TEST_F(Interrupt, CommandIgnoringTermIsKilledAfterTheGrace) {
  const std::string path = pipeline("trap '' TERM");
  BackgroundCli cli({"materialize", path, "--partition", "2026-11-03"}, dir_);
  const pid_t group = number_in(dir_ / "pids" / "2026-11-03");
  ::kill(cli.pid(), SIGTERM);
  Outcome outcome = cli.join();
  EXPECT_EQ(outcome.code, 143) << outcome.err;
  EXPECT_TRUE(group_gone(group));
  EXPECT_EQ(status(path, "2026-11-03")["failures"][0]["error"], "interrupted");
}

TEST_F(Interrupt, FailFastStartsNothingAfterTheFirstFailure) {
  const std::string path = pipeline("exit 3");
  Outcome slow = interloper::testing::run_interloper(
      {"backfill", path, "--window", "2026-11-01..2026-11-03", "--fail-fast"}, dir_.string());
  EXPECT_EQ(slow.code, 1) << slow.err;
  EXPECT_NE(slow.out.find("3 tasks, 0 succeeded, 1 failed, 2 canceled"), std::string::npos)
      << slow.out;
  json state = status(path, "2026-11-01..2026-11-03");
  EXPECT_EQ(state["failed"], json::array({"2026-11-03"})) << state;

  Outcome all = interloper::testing::run_interloper(
      {"backfill", path, "--window", "2026-11-01..2026-11-03"}, dir_.string());
  EXPECT_NE(all.out.find("3 tasks, 0 succeeded, 3 failed, 0 canceled"), std::string::npos)
      << all.out;
}

// A command asset that logs each run to calls.log; `top` is prepended to the pipeline.
std::string logging_pipeline(const fs::path& dir, const std::string& top) {
  const fs::path file = dir / "pipeline.yaml";
  std::ofstream(file) << top
                      << "sources:\n"
                         "  - name: s\n"
                         "    assets:\n"
                         "      - name: logged\n"
                         "        partitioning: {kind: time, column: date}\n"
                         "        command: [/bin/sh, -c, 'echo ran >> calls.log; echo "
                         "\"{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\"}\"']\n";
  return file.string();
}

TEST_F(Interrupt, UnwritableDestinationIsReportedBeforeAnythingRuns) {
  std::ofstream(dir_ / "blocker") << "a file where a directory should be\n";
  const std::string path =
      logging_pipeline(dir_, "destination: sqlite://" + (dir_ / "blocker" / "data.db").string() +
                                 "\n");
  for (const char* command : {"materialize", "backfill"}) {
    Outcome outcome = interloper::testing::run_interloper(
        {command, path, command == std::string("backfill") ? "--window" : "--partition",
         "2026-11-01"},
        dir_.string());
    EXPECT_EQ(outcome.code, 2) << command << ": " << outcome.err;
    EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
    EXPECT_NE(outcome.err.find("error: destination sqlite://" + (dir_ / "blocker").string()),
              std::string::npos)
        << outcome.err;
    EXPECT_NE(outcome.err.find("(asset 'logged') cannot be written"), std::string::npos)
        << outcome.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "calls.log"));
  EXPECT_FALSE(fs::exists(dir_ / ".interloper" / "state.db"));  // no run recorded either
}

TEST_F(Interrupt, UnwritableStoreIsReportedBeforeAnythingRuns) {
  std::ofstream(dir_ / "blocker") << "a file where a directory should be\n";
  const std::string path =
      logging_pipeline(dir_, "store: " + (dir_ / "blocker" / "state.db").string() + "\n");
  Outcome outcome = interloper::testing::run_interloper(
      {"backfill", path, "--window", "2026-11-01..2026-11-02"}, dir_.string());
  EXPECT_EQ(outcome.code, 2) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
  EXPECT_NE(outcome.err.find("error: the store cannot be opened for writing: sqlite '" +
                             (dir_ / "blocker" / "state.db").string() + "'"),
            std::string::npos)
      << outcome.err;
  EXPECT_FALSE(fs::exists(dir_ / "calls.log"));
}

}  // namespace
