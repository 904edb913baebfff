// End-to-end tests of the built `interloper` binary on temporary
// pipelines with real SQLite databases and real files.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "interloper/pipeline/process.hpp"
#include "support/cli_process.hpp"
#include "support/postgres.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path source_dir() { return IL_TEST_SOURCE_DIR; }

using interloper::testing::lines_of;
using interloper::testing::Outcome;
using interloper::testing::query;
using interloper::testing::read_file;

Outcome interloper(std::vector<std::string> args) {
  return interloper::testing::run_interloper(std::move(args));
}

class Cli : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& text, bool executable = false) {
    return temp_.write(name, text, executable);
  }
  std::string pipeline(const std::string& text) { return write("pipeline.yaml", text).string(); }
  fs::path data_db() const { return dir_ / ".interloper" / "data.db"; }

  // A daily command asset that appends each key it runs to calls.log, fails for the keys
  // listed in fail.txt, and emits two rows; plus a daily sql aggregate of it.
  std::string shop_pipeline() {
    write("emit.sh",
          "#!/bin/sh\n"
          "echo \"$IL_PARTITION_KEY\" >> calls.log\n"
          "if [ -f fail.txt ] && grep -qx \"$IL_PARTITION_KEY\" fail.txt; then\n"
          "  echo \"preparing $1\" >&2; echo \"no data for $1\" >&2; exit 3\n"
          "fi\n"
          "echo \"{\\\"date\\\":\\\"$1\\\",\\\"amount\\\":2.5}\"\n"
          "echo \"{\\\"date\\\":\\\"$1\\\",\\\"amount\\\":4}\"\n",
          true);
    return pipeline(
        "sources:\n"
        "  - name: shop\n"
        "    assets:\n"
        "      - name: events\n"
        "        partitioning: {kind: time, column: date, granularity: day}\n"
        "        command: [./emit.sh, \"{partition.key}\"]\n"
        "      - name: revenue\n"
        "        deps: [events]\n"
        "        partitioning: {kind: time, column: date, granularity: day}\n"
        "        sql: |\n"
        "          SELECT date, SUM(amount) AS total, COUNT(*) AS n FROM events\n"
        "          WHERE date >= :bounds_start AND date < :bounds_end GROUP BY date\n"
        "      - name: settings\n"
        "        command: [/bin/echo, '{{\"k\":1}}']\n"
        "  - name: planning\n"
        "    assets:\n"
        "      - name: regions\n"
        "        partitioning: {kind: list, column: region, values: [eu, us], allow_window: true}\n"
        "        command: [/bin/sh, -c, 'for r in $IL_PARTITION_VALUES; do echo "
        "\"{{\\\"region\\\":\\\"$r\\\"}}\"; done']\n");
  }
  std::vector<std::string> calls() { return lines_of(read_file(dir_ / "calls.log")); }

  interloper::testing::TempDir temp_{"il_cli"};
  const fs::path dir_ = temp_.path();
};

void expect_one_error_line(const Outcome& o, const std::string& needle) {
  auto lines = lines_of(o.err);
  ASSERT_EQ(lines.size(), 1u) << o.err;
  EXPECT_EQ(lines[0].rfind("interloper: error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(needle), std::string::npos) << lines[0];
}

TEST_F(Cli, HelpMatchesGoldenFiles) {
  fs::path golden = source_dir() / "tests" / "cli" / "golden";
  const char* update = std::getenv("IL_UPDATE_GOLDEN");
  for (const std::string command : {"", "materialize", "backfill", "status", "runs", "serve",
                                    "catalog", "check", "jobs", "schedule", "worker", "cancel"}) {
    std::vector<std::string> args;
    if (!command.empty()) args.push_back(command);
    args.push_back("--help");
    Outcome o = interloper(args);
    EXPECT_EQ(o.code, 0);
    fs::path file = golden / ((command.empty() ? "interloper" : command) + ".help");
    if (update != nullptr && std::string(update) == "1") {
      fs::create_directories(golden);
      std::ofstream(file) << o.out;
      continue;
    }
    EXPECT_EQ(read_file(file), o.out) << "for " << file << "; IL_UPDATE_GOLDEN=1 rewrites it";
  }
}

TEST_F(Cli, VersionAndUsageErrors) {
  Outcome version = interloper({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_NE(version.out.find("interloper "), std::string::npos);

  Outcome none = interloper({});
  EXPECT_EQ(none.code, 2);
  expect_one_error_line(none, "subcommand");

  Outcome unknown_flag = interloper({"materialize", shop_pipeline(), "--frobnicate"});
  EXPECT_EQ(unknown_flag.code, 2);
  expect_one_error_line(unknown_flag, "--frobnicate");

  Outcome both = interloper({"materialize", shop_pipeline(), "--partition", "2026-11-01",
                             "--window", "2026-11-01..2026-11-02"});
  EXPECT_EQ(both.code, 2);
  expect_one_error_line(both, "excludes");
}

TEST_F(Cli, BadYamlIsOneLineWithLocation) {
  std::string path = pipeline("sources:\n  - name: shop\n    asets: []\n");
  Outcome o = interloper({"check", path});
  EXPECT_EQ(o.code, 2);
  expect_one_error_line(o, path + ":3:5: unknown key 'asets'");

  Outcome missing = interloper({"check", (dir_ / "nope.yaml").string()});
  EXPECT_EQ(missing.code, 2);
  expect_one_error_line(missing, "nope.yaml:1:1: cannot read");
}

TEST_F(Cli, BadKeysWindowsAndAssetsExitWithTwo) {
  std::string path = shop_pipeline();
  Outcome bad_key = interloper({"materialize", path, "--partition", "2026-13-45"});
  EXPECT_EQ(bad_key.code, 2);
  expect_one_error_line(bad_key, "2026-13-45");

  Outcome reversed = interloper({"backfill", path, "--window", "2026-11-05..2026-11-01"});
  EXPECT_EQ(reversed.code, 2);
  expect_one_error_line(reversed, "2026-11-05..2026-11-01");

  Outcome unknown =
      interloper({"materialize", path, "--partition", "2026-11-01", "--asset", "nope"});
  EXPECT_EQ(unknown.code, 2);
  expect_one_error_line(unknown, "unknown asset 'nope'");

  Outcome bad_list = interloper({"materialize", path, "--asset", "regions", "--partition", "mars"});
  EXPECT_EQ(bad_list.code, 2);
  expect_one_error_line(bad_list, "mars");
  EXPECT_FALSE(fs::exists(dir_ / "calls.log"));
}

TEST_F(Cli, MaterializeRunsCommandAndSqlAssets) {
  std::string path = shop_pipeline();
  Outcome o = interloper({"materialize", path, "--partition", "2026-11-03"});
  ASSERT_EQ(o.code, 0) << o.err;
  // The info line names what was left out and why.
  EXPECT_NE(o.err.find("interloper: info: left out: settings"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("regions (partitioned by list(region), not day)"), std::string::npos)
      << o.err;
  EXPECT_EQ(query(data_db(), "SELECT date, total, n FROM shop__revenue"),
            (std::vector<std::string>{"2026-11-03|6.5|2"}));
  EXPECT_EQ(calls(), (std::vector<std::string>{"2026-11-03"}));

  // Without a window, only the unpartitioned asset runs.
  Outcome plain = interloper({"materialize", path});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(query(data_db(), "SELECT k FROM shop__settings"), (std::vector<std::string>{"1"}));

  // A list window runs as one run over both values.
  Outcome regions = interloper({"materialize", path, "--window", "eu..us"});
  ASSERT_EQ(regions.code, 0) << regions.err;
  EXPECT_EQ(query(data_db(), "SELECT region FROM planning__regions ORDER BY region"),
            (std::vector<std::string>{"eu", "us"}));
}

TEST_F(Cli, MultiPartitionWindowNeedsAllowWindow) {
  std::string path = shop_pipeline();
  Outcome o = interloper({"materialize", path, "--window", "2026-11-01..2026-11-03"});
  EXPECT_EQ(o.code, 2);
  expect_one_error_line(o, "asset 'events'");
  EXPECT_NE(o.err.find("asset 'revenue'"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "calls.log"));
}

TEST_F(Cli, FailingCommandExitsWithOneAndQuotesStderr) {
  std::string path = shop_pipeline();
  write("fail.txt", "2026-11-02\n");
  Outcome o = interloper({"materialize", path, "--partition", "2026-11-02"});
  EXPECT_EQ(o.code, 1);
  auto errors = lines_of(o.err);
  std::string error_line;
  for (const auto& line : errors) {
    if (line.rfind("interloper: error: ", 0) == 0) error_line = line;
  }
  EXPECT_NE(error_line.find("exited with status 3"), std::string::npos) << o.err;
  EXPECT_NE(error_line.find("preparing 2026-11-02 | no data for 2026-11-02"), std::string::npos)
      << o.err;
}

TEST_F(Cli, BackfillResumesOnlyFailedPartitions) {
  std::string path = shop_pipeline();
  write("fail.txt", "2026-11-02\n2026-11-04\n");
  Outcome first = interloper({"backfill", path, "--window", "2026-11-01..2026-11-05"});
  EXPECT_EQ(first.code, 1) << first.err;
  // Newest first, one line per finished task when stdout is not a terminal.
  EXPECT_EQ(calls(), (std::vector<std::string>{"2026-11-05", "2026-11-04", "2026-11-03",
                                               "2026-11-02", "2026-11-01"}));
  EXPECT_NE(first.out.find("FAILED    events  2026-11-04"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("canceled  revenue  2026-11-04"), std::string::npos) << first.out;

  Outcome status = interloper(
      {"--json", "status", path, "--window", "2026-11-01..2026-11-05", "--asset", "events"});
  ASSERT_EQ(status.code, 0) << status.err;
  json report = json::parse(status.out);
  EXPECT_EQ(report[0]["materialized"], json({"2026-11-01", "2026-11-03", "2026-11-05"}));
  EXPECT_EQ(report[0]["failed"], json({"2026-11-02", "2026-11-04"}));

  fs::remove(dir_ / "fail.txt");
  fs::remove(dir_ / "calls.log");
  Outcome resumed =
      interloper({"backfill", path, "--window", "2026-11-01..2026-11-05", "--missing"});
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{"2026-11-04", "2026-11-02"}));
  EXPECT_EQ(query(data_db(), "SELECT COUNT(*) FROM shop__revenue"),
            (std::vector<std::string>{"5"}));

  Outcome done = interloper({"status", path, "--window", "2026-11-01..2026-11-05"});
  ASSERT_EQ(done.code, 0) << done.err;
  EXPECT_NE(done.out.find("2026-11-01..2026-11-05"), std::string::npos) << done.out;
}

TEST_F(Cli, AChangedDefinitionMakesItsPartitionsStaleAndMissingRunsThemAndTheirDependents) {
  std::string path = shop_pipeline();
  const std::vector<std::string> window = {"--window", "2026-11-01..2026-11-03"};
  auto backfill = [&](bool missing) {
    std::vector<std::string> args = {"backfill", path, window[0], window[1], "--asset", "events+"};
    if (missing) args.push_back("--missing");
    return interloper(args);
  };
  ASSERT_EQ(backfill(false).code, 0);
  Outcome fresh = backfill(true);
  EXPECT_EQ(fresh.code, 0) << fresh.err;
  EXPECT_NE(fresh.out.find("0 succeeded"), std::string::npos) << fresh.out;

  // The command changes: every events partition is stale, and the revenue reading them too.
  std::string text = read_file(path);
  const std::string before = "command: [./emit.sh, \"{partition.key}\"]";
  ASSERT_NE(text.find(before), std::string::npos);
  text.replace(text.find(before), before.size(),
               "command: [./emit.sh, \"{partition.key}\", extra]");
  write("pipeline.yaml", text);
  Outcome status =
      interloper({"--json", "status", path, window[0], window[1], "--asset", "events"});
  ASSERT_EQ(status.code, 0) << status.err;
  json report = json::parse(status.out);
  EXPECT_EQ(report[0]["stale"], json({"2026-11-01..2026-11-03"})) << status.out;
  EXPECT_EQ(report[0]["materialized"], json({"2026-11-01..2026-11-03"}));
  Outcome text_status = interloper({"status", path, window[0], window[1], "--asset", "events"});
  EXPECT_NE(text_status.out.find("stale           3  2026-11-01..2026-11-03"), std::string::npos)
      << text_status.out;

  fs::remove(dir_ / "calls.log");
  Outcome rerun = backfill(true);
  EXPECT_EQ(rerun.code, 0) << rerun.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{"2026-11-03", "2026-11-02", "2026-11-01"}));
  EXPECT_NE(rerun.out.find("6 succeeded"), std::string::npos) << rerun.out;
  status = interloper({"--json", "status", path, window[0], window[1], "--asset", "events"});
  EXPECT_EQ(json::parse(status.out)[0]["stale"], json::array()) << status.out;

  // A `version:` bump on the SQL asset alone re-runs it, not what it reads.
  text = read_file(path);
  const std::string revenue = "      - name: revenue\n";
  text.insert(text.find(revenue) + revenue.size(), "        version: \"2\"\n");
  write("pipeline.yaml", text);
  fs::remove(dir_ / "calls.log");
  Outcome bumped = backfill(true);
  EXPECT_EQ(bumped.code, 0) << bumped.err;
  EXPECT_FALSE(fs::exists(dir_ / "calls.log"));
  EXPECT_NE(bumped.out.find("3 succeeded"), std::string::npos) << bumped.out;
}

TEST_F(Cli, StatusTextSummarisesLongHistories) {
  std::string path = shop_pipeline();
  std::string failing;
  for (int d = 2; d <= 20; d += 2) failing += fmt::format("2026-11-{:02}\n", d);
  write("fail.txt", failing);
  Outcome run = interloper({"backfill", path, "--window", "2026-11-01..2026-11-20"});
  EXPECT_EQ(run.code, 1) << run.err;
  Outcome brief =
      interloper({"status", path, "--window", "2026-11-01..2026-11-20", "--asset", "events"});
  ASSERT_EQ(brief.code, 0) << brief.err;
  EXPECT_NE(brief.out.find("failed           10  2026-11-02, 2026-11-04, 2026-11-06, "
                           "2026-11-08, 2026-11-10, ... 5 more ranges (--all lists them)"),
            std::string::npos)
      << brief.out;
  EXPECT_EQ(brief.out.find("2026-11-12"), std::string::npos) << brief.out;
  EXPECT_NE(brief.out.find("\n    2026-11-10  command '"), std::string::npos) << brief.out;
  EXPECT_NE(brief.out.find("\n    ... more failures (--all or --json shows every one)\n"),
            std::string::npos)
      << brief.out;
  Outcome all = interloper(
      {"status", path, "--window", "2026-11-01..2026-11-20", "--asset", "events", "--all"});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_NE(all.out.find("2026-11-16, 2026-11-18, 2026-11-20\n"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("more ranges"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("\n    2026-11-20  command '"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("more failures"), std::string::npos) << all.out;
}

TEST_F(Cli, StatusShowsFailuresWithTheirErrors) {
  std::string path = shop_pipeline();
  write("fail.txt", "2026-11-02\n");
  Outcome run = interloper({"backfill", path, "--window", "2026-11-01..2026-11-03"});
  EXPECT_EQ(run.code, 1) << run.err;
  Outcome text =
      interloper({"status", path, "--window", "2026-11-01..2026-11-03", "--asset", "events"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("\n    2026-11-02  command '"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("exited with status 3: preparing 2026-11-02 | no data for 2026-11-02\n"),
            std::string::npos)
      << text.out;
  Outcome js = interloper(
      {"--json", "status", path, "--window", "2026-11-01..2026-11-03", "--asset", "events"});
  ASSERT_EQ(js.code, 0) << js.err;
  json failures = json::parse(js.out)[0]["failures"];
  ASSERT_EQ(failures.size(), 1u) << js.out;
  EXPECT_EQ(failures[0]["partitions"], "2026-11-02");
  EXPECT_NE(failures[0]["error"].get<std::string>().find("no data for 2026-11-02"),
            std::string::npos);
  EXPECT_EQ(failures[0]["run_id"].get<std::string>().rfind("run-", 0), 0u);
}

TEST_F(Cli, RunHistoryAndSummaryEvent) {
  std::string path = shop_pipeline();
  write("fail.txt", "2026-11-02\n");
  Outcome first = interloper(
      {"materialize", path, "--partition", "2026-11-01", "--asset", "events", "--keep-runs", "2"});
  EXPECT_EQ(first.code, 0) << first.err;
  Outcome second = interloper(
      {"--json", "backfill", path, "--window", "2026-11-01..2026-11-03", "--keep-runs", "2"});
  EXPECT_EQ(second.code, 1) << second.err;
  // The last line of --json output sums the run up.
  json summary = json::parse(lines_of(second.out).back());
  EXPECT_EQ(summary["type"], "run_summary");
  EXPECT_EQ(summary["status"], "failed");
  EXPECT_EQ(summary["partitions"], 3);
  EXPECT_EQ(summary["succeeded"], 4);  // tasks: two assets, two days
  EXPECT_EQ(summary["failed"], 1);

  Outcome runs = interloper({"--json", "runs", path});
  ASSERT_EQ(runs.code, 0) << runs.err;
  json history = json::parse(runs.out);
  ASSERT_EQ(history.size(), 2u) << runs.out;
  EXPECT_EQ(history[0]["run_id"], summary["run_id"]);  // newest first
  EXPECT_EQ(history[0]["command_line"],
            "--json backfill " + path + " --window 2026-11-01..2026-11-03 --keep-runs 2");
  EXPECT_EQ(history[0]["window"], "2026-11-01..2026-11-03");
  EXPECT_EQ(history[0]["status"], "failed");
  EXPECT_EQ(history[1]["status"], "succeeded");
  EXPECT_EQ(history[1]["window"], "2026-11-01");
  // The failure in the store names the run it belongs to.
  Outcome status = interloper(
      {"--json", "status", path, "--window", "2026-11-02..2026-11-02", "--asset", "events"});
  EXPECT_EQ(json::parse(status.out)[0]["failures"][0]["run_id"],
            summary["run_id"].get<std::string>());  // a backfill is one run

  // Retention: --keep-runs 2 keeps the newest two.
  Outcome third = interloper(
      {"materialize", path, "--partition", "2026-11-03", "--asset", "events", "--keep-runs", "2"});
  EXPECT_EQ(third.code, 0) << third.err;
  history = json::parse(interloper({"--json", "runs", path}).out);
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[1]["run_id"], summary["run_id"]);
  EXPECT_EQ(json::parse(interloper({"--json", "runs", path, "--last", "1"}).out).size(), 1u);
  Outcome text = interloper({"runs", path});
  EXPECT_NE(text.out.find("succeeded"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("    materialize " + path), std::string::npos) << text.out;
}

TEST_F(Cli, StatusVerifyFindsPartitionsGoneFromTheDestination) {
  std::string path = shop_pipeline();
  Outcome run =
      interloper({"backfill", path, "--window", "2026-11-01..2026-11-04", "--asset", "events"});
  ASSERT_EQ(run.code, 0) << run.err;
  std::vector<std::string> args{"status",  path,     "--window", "2026-11-01..2026-11-04",
                                "--asset", "events", "--verify"};
  Outcome clean = interloper(args);
  EXPECT_EQ(clean.code, 0) << clean.err;
  EXPECT_NE(clean.out.find("  gone              0  -"), std::string::npos) << clean.out;
  // Someone deletes a day behind interloper's back.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(data_db().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DELETE FROM shop__events WHERE date LIKE '2026-11-03%';"
                         "DELETE FROM _interloper_partitions WHERE key = '2026-11-03'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  Outcome found = interloper(args);
  EXPECT_EQ(found.code, 1);
  EXPECT_NE(found.out.find("  gone              1  2026-11-03"), std::string::npos) << found.out;
  EXPECT_NE(found.err.find("gone from the destination"), std::string::npos) << found.err;
  EXPECT_NE(found.err.find("rebuild them with backfill --window or materialize --partition"),
            std::string::npos)
      << found.err;
  args.insert(args.begin(), "--json");
  Outcome js = interloper(args);
  EXPECT_EQ(js.code, 1);
  EXPECT_EQ(json::parse(js.out)[0]["gone"], json({"2026-11-03"}));
}

TEST_F(Cli, StatusVerifyFindsAFileOverwrittenBehindItsBack) {
  std::string path = pipeline(
      "destination: file:out?format=jsonl\n"
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: events\n"
      "        partitioning: {kind: time, column: date, granularity: day}\n"
      "        command: [/bin/sh, -c, 'echo \"{{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\","
      "\\\"n\\\":1}}\"']\n");
  Outcome run = interloper({"backfill", path, "--window", "2026-11-01..2026-11-03"});
  ASSERT_EQ(run.code, 0) << run.err;
  std::vector<std::string> args{"status", path, "--window", "2026-11-01..2026-11-03", "--verify"};
  Outcome clean = interloper(args);
  EXPECT_EQ(clean.code, 0) << clean.out << clean.err;
  EXPECT_NE(clean.out.find("  changed           0  -"), std::string::npos) << clean.out;
  // Someone rewrites a day's file behind interloper's back.
  const fs::path file = dir_ / "out/shop/events/date=2026-11-02/data.jsonl";
  ASSERT_TRUE(fs::exists(file));
  std::ofstream(file, std::ios::trunc) << "{\"date\":\"2026-11-02\",\"n\":1000}\n";
  Outcome found = interloper(args);
  EXPECT_EQ(found.code, 1) << found.out;
  EXPECT_NE(found.out.find("  changed           1  2026-11-02"), std::string::npos) << found.out;
  EXPECT_NE(found.out.find(file.string() + ": size "), std::string::npos) << found.out;
  EXPECT_NE(found.out.find("  gone              0  -"), std::string::npos) << found.out;
  EXPECT_NE(found.err.find("changed in the destination since they were written"), std::string::npos)
      << found.err;
  args.insert(args.begin(), "--json");
  Outcome js = interloper(args);
  EXPECT_EQ(js.code, 1);
  const json changed = json::parse(js.out)[0]["changed"];
  ASSERT_EQ(changed.size(), 1u) << js.out;
  EXPECT_EQ(changed[0]["partition"], "2026-11-02");
  EXPECT_EQ(changed[0]["object"], file.string());
  // The store still records the day, so --missing passes it by, as the error says.
  EXPECT_NE(found.err.find("backfill --missing skips them"), std::string::npos) << found.err;
  Outcome missing =
      interloper({"backfill", path, "--window", "2026-11-01..2026-11-03", "--missing"});
  EXPECT_NE(missing.out.find("0 succeeded, 0 failed, 0 canceled, 3 skipped"), std::string::npos)
      << missing.out;
  EXPECT_EQ(interloper(args).code, 1);
  // Running the day again makes it whole.
  ASSERT_EQ(interloper({"materialize", path, "--partition", "2026-11-02"}).code, 0);
  EXPECT_EQ(interloper(args).code, 0);
}

TEST_F(Cli, ResetDropsAnAssetSoANewTypeCanBeWritten) {
  // Emits the value in value.txt for the day it runs.
  write("emit.sh",
        "#!/bin/sh\n"
        "echo \"{\\\"date\\\":\\\"$1\\\",\\\"v\\\":$(cat value.txt)}\"\n",
        true);
  write("value.txt", "1\n");
  std::string path = pipeline(
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: labels\n"
      "        partitioning: {kind: time, column: date, granularity: day}\n"
      "        command: [./emit.sh, \"{partition.key}\"]\n");
  const std::string window = "2026-11-01..2026-11-03";
  ASSERT_EQ(interloper({"backfill", path, "--window", window}).code, 0);
  write("value.txt", "\"v2\"\n");
  Outcome clash = interloper({"materialize", path, "--partition", "2026-11-02"});
  EXPECT_EQ(clash.code, 1);
  EXPECT_NE(clash.err.find("interloper reset PIPELINE labels"), std::string::npos) << clash.err;

  // Without a terminal, nothing is dropped without --yes.
  Outcome refused = interloper({"reset", path, "labels"});
  EXPECT_EQ(refused.code, 2);
  expect_one_error_line(refused, "pass --yes");
  EXPECT_EQ(query(data_db(), "SELECT COUNT(*) FROM shop__labels"), std::vector<std::string>{"3"});
  expect_one_error_line(interloper({"reset", path, "nothing", "--yes"}), "unknown asset 'nothing'");

  // One day: its rows and its record go, the others stay.
  Outcome one = interloper({"reset", path, "labels", "--window", "2026-11-02", "--yes"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(query(data_db(), "SELECT COUNT(*) FROM shop__labels"), std::vector<std::string>{"2"});
  Outcome status = interloper({"--json", "status", path, "--window", window});
  ASSERT_EQ(status.code, 0) << status.err;
  json entry = json::parse(status.out)[0];
  EXPECT_EQ(entry["materialized"], json({"2026-11-01", "2026-11-03"})) << status.out;
  EXPECT_EQ(entry["missing"], json({"2026-11-02"})) << status.out;

  // The whole dataset: the new type is written, every partition rebuilt.
  Outcome whole = interloper({"--json", "reset", path, "labels", "--yes"});
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_EQ(json::parse(whole.out)["window"], nullptr);
  EXPECT_EQ(query(data_db(), "SELECT COUNT(*) FROM _interloper_partitions"),
            std::vector<std::string>{"0"});
  Outcome rebuilt = interloper({"backfill", path, "--window", window, "--missing"});
  ASSERT_EQ(rebuilt.code, 0) << rebuilt.err;
  EXPECT_EQ(query(data_db(), "SELECT v FROM shop__labels"),
            (std::vector<std::string>{"v2", "v2", "v2"}));
}

// A daily command asset that logs each key it runs to calls.log and takes a while.
std::string slow_pipeline_text() {
  return "sources:\n"
         "  - name: shop\n"
         "    assets:\n"
         "      - name: slow\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        command: [./slow.sh, \"{partition.key}\"]\n";
}

TEST_F(Cli, TwoBackfillsOverOneStoreRunEachPartitionOnce) {
  write("slow.sh",
        "#!/bin/sh\n"
        "echo \"$1\" >> calls.log\n"
        "sleep 0.3\n"
        "echo \"{\\\"date\\\":\\\"$1\\\"}\"\n",
        true);
  std::string path = pipeline(slow_pipeline_text());
  std::vector<std::string> args{"backfill", path, "--window", "2026-11-01..2026-11-12",
                                "--missing"};
  Outcome a;
  Outcome b;
  std::thread other([&] { b = interloper(args); });
  a = interloper(args);
  other.join();
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(b.code, 0) << b.err;
  std::vector<std::string> ran = calls();
  std::set<std::string> distinct(ran.begin(), ran.end());
  EXPECT_EQ(ran.size(), 12u) << a.out << b.out;
  EXPECT_EQ(distinct.size(), 12u);
  // They ran side by side, each skipping what the other held.
  EXPECT_TRUE(a.out.find("claimed by another run") != std::string::npos ||
              b.out.find("claimed by another run") != std::string::npos)
      << a.out << b.out;
  Outcome status = interloper({"--json", "status", path, "--window", "2026-11-01..2026-11-12"});
  EXPECT_EQ(json::parse(status.out)[0]["materialized"], json({"2026-11-01..2026-11-12"}));
}

// The slow pipeline over the default SQLite store, or over a PostgreSQL store of its own.
std::string slow_pipeline_text(bool postgres_store) {
  if (!postgres_store) return slow_pipeline_text();
  static std::atomic<int> counter{0};
  return "store: ${IL_TEST_POSTGRES_URL}?schema=il_claims_" + std::to_string(::getpid()) + "_" +
         std::to_string(++counter) + "\n" + slow_pipeline_text();
}

class CliClaims : public Cli, public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() != "postgres") return;
    IL_REQUIRE_POSTGRES(url);
    (void)url;
  }
  std::string pipeline_text() { return slow_pipeline_text(GetParam() == "postgres"); }
};

INSTANTIATE_TEST_SUITE_P(Stores, CliClaims, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST_P(CliClaims, ClaimsOfAKilledBackfillAreTakenOverAtOnce) {
  // The first run of the partition kills the backfill running it (as a crash would).
  write("slow.sh",
        "#!/bin/sh\n"
        "echo \"$1\" >> calls.log\n"
        "if [ -f crash.txt ]; then rm crash.txt; kill -9 $PPID; exit 1; fi\n"
        "echo \"{\\\"date\\\":\\\"$1\\\"}\"\n",
        true);
  write("crash.txt", "");
  std::string path = pipeline(pipeline_text());
  std::vector<std::string> args{"backfill", path, "--window", "2026-11-01..2026-11-01",
                                "--missing"};
  Outcome crashed = interloper(args);
  EXPECT_EQ(crashed.code, 128 + SIGKILL) << crashed.err;
  ASSERT_EQ(calls().size(), 1u);

  // Right after, within the lease (60 seconds), the next run takes the dead run's claim over.
  Outcome next = interloper(args);
  EXPECT_EQ(next.code, 0) << next.err;
  EXPECT_NE(next.out.find("1 task, 1 succeeded"), std::string::npos) << next.out;
  EXPECT_EQ(calls().size(), 2u);
}

TEST_P(CliClaims, ALiveOwnersClaimHoldsAndTheMessageSaysItIsAlive) {
  write("slow.sh",
        "#!/bin/sh\n"
        "echo \"$1\" >> calls.log\n"
        "while [ ! -f go.txt ]; do sleep 0.05; done\n"
        "echo \"{\\\"date\\\":\\\"$1\\\"}\"\n",
        true);
  std::string path = pipeline(pipeline_text());
  std::vector<std::string> args{"backfill", path, "--window", "2026-11-01..2026-11-01",
                                "--missing"};
  Outcome first;
  std::thread running([&] { first = interloper(args); });
  for (int i = 0; i < 400 && calls().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  Outcome second = interloper(args);
  write("go.txt", "");
  running.join();
  EXPECT_EQ(second.code, 0) << second.err;
  EXPECT_NE(second.out.find("1 claimed by another run"), std::string::npos) << second.out;
  const std::string alive = GetParam() == "postgres"
                                ? "its session with the store's server (server process "
                                : "is running";
  EXPECT_NE(second.out.find(alive), std::string::npos) << second.out;
  EXPECT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(calls().size(), 1u);
}

TEST_F(Cli, SqlParametersAreBoundNotSpliced) {
  std::string path = pipeline(
      "sources:\n"
      "  - name: crm\n"
      "    assets:\n"
      "      - name: customers\n"
      "        partitioning: {kind: list, column: name, values: [\"o'brien\", \"x\\\"y\", zed], "
      "allow_window: true}\n"
      "        sql: SELECT :window_start AS name, :window_end AS last_key, "
      "'literal '':bounds_start''' AS note\n"
      "      - name: days\n"
      "        partitioning: {kind: time, column: date, granularity: hour}\n"
      "        sql: SELECT :bounds_start AS date, :bounds_end AS until, :partition_key AS k\n");
  Outcome one = interloper({"materialize", path, "--asset", "customers", "--partition", "o'brien"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_EQ(query(data_db(), "SELECT name, last_key, note FROM crm__customers"),
            (std::vector<std::string>{"o'brien|o'brien|literal ':bounds_start'"}));
  Outcome hour = interloper({"materialize", path, "--partition", "2026-11-03T13"});
  ASSERT_EQ(hour.code, 0) << hour.err;
  EXPECT_EQ(query(data_db(), "SELECT until, k FROM crm__days"),
            (std::vector<std::string>{"2026-11-03T14:00:00|2026-11-03T13"}));
}

// Each dependency's CTE holds what load() would return, so a rollup needs no bounds filter of
// its own; NAME__all still reaches every row.
TEST_F(Cli, SqlDependenciesHoldTheRunsPartitionsAcrossGranularities) {
  write("hit.sh", "#!/bin/sh\necho \"{\\\"hour\\\":\\\"$IL_BOUNDS_START\\\",\\\"n\\\":1}\"\n",
        true);
  std::string path = pipeline(
      "sources:\n"
      "  - name: web\n"
      "    assets:\n"
      "      - name: hits\n"
      "        partitioning: {kind: time, column: hour, granularity: hour}\n"
      "        command: [./hit.sh]\n"
      "      - name: daily\n"
      "        deps: [hits]\n"
      "        partitioning: {kind: time, column: day, granularity: day}\n"
      "        sql: SELECT :partition_key AS day, SUM(n) AS n FROM hits\n"
      "      - name: monthly\n"
      "        deps: [daily]\n"
      "        partitioning: {kind: time, column: month, granularity: month}\n"
      "        require_upstream: false\n"
      "        sql: |\n"
      "          SELECT :bounds_start AS month, SUM(n) AS n, COUNT(*) AS days,\n"
      "                 (SELECT COUNT(*) FROM daily__all) AS stored FROM daily\n");
  Outcome first = interloper({"backfill", path, "--window", "2026-10-31T00..2026-11-02T23"});
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(query(data_db(), "SELECT day, n FROM web__daily ORDER BY day"),
            (std::vector<std::string>{"2026-10-31|24", "2026-11-01|24", "2026-11-02|24"}));
  EXPECT_EQ(query(data_db(), "SELECT month, n, days FROM web__monthly ORDER BY month"),
            (std::vector<std::string>{"2026-10-01|24|1", "2026-11-01|48|2"}));
  // status reads any window in each asset's own granularity.
  Outcome status = interloper({"status", path, "--window", "2026-11-02"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("hits  2026-11-02T00..2026-11-02T23  (24 partitions)"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("monthly  2026-11  (1 partition)"), std::string::npos) << status.out;
  // dbt-style selectors: daily+ is daily and what reads it, +daily daily and what it reads.
  Outcome down = interloper(
      {"backfill", path, "--dry-run", "--asset", "daily+", "--window", "2026-11-01..2026-11-02"});
  ASSERT_EQ(down.code, 0) << down.err;
  EXPECT_EQ(down.out.find("hits  ["), std::string::npos) << down.out;
  EXPECT_NE(down.out.find("monthly  ["), std::string::npos) << down.out;
  Outcome up = interloper(
      {"backfill", path, "--dry-run", "--asset", "+daily", "--window", "2026-11-01..2026-11-02"});
  ASSERT_EQ(up.code, 0) << up.err;
  EXPECT_NE(up.out.find("hits  ["), std::string::npos) << up.out;
  EXPECT_EQ(up.out.find("monthly  ["), std::string::npos) << up.out;
  Outcome unknown = interloper({"check", path, "--asset", "+nope"});
  EXPECT_EQ(unknown.code, 2);
  expect_one_error_line(unknown, "unknown asset 'nope' in --asset '+nope'");
  // October has one day of 31 stored: monthly opts out of require_upstream and reads it.
  Outcome again = interloper({"materialize", path, "--asset", "monthly", "--partition", "2026-10"});
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(query(data_db(), "SELECT stored FROM web__monthly WHERE month = '2026-10-01'"),
            (std::vector<std::string>{"3"}));
}

// A store that cannot be reached is bad input found before anything runs, and its password
// never reaches the terminal.
TEST_F(Cli, AnUnreachableStoreExitsTwoWithoutItsPassword) {
  std::string path = pipeline(
      "store: postgresql://u:s3cret@127.0.0.1:1/db?connect_timeout=2\n"
      "sources:\n"
      "  - name: s\n"
      "    assets:\n"
      "      - name: a\n"
      "        command: [/bin/echo, '{{\"x\":1}}']\n");
  for (const auto& command : {"materialize", "status", "runs"}) {
    Outcome o = interloper({command, path});
    EXPECT_EQ(o.code, 2) << command << ": " << o.err;
    expect_one_error_line(o, "the store cannot be opened");
    EXPECT_EQ(o.err.find("s3cret"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("u:***@127.0.0.1:1"), std::string::npos) << o.err;
  }
}

TEST_F(Cli, ListValuesStayInsideTheFileDestination) {
  std::string path = pipeline(
      "destination: file:out?format=jsonl\n"
      "sources:\n"
      "  - name: s\n"
      "    assets:\n"
      "      - name: tricky\n"
      "        partitioning: {kind: list, column: v, values: [\"a/b\", \"/up\", \"~/x\", "
      "\"%2e\"]}\n"
      "        command: [/bin/sh, -c, 'printf \"{{\\\"v\\\":\\\"%s\\\"}}\\n\" "
      "\"$IL_PARTITION_KEY\"']\n");
  // ".." in a value is refused at load; "/" and "%" must still not escape the directory.
  for (const std::string key : {"a/b", "/up", "~/x", "%2e"}) {
    Outcome o = interloper({"materialize", path, "--partition", key});
    ASSERT_EQ(o.code, 0) << key << ": " << o.err;
  }
  std::size_t files = 0;
  fs::path root = fs::canonical(dir_ / "out");
  for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
    if (!entry.is_regular_file() || entry.path().filename() != "data.jsonl") continue;
    ++files;
    fs::path file = fs::canonical(entry.path());
    EXPECT_EQ(file.string().rfind(root.string() + "/", 0), 0u) << file;
  }
  EXPECT_EQ(files, 4u);
  Outcome status = interloper({"--json", "status", path});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_EQ(json::parse(status.out)[0]["materialized"], json({"a/b..%2e"}));
}

TEST_F(Cli, JsonEventsAreJsonLines) {
  std::string path = shop_pipeline();
  Outcome o = interloper({"materialize", path, "--partition", "2026-11-03", "--json"});
  ASSERT_EQ(o.code, 0) << o.err;
  auto lines = lines_of(o.out);
  ASSERT_FALSE(lines.empty());
  std::set<std::string> types;
  for (const auto& line : lines) {
    json event = json::parse(line);  // throws (fails the test) on anything else
    types.insert(event["type"].get<std::string>());
  }
  EXPECT_TRUE(types.count("run_started")) << o.out;
  EXPECT_TRUE(types.count("asset_completed")) << o.out;
}

TEST_F(Cli, CheckPrintsTheExactPlan) {
  std::string path = shop_pipeline();
  // events lacks allow_window: materialize refuses the window, backfill runs it.
  Outcome o = interloper({"check", path, "--window", "2026-11-01..2026-11-02", "--json"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(json::parse(o.out)["command"], "backfill") << o.out;

  Outcome one = interloper({"check", path, "--partition", "2026-11-01", "--json"});
  ASSERT_EQ(one.code, 0) << one.err;
  json plan = json::parse(one.out);
  EXPECT_EQ(plan["window"], "2026-11-01");
  EXPECT_EQ(plan["partitions"], 1);
  EXPECT_EQ(plan["tasks"], 2);
  ASSERT_EQ(plan["assets"].size(), 2u);
  EXPECT_EQ(plan["assets"][0]["windows"], json({"2026-11-01"}));
  EXPECT_EQ(plan["assets"][0]["name"], "events");
  EXPECT_EQ(plan["assets"][1]["name"], "revenue");
  EXPECT_EQ(plan["assets"][1]["body"], "sql");
  EXPECT_EQ(plan["left_out"].size(), 2u);
  EXPECT_FALSE(fs::exists(dir_ / ".interloper")) << "check must not create state";

  Outcome text = interloper({"check", path});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("ok: 4 assets"), std::string::npos) << text.out;
}

TEST_F(Cli, BackfillDryRunPlansNewestFirstWithoutRunning) {
  std::string path = shop_pipeline();
  Outcome o =
      interloper({"--json", "backfill", path, "--window", "2026-11-01..2026-11-03", "--dry-run"});
  ASSERT_EQ(o.code, 0) << o.err;
  json plan = json::parse(o.out);
  EXPECT_EQ(plan["order"], "newest first");
  EXPECT_EQ(plan["partitions"], 3);
  EXPECT_EQ(plan["tasks"], 6);  // events and revenue, one task per day each
  ASSERT_EQ(plan["assets"].size(), 2u);
  EXPECT_EQ(plan["assets"][0]["windows"], json({"2026-11-01..2026-11-03"}));
  EXPECT_EQ(plan["assets"][0]["tasks"], 3);
  EXPECT_FALSE(fs::exists(dir_ / "calls.log"));

  Outcome text = interloper({"backfill", path, "--window", "2026-11-01..2026-11-03", "--dry-run"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("tasks: 6, one per asset and partition, newest first"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("1. events  [day, command]  2026-11-01..2026-11-03  3 tasks"),
            std::string::npos)
      << text.out;
}

TEST_F(Cli, BackfillMissingDryRunCountsOnlyWhatWouldRun) {
  std::string path = shop_pipeline();
  ASSERT_EQ(interloper({"backfill", path, "--window", "2026-11-01..2026-11-02"}).code, 0);
  const std::vector<std::string> ran = calls();
  Outcome o = interloper(
      {"--json", "backfill", path, "--window", "2026-11-01..2026-11-03", "--missing", "--dry-run"});
  ASSERT_EQ(o.code, 0) << o.err;
  json plan = json::parse(o.out);
  EXPECT_EQ(plan["tasks"], 6);
  EXPECT_EQ(plan["to_run"], 2);  // the third day of events and of revenue
  EXPECT_EQ(plan["up_to_date"], 4);
  EXPECT_EQ(plan["assets"][0]["up_to_date"], 2);
  EXPECT_EQ(calls(), ran);  // nothing ran

  Outcome text = interloper(
      {"backfill", path, "--window", "2026-11-01..2026-11-03", "--missing", "--dry-run"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("tasks: 2 to run, 4 of 6 up to date (--missing), newest first"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("3 tasks, 2 up to date"), std::string::npos) << text.out;
}

TEST_F(Cli, CatalogShowsDefinitionsAndSchemas) {
  std::string path = shop_pipeline();
  ASSERT_EQ(interloper({"materialize", path, "--partition", "2026-11-03"}).code, 0);
  Outcome o = interloper({"catalog", path});
  ASSERT_EQ(o.code, 0) << o.err;
  json catalog = json::parse(o.out);
  ASSERT_EQ(catalog.size(), 4u);
  EXPECT_EQ(catalog[0]["name"], "events");
  EXPECT_EQ(catalog[0]["body"], "command");
  EXPECT_EQ(catalog[0]["partitioning"]["granularity"], "day");
  EXPECT_FALSE(catalog[0]["schema"].is_null());
  EXPECT_EQ(catalog[1]["deps"], json({"events"}));
  EXPECT_TRUE(catalog[3]["schema"].is_null()) << "regions was never written";
}

// Materializes a daily asset that renames its column `old` to `renamed` between two
// partitions on `destination`, and checks what the catalog says of its columns, before and
// after a reset.
void expect_retired_columns_in_catalog(const std::string& path, const fs::path& dir) {
  ASSERT_EQ(interloper({"--quiet", "materialize", path, "--partition", "2026-11-01"}).code, 0);
  std::ofstream(dir / "renamed") << "";
  ASSERT_EQ(interloper({"--quiet", "materialize", path, "--partition", "2026-11-02"}).code, 0);
  Outcome o = interloper({"catalog", path});
  ASSERT_EQ(o.code, 0) << o.err;
  json entry = json::parse(o.out)[0];
  ASSERT_EQ(entry["schema"].size(), 3u) << entry.dump();
  EXPECT_EQ(entry["schema"][1]["name"], "old");
  EXPECT_EQ(entry["retired_columns"], json({"old"}));
  Outcome text = interloper({"catalog", path, "--text"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("    old      int  (retired: the latest write did not produce it)\n"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("    renamed  int\n"), std::string::npos) << text.out;
  // Written again by a later run, a partition of before keeps only what the asset produces now.
  ASSERT_EQ(interloper({"--quiet", "materialize", path, "--partition", "2026-11-01"}).code, 0);
  EXPECT_EQ(json::parse(interloper({"catalog", path}).out)[0]["retired_columns"], json({"old"}));

  ASSERT_EQ(interloper({"--quiet", "reset", path, "events", "--yes"}).code, 0);
  entry = json::parse(interloper({"catalog", path}).out)[0];
  EXPECT_TRUE(entry["schema"].is_null()) << entry.dump();
  EXPECT_EQ(entry["retired_columns"], json::array());
  ASSERT_EQ(interloper({"--quiet", "materialize", path, "--partition", "2026-11-03"}).code, 0);
  entry = json::parse(interloper({"catalog", path}).out)[0];
  EXPECT_EQ(entry["schema"].size(), 2u) << entry.dump();
  EXPECT_EQ(entry["retired_columns"], json::array());
}

std::string renaming_pipeline(const std::string& destination) {
  return "destination: " + destination +
         "\n"
         "sources:\n"
         "  - name: shop\n"
         "    assets:\n"
         "      - name: events\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        command: [/bin/sh, -c, 'if [ -f renamed ]; then c=renamed; else c=old; fi; "
         "echo \"{{\\\"date\\\":\\\"$0\\\",\\\"$c\\\":1}}\"', '{partition.key}']\n";
}

TEST_F(Cli, CatalogNamesColumnsTheLatestWriteDidNotProduceOnSqlite) {
  std::string path = pipeline(renaming_pipeline("sqlite://" + data_db().string()));
  expect_retired_columns_in_catalog(path, dir_);
}

TEST_F(Cli, CatalogNamesColumnsTheLatestWriteDidNotProduceOnFiles) {
  std::string path = pipeline(renaming_pipeline("file://" + (dir_ / "files").string()));
  expect_retired_columns_in_catalog(path, dir_);
  EXPECT_FALSE(fs::exists(dir_ / "files" / "shop" / "events" / "_retired.json"));
}

TEST_F(Cli, ExplicitAssetsAreValidatedStrictly) {
  std::string path = shop_pipeline();
  Outcome o = interloper({"materialize", path, "--partition", "2026-11-03", "--asset", "events",
                          "--asset", "regions"});
  EXPECT_EQ(o.code, 2);
  expect_one_error_line(o, "asset 'regions'");
}

TEST_F(Cli, CommandTimeoutFailsTheAsset) {
  std::string path = pipeline(
      "sources:\n"
      "  - name: s\n"
      "    assets:\n"
      "      - name: slow\n"
      "        command: [/bin/sleep, '30']\n"
      "        timeout: 0.3\n");
  Outcome o = interloper({"materialize", path});
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("timed out after 0.3s"), std::string::npos) << o.err;
}

// Runs `sql` on the warehouse file as another program would.
void exec_sql(const fs::path& db, const std::string& sql) {
  fs::create_directories(db.parent_path());
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(handle);
  sqlite3_close(handle);
}

TEST_F(Cli, AForeignTableIsRefusedUnlessTheAssetAdoptsIt) {
  write("emit.sh", "#!/bin/sh\necho \"{\\\"date\\\":\\\"$1\\\",\\\"n\\\":7}\"\n", true);
  const std::string text =
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: events\n"
      "        partitioning: {kind: time, column: date, granularity: day}\n"
      "        command: [./emit.sh, \"{partition.key}\"]\n";
  exec_sql(data_db(),
           "CREATE TABLE shop__events (date DATE, n INTEGER);"
           "INSERT INTO shop__events VALUES ('2026-11-02', 1), ('2026-11-03', 2)");
  std::string path = pipeline(text);
  Outcome refused = interloper({"materialize", path, "--partition", "2026-11-03"});
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("table 'shop__events' exists but was not created by interloper"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(query(data_db(), "SELECT date, n FROM shop__events ORDER BY date"),
            (std::vector<std::string>{"2026-11-02|1", "2026-11-03|2"}));

  pipeline(text + "        adopt: true\n");
  Outcome adopted = interloper({"materialize", path, "--partition", "2026-11-03"});
  ASSERT_EQ(adopted.code, 0) << adopted.err;
  EXPECT_EQ(query(data_db(), "SELECT date, n FROM shop__events ORDER BY date"),
            (std::vector<std::string>{"2026-11-02|1", "2026-11-03|7"}));
}

TEST_F(Cli, ADownstreamOfMissingUpstreamPartitionsFails) {
  std::string path = shop_pipeline();
  Outcome o = interloper({"materialize", path, "--partition", "2026-11-03", "--asset", "revenue"});
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("upstream 'events': 1 of 1 partitions missing"), std::string::npos) << o.err;
  Outcome status =
      interloper({"--json", "status", path, "--asset", "revenue", "--window", "2026-11-03"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_EQ(json::parse(status.out)[0]["materialized"], json::array()) << status.out;

  // Materialized, the upstream is read.
  ASSERT_EQ(
      interloper({"materialize", path, "--partition", "2026-11-03", "--asset", "events"}).code, 0);
  Outcome after =
      interloper({"materialize", path, "--partition", "2026-11-03", "--asset", "revenue"});
  ASSERT_EQ(after.code, 0) << after.err;
  EXPECT_EQ(query(data_db(), "SELECT date, total FROM shop__revenue"),
            (std::vector<std::string>{"2026-11-03|6.5"}));
}

TEST_F(Cli, RequireUpstreamFalseReadsWhatIsStored) {
  std::string text = read_file(shop_pipeline());
  const std::string anchor = "      - name: revenue\n";
  text.insert(text.find(anchor) + anchor.size(), "        require_upstream: false\n");
  std::string path = pipeline(text);
  ASSERT_EQ(
      interloper({"materialize", path, "--partition", "2026-11-02", "--asset", "events"}).code, 0);
  Outcome o = interloper({"materialize", path, "--partition", "2026-11-03", "--asset", "revenue"});
  ASSERT_EQ(o.code, 0) << o.err;
}

TEST_F(Cli, LookbackCoversTheLastPartitions) {
  std::string path = shop_pipeline();
  Outcome o = interloper(
      {"--json", "materialize", path, "--asset", "events", "--lookback", "1", "--dry-run"});
  ASSERT_EQ(o.code, 0) << o.err;
  json plan = json::parse(o.out);
  EXPECT_EQ(plan["partitions"].size(), 1u);
}

}  // namespace
