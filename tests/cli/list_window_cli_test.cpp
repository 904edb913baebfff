// List values that look like time keys ("2026", "Q1", "2026-11") on every command that takes a
// window: each asset's partitioning reads the text, never the shape of the text.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_process.hpp"
#include "support/temp_dir.hpp"

using json = nlohmann::json;

namespace {

using interloper::testing::Outcome;
using interloper::testing::query;

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

class ListWindows : public ::testing::Test {
 protected:
  void SetUp() override {
    // `periods` is a list whose values look like a year, quarters and a month; `totals` reads
    // it partition by partition and takes windows; `events` is daily, so a year-shaped text
    // means the year to it.
    temp_.write(
        "pipeline.yaml",
        "sources:\n"
        "  - name: plan\n"
        "    assets:\n"
        "      - name: periods\n"
        "        partitioning: {kind: list, column: period, values: [\"2026\", emea, Q1, "
        "Q2, Q3, Q4, \"2026-11\", us]}\n"
        "        command: [/bin/sh, -c, 'for v in $IL_PARTITION_VALUES; do echo "
        "\"{\\\"period\\\":\\\"$v\\\",\\\"n\\\":1}\"; done']\n"
        "      - name: totals\n"
        "        deps: [periods]\n"
        "        partitioning: {kind: list, column: period, values: [\"2026\", emea, Q1, "
        "Q2, Q3, Q4, \"2026-11\", us], allow_window: true}\n"
        "        sql: SELECT period, SUM(n) AS n FROM periods GROUP BY period\n"
        "      - name: events\n"
        "        partitioning: {kind: time, column: date, granularity: day, start: "
        "2026-11-01}\n"
        "        command: [/bin/sh, -c, 'echo \"{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\"}\"']\n");
  }

  Outcome run(std::vector<std::string> args) const {
    return interloper::testing::run_interloper(std::move(args), temp_.path().string());
  }
  std::vector<std::string> rows(const std::string& sql) const {
    return query(temp_.path() / ".interloper" / "data.db", sql);
  }

  interloper::testing::TempDir temp_{"il_list_windows"};
};

TEST_F(ListWindows, BackfillAndMaterializeReadListRangesAndValues) {
  Outcome quarters = run({"backfill", "pipeline.yaml", "--window", "Q1..Q3", "--asset", "periods"});
  ASSERT_EQ(quarters.code, 0) << quarters.err;
  EXPECT_EQ(rows("SELECT period FROM plan__periods ORDER BY period"),
            (std::vector<std::string>{"Q1", "Q2", "Q3"}));

  Outcome emea = run({"backfill", "pipeline.yaml", "--window", "emea..Q1"});
  ASSERT_EQ(emea.code, 0) << emea.err;
  // Every list asset takes it; the daily asset is left out, not handed a list window.
  EXPECT_EQ(rows("SELECT period FROM plan__totals ORDER BY period"),
            (std::vector<std::string>{"Q1", "emea"}));

  Outcome year = run({"materialize", "pipeline.yaml", "--partition", "2026", "--asset", "periods"});
  ASSERT_EQ(year.code, 0) << year.err;
  Outcome month =
      run({"materialize", "pipeline.yaml", "--partition", "2026-11", "--asset", "periods+"});
  ASSERT_EQ(month.code, 0) << month.err;
  EXPECT_EQ(rows("SELECT period FROM plan__periods WHERE period LIKE '2026%' ORDER BY period"),
            (std::vector<std::string>{"2026", "2026-11"}));
  EXPECT_EQ(rows("SELECT n FROM plan__totals WHERE period = '2026-11'"),
            std::vector<std::string>{"1"});

  // A windowed list asset runs a range in one task.
  Outcome window = run({"materialize", "pipeline.yaml", "--window", "Q1..Q3", "--asset", "totals"});
  ASSERT_EQ(window.code, 0) << window.err;
  EXPECT_TRUE(contains(window.out, "totals  Q1..Q3")) << window.out;

  // Without --asset, the list assets read "Q1..Q3" as their values and the time asset is left
  // out with its reason.
  Outcome check = run({"--json", "check", "pipeline.yaml", "--window", "Q1..Q3"});
  ASSERT_EQ(check.code, 0) << check.err;
  EXPECT_TRUE(contains(check.out, "\"periods\"")) << check.out;
  EXPECT_TRUE(contains(check.out, "partitioned by day, not list")) << check.out;
}

TEST_F(ListWindows, AYearShapedValueIsAValueToTheListAndAYearToTimeAssets) {
  Outcome o = run({"backfill", "pipeline.yaml", "--window", "2026-11-01..2026-11-02"});
  ASSERT_EQ(o.code, 0) << o.err;
  Outcome both = run({"--json", "check", "pipeline.yaml", "--window", "2026-11"});
  ASSERT_EQ(both.code, 0) << both.err;
  // The month is one value of the lists, and 30 days of the daily asset.
  EXPECT_TRUE(contains(both.err, "list(period) assets as the value 2026-11")) << both.err;
  Outcome month = run({"backfill", "pipeline.yaml", "--window", "2026-11"});
  ASSERT_EQ(month.code, 0) << month.err;
  EXPECT_EQ(rows("SELECT COUNT(*) FROM plan__events"), std::vector<std::string>{"30"});
  EXPECT_EQ(rows("SELECT period FROM plan__periods"), std::vector<std::string>{"2026-11"});
}

TEST_F(ListWindows, StatusReportsTheListsOwnValues) {
  ASSERT_EQ(run({"backfill", "pipeline.yaml", "--window", "2026..Q1", "--asset", "periods"}).code,
            0);
  Outcome status = run({"--json", "status", "pipeline.yaml", "--window", "Q1..Q3"});
  ASSERT_EQ(status.code, 0) << status.err;
  const json report = json::parse(status.out);
  ASSERT_TRUE(report.is_array()) << status.out;
  bool seen = false;
  for (const json& asset : report) {
    if (asset["asset"] != "periods") continue;
    seen = true;
    EXPECT_EQ(asset["window"], "Q1..Q3") << asset;
    EXPECT_EQ(asset["materialized"], json({"Q1"})) << asset;
    EXPECT_EQ(asset["missing"], json({"Q2..Q3"})) << asset;
  }
  EXPECT_TRUE(seen) << status.out;

  Outcome year =
      run({"--json", "status", "pipeline.yaml", "--window", "2026", "--asset", "periods"});
  ASSERT_EQ(year.code, 0) << year.err;
  const json one = json::parse(year.out);
  EXPECT_EQ(one[0]["window"], "2026") << year.out;
  EXPECT_EQ(one[0]["materialized"], json({"2026"})) << year.out;
}

TEST_F(ListWindows, ResetDropsOnlyTheNamedValues) {
  ASSERT_EQ(run({"backfill", "pipeline.yaml", "--window", "2026..Q4", "--asset", "periods"}).code,
            0);
  Outcome quarters = run({"reset", "pipeline.yaml", "periods", "--window", "Q1..Q3", "--yes"});
  ASSERT_EQ(quarters.code, 0) << quarters.err;
  EXPECT_EQ(rows("SELECT period FROM plan__periods ORDER BY period"),
            (std::vector<std::string>{"2026", "Q4", "emea"}));
  Outcome year = run({"reset", "pipeline.yaml", "periods", "--window", "2026", "--yes"});
  ASSERT_EQ(year.code, 0) << year.err;
  EXPECT_EQ(rows("SELECT period FROM plan__periods ORDER BY period"),
            (std::vector<std::string>{"Q4", "emea"}));
  // The daily asset reads a month as its days; one before its start is refused.
  Outcome early = run({"reset", "pipeline.yaml", "events", "--window", "2026-10", "--yes"});
  EXPECT_EQ(early.code, 2) << early.err;
  EXPECT_TRUE(contains(early.err, "lies entirely before start")) << early.err;
}

TEST_F(ListWindows, ValuesBreakingTheListRulesAreRefusedAtTheValue) {
  temp_.write("bad.yaml",
              "sources:\n"
              "  - name: plan\n"
              "    assets:\n"
              "      - name: periods\n"
              "        partitioning: {kind: list, column: period, values: [Q1, .Q2]}\n"
              "        command: [/bin/echo, '{}']\n");
  Outcome o = run({"check", "bad.yaml"});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "list value '.Q2' begins or ends with '.'")) << o.err;
}

}  // namespace
