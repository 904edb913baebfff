// A SQLite store written by an earlier version (tests/fixtures/store_v8.db, see
// tests/fixtures/README.md) is read and updated in place: its states, failures, claims, last
// records and runs read as they were written, and writes go into the same file.
#include <gtest/gtest.h>

#include <filesystem>

#include "destination/storage_fixtures.hpp"
#include "interloper/store.hpp"

namespace interloper {
namespace {

using testing::at;
using testing::day;
using testing::TempDir;

class StoreFixtureTest : public ::testing::Test {
 public:
  void SetUp() override {
    std::filesystem::copy_file(std::string(IL_TEST_SOURCE_DIR) + "/tests/fixtures/store_v8.db",
                               path);
  }
  TempDir dir;
  std::string path = dir / "store.db";
  TimePartitionConfig daily{"date", {.allow_window = true}};
  ListPartitionConfig regions{"region", {"emea", "us", "apac", "latam"}, true};
  DatasetRef stats{"ads", "stats", &daily};
  DatasetRef by_region{"ads", "by_region", &regions};
  DatasetRef totals{"ads", "totals", nullptr};
  TimePartitionWindow days{day(2026, 1, 1), day(2026, 1, 17)};
  ListPartitionWindow all_regions = regions.window("emea", "latam");
  TimePoint now{at(2026, 3, 1, 12)};
};

// What the fixture holds, as any reader must see it.
void expect_written_state(MaterializationStore& store, const StoreFixtureTest& t) {
  WindowStatus s = store.status(t.stats, t.days);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 9}, {12, 14}}));
  EXPECT_EQ(s.failed, (std::vector<PartitionRange>{{10, 11}}));
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{15, 16}}));
  EXPECT_EQ(s.definitions,
            (std::vector<DefinedRange>{{{0, 9}, "def-a"}, {{12, 14}, "def-b"}}));
  TimePartition jan11(day(2026, 1, 11));
  auto failed = store.latest(t.stats, &jan11);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->status, MaterializationStatus::failed);
  EXPECT_EQ(failed->error, "division by zero");
  EXPECT_EQ(failed->run_id, "run-1");
  EXPECT_EQ(failed->started, TimePoint(at(2026, 3, 1, 10)));
  auto failures = store.failures(t.stats, t.days, 10);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].range, (PartitionRange{10, 11}));

  s = store.status(t.by_region, t.all_regions);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 1}}));
  EXPECT_EQ(s.failed, (std::vector<PartitionRange>{{2, 2}}));
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{3, 3}}));
  failures = store.failures(t.by_region, t.all_regions, 10);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].record.error, "no such region");

  auto total = store.latest(t.totals, nullptr);
  ASSERT_TRUE(total.has_value());
  EXPECT_EQ(total->status, MaterializationStatus::materialized);
  auto last = store.last_record(t.stats);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->run_id, "run-2");
  EXPECT_EQ(last->rows, 30);

  const std::vector<RunRecord> runs = store.runs("pipeline.yaml", 10);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run_id, "run-2");
  EXPECT_EQ(runs[0].state, RunState::running);
  EXPECT_EQ(runs[1].run_id, "run-1");
  EXPECT_EQ(runs[1].state, RunState::failed);
  EXPECT_EQ(runs[1].window, "2026-01-01..2026-01-12");
  EXPECT_EQ(runs[1].succeeded, 10);
  EXPECT_EQ(runs[1].failed, 2);
}

TEST_F(StoreFixtureTest, AReaderSeesWhatTheEarlierVersionWrote) {
  auto reader = open_store_read_only(path);
  expect_written_state(*reader, *this);
}

TEST_F(StoreFixtureTest, AWriterUpdatesTheFileInPlace) {
  {
    SqliteStore store(path);
    expect_written_state(store, *this);
    // The claims of the earlier run hold (their process is on another host) until released.
    TimePartitionWindow claimed(day(2026, 1, 16), day(2026, 1, 17));
    const TimePoint later(at(2026, 3, 1, 13));
    auto held = store.claim({stats}, &claimed, {"me", later}, now);
    ASSERT_TRUE(held.has_value());
    EXPECT_EQ(held->owner, "host-a:42:run-3");
    EXPECT_NE(held->holder.find("process 42 on host host-a"), std::string::npos) << held->holder;
    auto latam = regions.window("latam", "latam");
    held = store.claim({by_region}, &latam, {"me", later}, now);
    ASSERT_TRUE(held.has_value());
    store.release({stats}, &claimed, "host-a:42:run-3");
    store.release({by_region}, &latam, "host-a:42:run-3");
    EXPECT_FALSE(store.claim({stats}, &claimed, {"me", later}, now).has_value());
    EXPECT_FALSE(store.claim({by_region}, &latam, {"me", later}, now).has_value());

    MaterializationRecord done;
    done.asset = "stats";
    done.status = MaterializationStatus::materialized;
    done.rows = 2;
    done.run_id = "run-4";
    done.definition = "def-b";
    store.record(stats, &claimed, done);
    TimePartitionWindow failed(day(2026, 1, 11), day(2026, 1, 12));
    store.forget(stats, &failed);
    done.asset = "by_region";
    store.record(by_region, &latam, done);
    RunRecord run;
    run.run_id = "run-4";
    run.pipeline = "pipeline.yaml";
    run.state = RunState::succeeded;
    store.record_run(run, 2);
  }
  SqliteStore reopened(path);
  WindowStatus s = reopened.status(stats, days);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 9}, {12, 16}}));
  EXPECT_EQ(s.definitions,
            (std::vector<DefinedRange>{{{0, 9}, "def-a"}, {{12, 16}, "def-b"}}));
  EXPECT_TRUE(s.failed.empty());
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{10, 11}}));
  s = reopened.status(by_region, all_regions);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 1}, {3, 3}}));
  const std::vector<RunRecord> runs = reopened.runs("", 10);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run_id, "run-4");
  EXPECT_EQ(runs[1].run_id, "run-2");
  EXPECT_EQ(reopened.last_record(stats)->run_id, "run-4");
}

}  // namespace
}  // namespace interloper
