// SqliteStore: ranges split on overwrite, status by arithmetic, persistence, list keys.
#include <gtest/gtest.h>

#include <random>

#include "destination/storage_fixtures.hpp"
#include "interloper/store.hpp"

namespace interloper {
namespace {

using testing::at;
using testing::day;
using testing::TempDir;

MaterializationRecord done(std::string run, std::int64_t rows = 1) {
  MaterializationRecord r;
  r.asset = "stats";
  r.status = MaterializationStatus::materialized;
  r.rows = rows;
  r.run_id = std::move(run);
  r.started = TimePoint(at(2026, 5, 1, 10));
  r.finished = TimePoint(at(2026, 5, 1, 11));
  return r;
}

MaterializationRecord failed(std::string run, std::string error) {
  MaterializationRecord r = done(std::move(run), 0);
  r.status = MaterializationStatus::failed;
  r.error = std::move(error);
  return r;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::string path = dir / "state/store.db";
  std::unique_ptr<SqliteStore> store = std::make_unique<SqliteStore>(path);
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
};

TEST_F(SqliteStoreTest, RecordsSplitEarlierRanges) {
  TimePartitionWindow january(day(2026, 1, 1), day(2026, 1, 31));
  store->record(stats, &january, done("r1", 31));
  TimePartitionWindow middle(day(2026, 1, 10), day(2026, 1, 12));
  store->record(stats, &middle, failed("r2", "boom"));
  WindowStatus s = store->status(stats, january);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 8}, {12, 30}}));
  EXPECT_EQ(s.failed, (std::vector<PartitionRange>{{9, 11}}));
  EXPECT_TRUE(s.missing.empty());

  TimePartition jan11(day(2026, 1, 11));
  auto latest = store->latest(stats, &jan11);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->status, MaterializationStatus::failed);
  EXPECT_EQ(latest->error, "boom");
  EXPECT_EQ(latest->run_id, "r2");
  TimePartition jan20(day(2026, 1, 20));
  latest = store->latest(stats, &jan20);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->run_id, "r1");
  EXPECT_EQ(latest->rows, 31);
  EXPECT_EQ(latest->started, TimePoint(at(2026, 5, 1, 10)));
  EXPECT_EQ(latest->finished, TimePoint(at(2026, 5, 1, 11)));
  TimePartition feb1(day(2026, 2, 1));
  EXPECT_FALSE(store->latest(stats, &feb1).has_value());

  // Re-running the middle succeeds; adjacent materialized ranges read as one.
  store->record(stats, &middle, done("r3"));
  s = store->status(stats, january);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 30}}));
  EXPECT_TRUE(s.failed.empty());
}

TEST_F(SqliteStoreTest, MissingAroundAndBetweenRanges) {
  TimePartitionWindow a(day(2026, 1, 3), day(2026, 1, 4));
  TimePartitionWindow b(day(2026, 1, 8), day(2026, 1, 8));
  store->record(stats, &a, done("r1"));
  store->record(stats, &b, done("r1"));
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 10));
  WindowStatus s = store->status(stats, window);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{2, 3}, {7, 7}}));
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{0, 1}, {4, 6}, {8, 9}}));
  // A window that starts inside a range clips it.
  TimePartitionWindow inner(day(2026, 1, 4), day(2026, 1, 8));
  s = store->status(stats, inner);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 0}, {4, 4}}));
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{1, 3}}));
  // Another granularity and another asset are kept apart.
  TimePartitionWindow months(day(2026, 1, 1), day(2026, 1, 1), TimeGranularity::MONTH);
  EXPECT_EQ(store->status(stats, months).missing, (std::vector<PartitionRange>{{0, 0}}));
  DatasetRef other{"ads", "other", &daily};
  EXPECT_EQ(store->status(other, window).missing, (std::vector<PartitionRange>{{0, 9}}));
}

TEST_F(SqliteStoreTest, PersistsAcrossReopen) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 5));
  store->record(stats, &window, done("r1"));
  DatasetRef dims{"", "dims", nullptr};
  store->record(dims, nullptr, done("r9", 4));
  store = std::make_unique<SqliteStore>(path);
  EXPECT_EQ(store->status(stats, window).materialized, (std::vector<PartitionRange>{{0, 4}}));
  auto latest = store->latest(dims, nullptr);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->run_id, "r9");
  EXPECT_EQ(latest->rows, 4);
  auto opened = open_store("sqlite://" + path);
  EXPECT_EQ(opened->status(stats, window).materialized, (std::vector<PartitionRange>{{0, 4}}));
  EXPECT_THROW(open_store("postgres://x"), DestinationError);
}

TEST_F(SqliteStoreTest, ListPartitionsByKey) {
  ListPartitionConfig regions("region", {"eu", "us", "apac", "latam"}, true);
  DatasetRef sales{"shop", "sales", &regions};
  auto first_two = regions.window("eu", "us");
  store->record(sales, &first_two, done("r1"));
  auto latam = regions.partition("latam");
  store->record(sales, latam.as_window().get(), failed("r2", "no data"));
  auto all = regions.window("eu", "latam");
  WindowStatus s = store->status(sales, all);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 1}}));
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{2, 2}}));
  EXPECT_EQ(s.failed, (std::vector<PartitionRange>{{3, 3}}));
  auto us = regions.partition("us");
  EXPECT_EQ(store->latest(sales, &us)->run_id, "r1");
}

TEST_F(SqliteStoreTest, MillionHourWindowAgainstScatteredRanges) {
  TimePartitionConfig hourly{"ts", {.granularity = TimeGranularity::HOUR, .allow_window = true}};
  DatasetRef events{"web", "events", &hourly};
  TimePoint start(at(2000, 1, 1, 0));
  // 200 scattered ranges, then a check of every count against a bitmap.
  std::mt19937_64 rng(7);
  const std::int64_t span = 1'000'000;
  std::vector<char> state(static_cast<std::size_t>(span), 0);  // 0 missing, 1 ok, 2 failed
  for (int i = 0; i < 200; ++i) {
    std::int64_t a = static_cast<std::int64_t>(rng() % span);
    std::int64_t len = static_cast<std::int64_t>(rng() % 5000);
    std::int64_t b = std::min(span - 1, a + len);
    bool ok = rng() % 3 != 0;
    TimePartitionWindow w(TimeGranularity::HOUR.advance(start, a),
                          TimeGranularity::HOUR.advance(start, b), TimeGranularity::HOUR);
    store->record(events, &w, ok ? done("r") : failed("r", "x"));
    std::fill(state.begin() + a, state.begin() + b + 1, ok ? 1 : 2);
  }
  TimePartitionWindow all(start, TimeGranularity::HOUR.advance(start, span - 1),
                          TimeGranularity::HOUR);
  WindowStatus s = store->status(events, all);
  std::vector<char> seen(state.size(), 0);
  auto paint = [&](const std::vector<PartitionRange>& ranges, char v) {
    for (const auto& r : ranges) {
      for (std::size_t i = r.first; i <= r.last; ++i) {
        ASSERT_EQ(seen[i], 0) << i;
        seen[i] = v;
      }
    }
  };
  paint(s.materialized, 1);
  paint(s.failed, 2);
  paint(s.missing, 3);
  for (std::size_t i = 0; i < state.size(); ++i) {
    ASSERT_EQ(seen[i], state[i] == 0 ? 3 : state[i]) << i;
  }
}

}  // namespace
}  // namespace interloper
