// The `jobs:` of a pipeline file, as loaded.
#include <gtest/gtest.h>

#include "interloper/pipeline.hpp"
#include "support/expect.hpp"

namespace il = interloper;

namespace {

const char* kPipeline = R"(sources:
  - name: ads
    assets:
      - name: ads_stats
        partitioning: {kind: time, column: date, granularity: day, start: 2026-01-10}
        command: [./ads.sh]
      - name: ads_report
        deps: [ads_stats]
        partitioning: {kind: time, column: date, granularity: day, start: 2026-02-01, allow_window: true}
        command: [./report.sh]
  - name: finance
    assets:
      - name: ledger
        partitioning: {kind: time, column: month, granularity: month}
        command: [./ledger.sh]
jobs:
  - name: nightly_ads
    cron: "0 3 * * *"
    time_zone: Europe/Berlin
    assets: [ads_stats]
    downstream: true
    lookback: 3
    offset: 1
    granularity: day
  - name: ledger
    cron: "@monthly"
    assets: [finance]
    mode: materialize
)";

TEST(PipelineJobs, LoadsEveryKeyWithDefaults) {
  const il::Pipeline p = il::Pipeline::parse(kPipeline, "/tmp/pipeline.yaml");
  ASSERT_EQ(p.jobs().size(), 2u);
  const il::Job& nightly = p.jobs()[0];
  EXPECT_EQ(nightly.name, "nightly_ads");
  EXPECT_EQ(nightly.cron, il::CronSchedule::parse("0 3 * * *"));
  EXPECT_EQ(nightly.time_zone, "Europe/Berlin");
  EXPECT_EQ(nightly.assets, (std::vector<std::string>{"ads_stats", "ads_report"}));
  EXPECT_EQ(nightly.lookback, 3);
  EXPECT_EQ(nightly.offset, 1);
  EXPECT_EQ(nightly.granularity, il::TimeGranularity::DAY);
  EXPECT_EQ(nightly.mode, il::Job::Mode::backfill);
  EXPECT_EQ(nightly.start, il::TimePoint::parse("2026-02-01"));  // the latest start
  const il::Job& ledger = p.jobs()[1];
  EXPECT_EQ(ledger.assets, (std::vector<std::string>{"ledger"}));  // a source names its assets
  EXPECT_EQ(ledger.time_zone, "UTC");
  EXPECT_EQ(ledger.lookback, 1);
  EXPECT_EQ(ledger.offset, 0);
  EXPECT_EQ(ledger.granularity, il::TimeGranularity::MONTH);  // the assets' own
  EXPECT_EQ(ledger.mode, il::Job::Mode::materialize);
  EXPECT_FALSE(ledger.start.has_value());
}

TEST(PipelineJobs, MaterializingAWindowNeedsAllowWindow) {
  std::string text = kPipeline;
  text.replace(text.find("    downstream: true\n"), 21, "    mode: materialize\n");
  IL_EXPECT_THROW_WITH(il::Pipeline::parse(text, "/tmp/p.yaml"), il::PipelineError,
                       "/tmp/p.yaml:21:11: job 'nightly_ads' materializes 3 partitions at once, "
                       "but asset 'ads_stats' does not allow windows");
}

TEST(PipelineJobs, AssetsMustBeTimePartitioned) {
  const char* text = R"(sources:
  - name: s
    assets:
      - name: plain
        command: [./x.sh]
jobs:
  - name: j
    cron: "@hourly"
    assets: [plain]
)";
  IL_EXPECT_THROW_WITH(il::Pipeline::parse(text, "/tmp/p.yaml"), il::PipelineError,
                       "/tmp/p.yaml:9:13: job 'j' runs asset 'plain', which is not "
                       "time-partitioned");
}

TEST(PipelineJobs, NoJobs) {
  const char* text =
      "sources:\n  - name: s\n    assets:\n      - name: a\n        command: [./x]\n";
  EXPECT_TRUE(il::Pipeline::parse(text, "/tmp/p.yaml").jobs().empty());
}

}  // namespace
