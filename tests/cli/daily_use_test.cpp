// End-to-end tests of the built `interloper` binary on what people type every day: selectors,
// windows read by each kind of asset, check against backfill, and what the commands print.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using interloper::testing::Outcome;
using interloper::testing::query;

Outcome interloper(std::vector<std::string> args) {
  return interloper::testing::run_interloper(std::move(args));
}

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// The tasks `backfill --dry-run` plans over a window.
json backfill_tasks(const std::string& path, const std::vector<std::string>& window) {
  Outcome o = interloper({"--json", "backfill", path, window[0], window[1], "--dry-run"});
  return o.code == 0 ? json::parse(o.out)["tasks"] : json();
}

class DailyUse : public ::testing::Test {
 protected:
  // A daily command asset, a monthly sql aggregate of it, an unpartitioned sql summary of it,
  // a yearly command asset, an unpartitioned command asset, and a list asset whose values
  // include "2026".
  std::string pipeline() {
    return temp_
        .write("pipeline.yaml",
               "sources:\n"
               "  - name: shop\n"
               "    assets:\n"
               "      - name: events\n"
               "        partitioning: {kind: time, column: date, granularity: day}\n"
               "        command: [/bin/sh, -c, 'echo \"{\\\"date\\\":\\\"$1\\\",\\\"n\\\":1}\"', "
               "x, \"{partition.key}\"]\n"
               "      - name: monthly\n"
               "        deps: [events]\n"
               "        partitioning: {kind: time, column: date, granularity: month, "
               "allow_window: true}\n"
               "        sql: SELECT date, n FROM events\n"
               "      - name: summary\n"
               "        deps: [monthly]\n"
               "        sql: SELECT COUNT(*) AS n FROM monthly\n"
               "      - name: yearly\n"
               "        partitioning: {kind: time, column: day, granularity: year}\n"
               "        command: [/bin/sh, -c, 'echo \"{\\\"day\\\":\\\"$1-01-01\\\"}\"', x, "
               "\"{partition.key}\"]\n"
               "      - name: settings\n"
               "        command: [/bin/echo, '{\"k\":1}']\n"
               "  - name: planning\n"
               "    assets:\n"
               "      - name: regions\n"
               "        partitioning: {kind: list, column: region, values: [\"2026\", emea, "
               "Q1]}\n"
               "        command: [/bin/sh, -c, 'echo \"{\\\"region\\\":\\\"$1\\\"}\"', x, "
               "\"{partition.key}\"]\n")
        .string();
  }
  fs::path data_db() const { return temp_.path() / ".interloper" / "data.db"; }

  interloper::testing::TempDir temp_{"il_daily"};
};

TEST_F(DailyUse, StarSelectsEveryAsset) {
  const std::string path = pipeline();
  Outcome o = interloper({"--json", "materialize", path, "--asset", "*", "--dry-run"});
  // Every asset is named, so every one is validated: the partitioned ones need a window.
  EXPECT_EQ(o.code, 2);
  for (const char* name : {"events", "monthly", "yearly", "regions"}) {
    EXPECT_TRUE(contains(o.err, fmt::format("asset '{}'", name))) << o.err;
  }
  Outcome star = interloper({"--json", "backfill", path, "--asset", "*", "--asset", "events",
                             "--window", "2026-11-01..2026-11-02", "--dry-run"});
  EXPECT_EQ(star.code, 2) << "the list asset refuses a day window: " << star.err;
  EXPECT_TRUE(contains(star.err, "asset 'regions'")) << star.err;
  EXPECT_FALSE(contains(star.err, "unknown asset")) << star.err;

  // Where every asset takes the window, '*' runs them all, the unpartitioned one included.
  const std::string days =
      temp_
          .write("days.yaml",
                 "sources:\n"
                 "  - name: shop\n"
                 "    assets:\n"
                 "      - name: events\n"
                 "        partitioning: {kind: time, column: date, granularity: day}\n"
                 "        command: [/bin/echo, '{{\"date\":\"{partition.key}\"}}']\n"
                 "      - name: total\n"
                 "        deps: [events]\n"
                 "        sql: SELECT COUNT(*) AS n FROM events\n")
          .string();
  Outcome all =
      interloper({"backfill", days, "--asset", "*", "--window", "2026-11-01..2026-11-02"});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_EQ(query(data_db(), "SELECT n FROM shop__total"), std::vector<std::string>{"2"});
}

TEST_F(DailyUse, TagSelectorsAreRefusedAsUnsupported) {
  Outcome o = interloper({"materialize", pipeline(), "--asset", "tag:nightly"});
  EXPECT_EQ(o.code, 2);
  EXPECT_TRUE(contains(o.err, "--asset 'tag:nightly': selecting by tag is not supported")) << o.err;
}

TEST_F(DailyUse, AnUnpartitionedAssetDownstreamOfTheWindowIsNamedWithItsCommand) {
  const std::string path = pipeline();
  Outcome o = interloper({"backfill", path, "--window", "2026-11-01..2026-11-02", "--dry-run"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.err,
                       "summary reads what this run writes: refresh it afterwards with "
                       "interloper materialize " +
                           path + " --asset summary"))
      << o.err;
  // settings reads nothing the run writes: it is only left out.
  EXPECT_FALSE(contains(o.err, "--asset settings")) << o.err;

  // Named assets too: summary is not among them, and reads monthly.
  Outcome named = interloper(
      {"backfill", path, "--window", "2026-11-01..2026-11-02", "--asset", "monthly", "--dry-run"});
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_TRUE(contains(named.err, "--asset summary")) << named.err;

  // Selected with monthly+, it runs in the backfill: nothing to refresh.
  Outcome chosen = interloper(
      {"backfill", path, "--window", "2026-11-01..2026-11-02", "--asset", "events+", "--dry-run"});
  ASSERT_EQ(chosen.code, 0) << chosen.err;
  EXPECT_FALSE(contains(chosen.err, "refresh")) << chosen.err;

  // Without a window, nothing is refreshed later: no such line.
  Outcome plain = interloper({"materialize", path, "--dry-run"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_FALSE(contains(plain.err, "refresh")) << plain.err;
}

TEST_F(DailyUse, CheckAcceptsTheWindowsBackfillRunsAndSaysSo) {
  const std::string path = pipeline();
  const std::vector<std::string> window = {"--window", "2026-11-01..2026-11-03"};
  // events has no allow_window: materialize refuses three days at once, backfill runs them.
  Outcome materialize = interloper({"materialize", path, window[0], window[1], "--dry-run"});
  EXPECT_EQ(materialize.code, 2) << materialize.err;
  Outcome backfill = interloper({"backfill", path, window[0], window[1], "--dry-run"});
  ASSERT_EQ(backfill.code, 0) << backfill.err;

  Outcome check = interloper({"check", path, window[0], window[1]});
  ASSERT_EQ(check.code, 0) << check.err;
  EXPECT_EQ(
      check.out.rfind("ok for backfill (materialize refuses this window: asset 'events': ", 0), 0u)
      << check.out;
  EXPECT_TRUE(contains(check.out, "tasks: 5, one per asset and partition, newest first"))
      << check.out;

  Outcome as_json = interloper({"--json", "check", path, window[0], window[1]});
  ASSERT_EQ(as_json.code, 0) << as_json.err;
  const json plan = json::parse(as_json.out);
  EXPECT_EQ(plan["command"], "backfill");
  EXPECT_EQ(plan["tasks"], backfill_tasks(path, window));
  EXPECT_TRUE(contains(plan["materialize_refuses"].get<std::string>(), "allow_window is off"));

  // A window both refuse is still an error; a quiet check says nothing and exits 0 otherwise.
  Outcome neither =
      interloper({"check", path, "--window", "2026-11-01..2026-11-02", "--asset", "regions"});
  EXPECT_EQ(neither.code, 2);
  Outcome quiet = interloper({"-q", "check", path, window[0], window[1]});
  EXPECT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
}

TEST_F(DailyUse, QuietStatusPrintsNothing) {
  const std::string path = pipeline();
  ASSERT_EQ(interloper({"materialize", path, "--asset", "settings"}).code, 0);
  Outcome loud = interloper({"status", path, "--window", "2026-11-01..2026-11-02"});
  ASSERT_EQ(loud.code, 0) << loud.err;
  EXPECT_TRUE(contains(loud.out, "settings  (unpartitioned)  materialized")) << loud.out;
  Outcome quiet = interloper({"-q", "status", path, "--window", "2026-11-01..2026-11-02"});
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");
}

TEST_F(DailyUse, AnUnpartitionedAssetInAWindowedRunShowsNoPartition) {
  const std::string path = pipeline();
  Outcome o =
      interloper({"backfill", path, "--window", "2026-11-01..2026-11-02", "--asset", "events+"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.out, "ok        summary  -  1 rows")) << o.out;
  EXPECT_TRUE(contains(o.out, "ok        events  2026-11-02  1 rows")) << o.out;
  Outcome one =
      interloper({"materialize", path, "--partition", "2026-11-03", "--asset", "events+"});
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_TRUE(contains(one.out, "ok        summary  -  1 rows")) << one.out;
  EXPECT_EQ(query(data_db(), "SELECT n FROM shop__summary"), std::vector<std::string>{"3"});
}

TEST_F(DailyUse, RunsSaysOnePartitionInTheSingular) {
  const std::string path = pipeline();
  ASSERT_EQ(
      interloper({"materialize", path, "--partition", "2026-11-03", "--asset", "events"}).code, 0);
  ASSERT_EQ(
      interloper({"backfill", path, "--window", "2026-11-01..2026-11-02", "--asset", "events"})
          .code,
      0);
  Outcome runs = interloper({"runs", path});
  ASSERT_EQ(runs.code, 0) << runs.err;
  EXPECT_TRUE(contains(runs.out, "  2026-11-03  1 partition: 1 ok,")) << runs.out;
  EXPECT_TRUE(contains(runs.out, "  2026-11-01..2026-11-02  2 partitions: 2 ok,")) << runs.out;
}

TEST_F(DailyUse, EachKindOfAssetReadsAYearShapedValueItsOwnWay) {
  const std::string path = pipeline();
  const std::string readings =
      "interloper: info: each kind of asset reads the window its own way: time assets as the "
      "year 2026 (events, monthly, yearly); list(region) assets as the value 2026 (regions)";
  Outcome plan = interloper({"check", path, "--window", "2026"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  EXPECT_TRUE(contains(plan.err, readings)) << plan.err;
  EXPECT_TRUE(contains(plan.out, "1. regions  [list(region), command]  2026  1 task")) << plan.out;
  // The year is one partition of the list, never of the daily, monthly and yearly assets.
  EXPECT_TRUE(contains(plan.out, "window: 2026 (each asset reads it in its own partitions, below)"))
      << plan.out;
  EXPECT_EQ(plan.out.find("window: 2026 (1 partition)"),
            plan.out.rfind("window: 2026 (1 partition)"))
      << plan.out;
  EXPECT_TRUE(contains(plan.out, "window: 2026 (1 partition)")) << plan.out;

  Outcome o = interloper({"backfill", path, "--window", "2026"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_TRUE(contains(o.err, readings)) << o.err;
  EXPECT_EQ(query(data_db(), "SELECT region FROM planning__regions"),
            std::vector<std::string>{"2026"});
  EXPECT_EQ(query(data_db(), "SELECT day FROM shop__yearly"),
            std::vector<std::string>{"2026-01-01"});
  EXPECT_EQ(query(data_db(), "SELECT COUNT(*) FROM shop__events"), std::vector<std::string>{"365"});

  // A value only the list holds is read by the list alone; a named asset reads it as its kind.
  Outcome emea = interloper({"materialize", path, "--partition", "emea"});
  ASSERT_EQ(emea.code, 0) << emea.err;
  EXPECT_FALSE(contains(emea.err, "its own way")) << emea.err;
  Outcome named = interloper({"materialize", path, "--partition", "2026", "--asset", "regions"});
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_FALSE(contains(named.err, "its own way")) << named.err;
}

}  // namespace
