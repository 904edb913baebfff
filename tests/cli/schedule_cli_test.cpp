// End-to-end tests of `interloper jobs` and `interloper schedule` on temporary pipelines.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "interloper/pipeline/process.hpp"
#include "support/cli_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

std::string binary() { return interloper::testing::interloper_binary(); }

using interloper::testing::lines_of;
using interloper::testing::Outcome;
using interloper::testing::query;
using interloper::testing::read_file;

Outcome interloper(std::vector<std::string> args) {
  return interloper::testing::run_interloper(std::move(args));
}

class ScheduleCli : public ::testing::Test {
 protected:
  void SetUp() override {
    write("emit.sh",
          "#!/bin/sh\n"
          "echo \"$1\" >> calls.log\n"
          "echo \"{\\\"date\\\":\\\"$1\\\",\\\"n\\\":1}\"\n",
          true);
    pipeline_ = write("pipeline.yaml",
                      "sources:\n"
                      "  - name: ads\n"
                      "    assets:\n"
                      "      - name: ads_stats\n"
                      "        partitioning: {kind: time, column: date, granularity: day}\n"
                      "        command: [./emit.sh, \"{partition.key}\"]\n"
                      "      - name: late\n"
                      "        partitioning: {kind: time, column: date, granularity: day, "
                      "start: 2026-03-30}\n"
                      "        command: [./emit.sh, \"late-{partition.key}\"]\n"
                      "jobs:\n"
                      "  - name: nightly_ads\n"
                      "    cron: \"0 3 * * *\"\n"
                      "    time_zone: Europe/Berlin\n"
                      "    assets: [ads_stats]\n"
                      "    lookback: 3\n"
                      "    offset: 1\n"
                      "  - name: from_april\n"
                      "    cron: \"@daily\"\n"
                      "    assets: [late]\n")
                    .string();
  }
  fs::path write(const std::string& name, const std::string& text, bool executable = false) {
    return temp_.write(name, text, executable);
  }
  std::vector<std::string> calls() { return lines_of(read_file(dir_ / "calls.log")); }
  fs::path state_db() const { return dir_ / ".interloper" / "state.db"; }

  interloper::testing::TempDir temp_{"il_sched"};
  const fs::path dir_ = temp_.path();
  std::string pipeline_;
};

TEST_F(ScheduleCli, JobsPrintsTheNextFiresAndTheirWindowsAsJson) {
  Outcome o =
      interloper({"--json", "jobs", pipeline_, "--at", "2026-03-28T12:00:00Z", "--count", "2"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(
      lines_of(o.out),
      (std::vector<std::string>{
          R"({"job":"nightly_ads","fire":"2026-03-29T03:00:00+02:00","fire_utc":"2026-03-29T01:00:00Z","window":"2026-03-26..2026-03-28"})",
          R"({"job":"nightly_ads","fire":"2026-03-30T03:00:00+02:00","fire_utc":"2026-03-30T01:00:00Z","window":"2026-03-27..2026-03-29"})",
          R"({"job":"from_april","fire":"2026-03-29T00:00:00+00:00","fire_utc":"2026-03-29T00:00:00Z","window":null})",
          R"({"job":"from_april","fire":"2026-03-30T00:00:00+00:00","fire_utc":"2026-03-30T00:00:00Z","window":"2026-03-30"})",
      }));
  // An offset instead of Z, and text output.
  Outcome text =
      interloper({"jobs", pipeline_, "--at", "2026-03-28T13:00:00+01:00", "--count", "1"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_EQ(lines_of(text.out), (std::vector<std::string>{
                                    "nightly_ads  2026-03-29T03:00:00+02:00  2026-03-29T01:00:00Z  "
                                    "2026-03-26..2026-03-28",
                                    "from_april  2026-03-29T00:00:00+00:00  2026-03-29T00:00:00Z  "
                                    "(before start: skipped)"}));
}

TEST_F(ScheduleCli, JobsRejectsAnInstantWithoutOffset) {
  Outcome o = interloper({"jobs", pipeline_, "--at", "2026-03-28T12:00:00"});
  EXPECT_EQ(o.code, 2);
  ASSERT_EQ(lines_of(o.err).size(), 1u) << o.err;
  EXPECT_NE(o.err.find("interloper: error: invalid instant '2026-03-28T12:00:00'"),
            std::string::npos)
      << o.err;
}

TEST_F(ScheduleCli, ABadJobIsReportedWithFileLineAndColumn) {
  write("bad.yaml",
        "sources:\n"
        "  - name: s\n"
        "    assets:\n"
        "      - name: a\n"
        "        partitioning: {kind: time, column: date, granularity: day}\n"
        "        command: [./emit.sh]\n"
        "jobs:\n"
        "  - name: j\n"
        "    cron: \"* * 31 2 *\"\n"
        "    assets: [a]\n");
  Outcome o = interloper({"jobs", (dir_ / "bad.yaml").string()});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("bad.yaml:9:16: invalid cron expression '* * 31 2 *'"), std::string::npos)
      << o.err;
}

TEST_F(ScheduleCli, OnceRunsTheDueFireRecordsItAndNeverRepeatsIt) {
  const std::vector<std::string> args = {"schedule", pipeline_, "--once", "--now",
                                         "2026-03-29T01:00:00Z"};
  Outcome first = interloper(args);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{"2026-03-28", "2026-03-27", "2026-03-26"}));
  EXPECT_EQ(first.out.rfind("succeeded nightly_ads  2026-03-29T03:00:00+02:00  "
                            "2026-03-26..2026-03-28  run-",
                            0),
            0u)
      << first.out;
  EXPECT_EQ(query(state_db(),
                  "SELECT \"job\", \"fire\", \"window\", \"outcome\" FROM "
                  "\"schedule_fires\""),
            (std::vector<std::string>{"nightly_ads|1774746000|2026-03-26..2026-03-28|succeeded"}));
  // Restarted: the fire is in the store, so nothing runs again.
  Outcome again = interloper(args);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.out, "");
  EXPECT_EQ(calls().size(), 3u);
  // Between fires nothing is due.
  Outcome between = interloper({"schedule", pipeline_, "--once", "--now", "2026-03-29T01:30:00Z"});
  EXPECT_EQ(between.code, 0);
  EXPECT_EQ(calls().size(), 3u);
}

// Two scheduler processes evaluating the same instant over one store: the fire runs once.
TEST_F(ScheduleCli, TwoSchedulersOnOneStoreRunAFireOnce) {
  const std::vector<std::string> args = {"--json", "schedule", pipeline_,
                                         "--once", "--now",    "2026-03-29T01:00:00Z"};
  Outcome a, b;
  std::thread other([&] { a = interloper(args); });
  b = interloper(args);
  other.join();
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(lines_of(a.out).size() + lines_of(b.out).size(), 1u) << a.out << b.out;
  EXPECT_EQ(calls(), (std::vector<std::string>{"2026-03-28", "2026-03-27", "2026-03-26"}));
  EXPECT_EQ(query(state_db(), "SELECT COUNT(*) FROM \"schedule_fires\""),
            (std::vector<std::string>{"1"}));
}

TEST_F(ScheduleCli, CatchUpRunsTheLatestMissedFiresOnly) {
  ASSERT_EQ(interloper({"schedule", pipeline_, "--once", "--now", "2026-03-29T01:00:00Z"}).code, 0);
  std::remove((dir_ / "calls.log").c_str());
  // Down until 04-02 03:00 Berlin: the fires of 03-30, 03-31 and 04-01 were missed.
  Outcome o = interloper({"--json", "schedule", pipeline_, "--once", "--now",
                          "2026-04-02T01:00:00Z", "--catch-up", "1"});
  ASSERT_EQ(o.code, 0) << o.err;
  const auto lines = lines_of(o.out);
  // from_april has never fired, so it missed nothing; it has no fire at 01:00Z.
  ASSERT_EQ(lines.size(), 2u) << o.out;
  EXPECT_NE(lines[0].find(R"("fire_utc":"2026-04-01T01:00:00Z","window":"2026-03-29..2026-03-31")"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"("fire_utc":"2026-04-02T01:00:00Z","window":"2026-03-30..2026-04-01")"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find(R"("outcome":"succeeded")"), std::string::npos) << lines[1];
  EXPECT_EQ(query(state_db(), "SELECT COUNT(*) FROM \"schedule_fires\""),
            (std::vector<std::string>{"3"}));
}

TEST_F(ScheduleCli, AFireClampedAwayByStartIsSkippedWithOneInfoLine) {
  Outcome o = interloper({"schedule", pipeline_, "--once", "--now", "2026-03-29T00:00:00Z"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(lines_of(o.err),
            (std::vector<std::string>{
                "interloper: info: job 'from_april': fire at 2026-03-29T00:00:00Z skipped: its "
                "window lies before the assets' start 2026-03-30"}));
  EXPECT_EQ(o.out.rfind("skipped   from_april  2026-03-29T00:00:00+00:00  -  run-", 0), 0u)
      << o.out;
  EXPECT_TRUE(calls().empty());
}

TEST_F(ScheduleCli, NowNeedsOnceAndPipelinesNeedJobs) {
  EXPECT_EQ(interloper({"schedule", pipeline_, "--now", "2026-03-29T00:00:00Z"}).code, 2);
  write("nojobs.yaml",
        "sources:\n  - name: s\n    assets:\n      - name: a\n        command: [./emit.sh]\n");
  Outcome o = interloper({"schedule", (dir_ / "nojobs.yaml").string(), "--once"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("the pipeline declares no jobs"), std::string::npos) << o.err;
}

// The long-running scheduler stops on SIGTERM (between fires) with exit status 0.
TEST_F(ScheduleCli, SigtermStopsTheScheduler) {
  const fs::path err = dir_ / "scheduler.err";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, STDERR_FILENO);
    const std::string bin = binary();
    ::execl(bin.c_str(), bin.c_str(), "schedule", pipeline_.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Wait (bounded) until it says it is scheduling.
  for (int i = 0; i < 2000 && read_file(err).find("scheduling 2 jobs") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(read_file(err).find("scheduling 2 jobs"), std::string::npos) << read_file(err);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(read_file(err).find("interloper: info: stopped"), std::string::npos) << read_file(err);
}

}  // namespace
