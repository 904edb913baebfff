// The materialization stores: one set of semantics run over every store (ranges split on
// overwrite, status by arithmetic, failures kept, states coalesced), then what is particular
// to the SQLite file (persistence, size, the earlier file format).
#include "interloper/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "destination/storage_fixtures.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/store/owner_process.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "support/postgres.hpp"

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

// One row count of the SQLite file at `path`.
std::int64_t count_rows(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  std::int64_t n = -1;
  if (sqlite3_step(stmt) == SQLITE_ROW) n = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return n;
}

// Runs `sql` on the SQLite file at `path` (to make it a file of an earlier version).
void execute_sql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// Every store kind runs the same tests; a new store joins by adding its name here and in
// make_store.
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (store) return;
    IL_REQUIRE_POSTGRES(url);  // only the PostgreSQL store can be missing
    (void)url;
  }
  std::unique_ptr<MaterializationStore> make_store() {
    if (GetParam() == "memory") return std::make_unique<MemoryStore>();
    if (GetParam() == "postgres") {
      auto url = testing::postgres_url();
      if (!url) return nullptr;
      static std::atomic<int> counter{0};
      std::random_device device;
      // A schema of its own: the test sees no other test's records.
      return std::make_unique<PostgresStore>(*url + "?schema=il_store_" +
                                             std::to_string(device() % 1000000000u) + "_" +
                                             std::to_string(++counter));
    }
    return std::make_unique<SqliteStore>(path);
  }
  TempDir dir;
  std::string path = dir / "state/store.db";
  std::unique_ptr<MaterializationStore> store = make_store();
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
};

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, ::testing::Values("memory", "sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

class SqliteStoreTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::string path = dir / "state/store.db";
  std::unique_ptr<SqliteStore> store = std::make_unique<SqliteStore>(path);
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
};

TEST_P(StoreTest, RecordsSplitEarlierRanges) {
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
  EXPECT_EQ(latest->started, TimePoint(at(2026, 5, 1, 10)));
  EXPECT_EQ(latest->finished, TimePoint(at(2026, 5, 1, 11)));
  EXPECT_EQ(latest->asset, "stats");
  // A materialized partition keeps its state only: the run's details are not per partition.
  TimePartition jan20(day(2026, 1, 20));
  latest = store->latest(stats, &jan20);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->status, MaterializationStatus::materialized);
  EXPECT_EQ(latest->asset, "stats");
  EXPECT_EQ(latest->run_id, "");
  EXPECT_EQ(latest->rows, 0);
  TimePartition feb1(day(2026, 2, 1));
  EXPECT_FALSE(store->latest(stats, &feb1).has_value());

  // Re-running the middle succeeds; adjacent materialized ranges read as one.
  store->record(stats, &middle, done("r3"));
  s = store->status(stats, january);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 30}}));
  EXPECT_TRUE(s.failed.empty());
}

TEST_P(StoreTest, MissingAroundAndBetweenRanges) {
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
  EXPECT_EQ(latest->status, MaterializationStatus::materialized);
  store->record(dims, nullptr, failed("r10", "gone"));
  store = std::make_unique<SqliteStore>(path);
  EXPECT_EQ(store->latest(dims, nullptr)->error, "gone");
  auto opened = open_store("sqlite://" + path);
  EXPECT_EQ(opened->status(stats, window).materialized, (std::vector<PartitionRange>{{0, 4}}));
  EXPECT_THROW(open_store("postgres://x"), DestinationError);
}

TEST_P(StoreTest, ListPartitionsByKey) {
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
  EXPECT_EQ(store->latest(sales, &us)->status, MaterializationStatus::materialized);
  auto latam_key = regions.partition("latam");
  EXPECT_EQ(store->latest(sales, &latam_key)->error, "no data");
  EXPECT_EQ(store->latest(sales, &latam_key)->run_id, "r2");
}

MaterializationRecord done_by(std::string definition) {
  MaterializationRecord r = done("r");
  r.definition = std::move(definition);
  return r;
}

TEST_P(StoreTest, PartitionsKeepTheDefinitionThatWroteThem) {
  TimePartitionWindow january(day(2026, 1, 1), day(2026, 1, 31));
  store->record(stats, &january, done_by("v1"));
  TimePartitionWindow late(day(2026, 1, 21), day(2026, 1, 31));
  store->record(stats, &late, done_by("v2"));
  WindowStatus s = store->status(stats, january);
  // One state, two definitions: materialized reads as one range, definitions do not merge.
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 30}}));
  EXPECT_EQ(s.definitions, (std::vector<DefinedRange>{{{0, 19}, "v1"}, {{20, 30}, "v2"}}));
  EXPECT_EQ(s.stale("v2"), (std::vector<PartitionRange>{{0, 19}}));
  EXPECT_EQ(s.fresh("v2"), (std::vector<PartitionRange>{{20, 30}}));
  EXPECT_EQ(s.stale("v3"), (std::vector<PartitionRange>{{0, 30}}));
  EXPECT_TRUE(s.stale("").empty());
  TimePartition jan5(day(2026, 1, 5));
  EXPECT_EQ(store->latest(stats, &jan5)->definition, "v1");

  // Re-running the stale stretch with the current definition leaves one range of it.
  TimePartitionWindow early(day(2026, 1, 1), day(2026, 1, 20));
  store->record(stats, &early, done_by("v2"));
  s = store->status(stats, january);
  EXPECT_EQ(s.definitions, (std::vector<DefinedRange>{{{0, 30}, "v2"}}));
  EXPECT_TRUE(s.stale("v2").empty());

  // A failure in the middle: only materialized partitions carry a definition.
  TimePartitionWindow mid(day(2026, 1, 10), day(2026, 1, 10));
  store->record(stats, &mid, failed("r9", "boom"));
  s = store->status(stats, january);
  EXPECT_EQ(s.definitions, (std::vector<DefinedRange>{{{0, 8}, "v2"}, {{10, 30}, "v2"}}));
  EXPECT_EQ(s.fresh("v2"), (std::vector<PartitionRange>{{0, 8}, {10, 30}}));
}

TEST_P(StoreTest, ListAndUnpartitionedDatasetsKeepDefinitionsToo) {
  ListPartitionConfig regions("region", {"eu", "us", "apac"}, true);
  DatasetRef sales{"shop", "sales", &regions};
  auto all = regions.window("eu", "apac");
  store->record(sales, &all, done_by("old"));
  auto us = regions.partition("us");
  store->record(sales, us.as_window().get(), done_by("new"));
  WindowStatus s = store->status(sales, all);
  EXPECT_EQ(s.stale("new"), (std::vector<PartitionRange>{{0, 0}, {2, 2}}));
  EXPECT_EQ(s.fresh("new"), (std::vector<PartitionRange>{{1, 1}}));

  DatasetRef totals{"shop", "totals", nullptr};
  store->record(totals, nullptr, done_by("whole-v1"));
  EXPECT_EQ(store->latest(totals, nullptr)->definition, "whole-v1");
}

TEST_P(StoreTest, MillionHourWindowAgainstScatteredRanges) {
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

TEST_P(StoreTest, FailureSurvivesSplitsAndGoesWhenRedone) {
  TimePartitionWindow week(day(2026, 3, 1), day(2026, 3, 7));
  store->record(stats, &week, failed("r1", "disk full"));
  TimePartitionWindow wednesday(day(2026, 3, 4), day(2026, 3, 4));
  store->record(stats, &wednesday, done("r2"));
  for (unsigned d : {1U, 3U, 5U, 7U}) {
    TimePartition p(day(2026, 3, d));
    auto latest = store->latest(stats, &p);
    ASSERT_TRUE(latest.has_value()) << d;
    EXPECT_EQ(latest->error, "disk full") << d;
    EXPECT_EQ(latest->run_id, "r1") << d;
  }
  // A second failure next to the first keeps its own error.
  TimePartitionWindow friday(day(2026, 3, 6), day(2026, 3, 6));
  store->record(stats, &friday, failed("r3", "timeout"));
  TimePartition fri(day(2026, 3, 6));
  TimePartition sat(day(2026, 3, 7));
  EXPECT_EQ(store->latest(stats, &fri)->error, "timeout");
  EXPECT_EQ(store->latest(stats, &sat)->error, "disk full");
  WindowStatus s = store->status(stats, week);
  EXPECT_EQ(s.failed, (std::vector<PartitionRange>{{0, 2}, {4, 6}}));
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{3, 3}}));
  store->record(stats, &week, done("r4"));
  s = store->status(stats, week);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 6}}));
  EXPECT_EQ(store->latest(stats, &sat)->status, MaterializationStatus::materialized);
  EXPECT_EQ(store->latest(stats, &sat)->error, "");
}

TEST_P(StoreTest, ForgottenPartitionsReadAsMissing) {
  TimePartitionWindow january(day(2026, 1, 1), day(2026, 1, 31));
  store->record(stats, &january, done("r1"));
  TimePartitionWindow tenth(day(2026, 1, 10), day(2026, 1, 10));
  store->record(stats, &tenth, failed("r2", "boom"));
  DatasetRef other{"ads", "other", &daily};
  store->record(other, &january, done("r1"));
  // A window that cuts a failed range and a materialized one.
  TimePartitionWindow span(day(2026, 1, 5), day(2026, 1, 10));
  store->forget(stats, &span);
  WindowStatus s = store->status(stats, january);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 3}, {10, 30}}));
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{4, 9}}));
  EXPECT_TRUE(s.failed.empty());
  EXPECT_TRUE(store->failures(stats, january, 10).empty());
  // The whole dataset, every granularity it was recorded in.
  TimePartitionWindow month(day(2026, 1, 1), day(2026, 1, 1), TimeGranularity::MONTH);
  store->record(stats, &month, done("r3"));
  store->forget(stats, nullptr);
  EXPECT_EQ(store->status(stats, january).missing, (std::vector<PartitionRange>{{0, 30}}));
  EXPECT_EQ(store->status(stats, month).missing, (std::vector<PartitionRange>{{0, 0}}));
  EXPECT_EQ(store->status(other, january).materialized, (std::vector<PartitionRange>{{0, 30}}));
  // List keys and an unpartitioned dataset.
  ListPartitionConfig regions("region", {"eu", "us", "apac"}, true);
  DatasetRef sales{"shop", "sales", &regions};
  auto all = regions.window("eu", "apac");
  store->record(sales, &all, failed("r4", "no data"));
  auto us = regions.window("us", "us");
  store->forget(sales, &us);
  s = store->status(sales, all);
  EXPECT_EQ(s.failed, (std::vector<PartitionRange>{{0, 0}, {2, 2}}));
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{1, 1}}));
  DatasetRef snapshot{"crm", "snapshot", nullptr};
  store->record(snapshot, nullptr, done("r5"));
  store->forget(snapshot, nullptr);
  EXPECT_FALSE(store->latest(snapshot, nullptr).has_value());
}

TEST_P(StoreTest, LastRecordIsWhatLastRanTheDatasetUntilItIsForgotten) {
  EXPECT_FALSE(store->last_record(stats).has_value());
  TimePartitionWindow january(day(2026, 1, 1), day(2026, 1, 31));
  store->record(stats, &january, done("r1", 310));
  TimePartitionWindow tenth(day(2026, 1, 10), day(2026, 1, 10));
  MaterializationRecord failure = failed("r2", "exit 3: no such table");
  failure.finished = TimePoint(at(2026, 5, 2, 9));
  store->record(stats, &tenth, failure);
  std::optional<MaterializationRecord> last = store->last_record(stats);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->run_id, "r2");
  EXPECT_EQ(last->status, MaterializationStatus::failed);
  EXPECT_EQ(last->error, "exit 3: no such table");
  EXPECT_EQ(last->finished, TimePoint(at(2026, 5, 2, 9)));
  // A later run of another partition replaces it; other datasets keep their own.
  DatasetRef other{"ads", "other", &daily};
  store->record(other, &january, done("r9"));
  store->record(stats, &january, done("r3", 31));
  last = store->last_record(stats);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->run_id, "r3");
  EXPECT_EQ(last->status, MaterializationStatus::materialized);
  EXPECT_EQ(last->rows, 31);
  EXPECT_EQ(last->started, TimePoint(at(2026, 5, 1, 10)));
  // Forgetting some partitions keeps it; forgetting the dataset drops it.
  store->forget(stats, &tenth);
  EXPECT_EQ(store->last_record(stats)->run_id, "r3");
  store->forget(stats, nullptr);
  EXPECT_FALSE(store->last_record(stats).has_value());
  EXPECT_EQ(store->last_record(other)->run_id, "r9");
}

TEST_P(StoreTest, OnePartitionAtATimeReadsAsFewRanges) {
  // 400 days recorded one by one, each by its own run, every 50th failed.
  const TimePoint start(day(2025, 1, 1));
  for (int i = 0; i < 400; ++i) {
    TimePoint t = TimeGranularity::DAY.advance(start, i);
    TimePartitionWindow one(t, t);
    store->record(stats, &one,
                  i % 50 == 7 ? failed("r" + std::to_string(i), "e" + std::to_string(i))
                              : done("r" + std::to_string(i)));
  }
  TimePartitionWindow all(start, TimeGranularity::DAY.advance(start, 399));
  WindowStatus s = store->status(stats, all);
  EXPECT_EQ(s.failed.size(), 8U);
  EXPECT_EQ(s.materialized.size(), 9U);
  EXPECT_EQ(s.count(s.materialized), 392U);
  EXPECT_TRUE(s.missing.empty());
  TimePartition failed_day(TimeGranularity::DAY.advance(start, 57));
  EXPECT_EQ(store->latest(stats, &failed_day)->error, "e57");
}

TEST_P(StoreTest, ClaimsKeepOtherOwnersOutUntilReleasedOrLapsed) {
  DatasetRef other{"ads", "other", &daily};
  const TimePoint now(at(2026, 6, 1, 12));
  const TimePoint later(at(2026, 6, 1, 13));
  TimePartitionWindow first_five(day(2026, 1, 1), day(2026, 1, 5));
  EXPECT_FALSE(store->claim({stats, other}, &first_five, {"a", later}, now));
  // Another owner is refused anything overlapping, in either dataset, and told who holds it.
  TimePartitionWindow third(day(2026, 1, 3), day(2026, 1, 3));
  std::optional<Claim> held = store->claim({stats}, &third, {"b", later}, now);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->owner, "a");
  EXPECT_EQ(held->expires, later);
  // ...and why it counts as running: the stores that share a file or a server check.
  if (GetParam() == "sqlite") {
    EXPECT_NE(held->holder.find(" is running"), std::string::npos) << held->holder;
  }
  if (GetParam() == "postgres") {
    EXPECT_NE(held->holder.find(" is open"), std::string::npos) << held->holder;
  }
  TimePartitionWindow fifth_sixth(day(2026, 1, 5), day(2026, 1, 6));
  EXPECT_TRUE(store->claim({other}, &fifth_sixth, {"b", later}, now).has_value());
  // All or nothing: the refused claim took no part of the window (the sixth is free for c).
  TimePartitionWindow sixth(day(2026, 1, 6), day(2026, 1, 6));
  EXPECT_FALSE(store->claim({other}, &sixth, {"c", later}, now));
  // The owner itself may claim again (extending), and a claim that lapsed counts for nothing.
  EXPECT_FALSE(store->claim({stats}, &third, {"a", later}, now));
  EXPECT_FALSE(store->claim({stats}, &third, {"b", TimePoint(at(2026, 6, 1, 14))}, later));
  // Released partitions are free at once; the rest stay held.
  store->release({stats, other}, &first_five, "a");
  TimePartitionWindow first(day(2026, 1, 1), day(2026, 1, 1));
  EXPECT_FALSE(store->claim({stats, other}, &first, {"d", later}, now));
  // Renewing moves every claim of the owner.
  TimePartitionWindow tenth(day(2026, 1, 10), day(2026, 1, 10));
  EXPECT_FALSE(store->claim({stats}, &tenth, {"e", later}, now));
  const TimePoint much_later(at(2026, 6, 2, 0));
  store->renew("e", much_later);
  held = store->claim({stats}, &tenth, {"f", much_later}, TimePoint(at(2026, 6, 1, 20)));
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->owner, "e");
  EXPECT_EQ(held->expires, much_later);
  // List keys and unpartitioned datasets are claimed too.
  ListPartitionConfig regions("region", {"eu", "us", "apac"}, true);
  DatasetRef sales{"shop", "sales", &regions};
  auto eu_us = regions.window("eu", "us");
  auto us_apac = regions.window("us", "apac");
  auto apac = regions.window("apac", "apac");
  EXPECT_FALSE(store->claim({sales}, &eu_us, {"g", later}, now));
  EXPECT_TRUE(store->claim({sales}, &us_apac, {"h", later}, now).has_value());
  EXPECT_FALSE(store->claim({sales}, &apac, {"h", later}, now));
  DatasetRef dims{"", "dims", nullptr};
  EXPECT_FALSE(store->claim({dims}, nullptr, {"g", later}, now));
  EXPECT_TRUE(store->claim({dims}, nullptr, {"h", later}, now).has_value());
}

// This process's claim token with its host and pid replaced: a process that cannot be running
// (no such pid) on this host, or one on a host this process cannot check.
std::string forged_process(const std::string& host, const std::string& pid) {
  std::istringstream in(detail::this_process());
  std::string my_host, my_pid, boot, start;
  in >> my_host >> my_pid >> boot >> start;
  return (host.empty() ? my_host : host) + " " + pid + " " + boot + " " + start;
}

TEST_F(SqliteStoreTest, ClaimsOfADeadProcessAreTakenOverAtOnceAndOthersAreExplained) {
  ASSERT_FALSE(detail::this_process().empty()) << "no /proc: nothing to check";
  const TimePoint now(at(2026, 6, 1, 12));
  const TimePoint later(at(2026, 6, 1, 13));
  TimePartitionWindow first(day(2026, 1, 1), day(2026, 1, 1));
  TimePartitionWindow second(day(2026, 1, 2), day(2026, 1, 2));
  TimePartitionWindow third(day(2026, 1, 3), day(2026, 1, 3));
  ASSERT_FALSE(store->claim({stats}, &first, {"dead", later}, now));
  ASSERT_FALSE(store->claim({stats}, &second, {"remote", later}, now));
  ASSERT_FALSE(store->claim({stats}, &third, {"old", later}, now));
  {
    sqlite::Database db(path);
    db.exec(("UPDATE claims SET process = '" + forged_process("", "999999999") +
             "' WHERE owner = 'dead'; UPDATE claims SET process = '" +
             forged_process("elsewhere.invalid", "42") +
             "' WHERE owner = 'remote'; UPDATE claims SET process = '' WHERE owner = 'old'")
                .c_str());
  }
  // The dead process's claim is taken over before its lease ends.
  EXPECT_FALSE(store->claim({stats}, &first, {"next", later}, now));
  // A process of another host, or a claim of an earlier version, holds until its lease ends,
  // and the message says why.
  std::optional<Claim> held = store->claim({stats}, &second, {"next", later}, now);
  ASSERT_TRUE(held.has_value());
  EXPECT_NE(held->holder.find("cannot be checked from here (process 42 on host "
                              "elsewhere.invalid)"),
            std::string::npos)
      << held->holder;
  held = store->claim({stats}, &third, {"next", later}, now);
  ASSERT_TRUE(held.has_value());
  EXPECT_NE(held->holder.find("not recorded"), std::string::npos) << held->holder;
}

TEST(PostgresStoreClaims, ClaimsOfAClosedSessionAreTakenOverAtOnce) {
  IL_REQUIRE_POSTGRES(url);
  std::random_device device;
  const std::string schema = "il_claims_" + std::to_string(device() % 1000000000u);
  PostgresStore store(url + "?schema=" + schema);
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
  const TimePoint now(at(2026, 6, 1, 12));
  const TimePoint later(at(2026, 6, 1, 13));
  TimePartitionWindow first(day(2026, 1, 1), day(2026, 1, 1));
  TimePartitionWindow second(day(2026, 1, 2), day(2026, 1, 2));
  {
    // Another store, whose session then ends (as when its process dies or the server restarts).
    PostgresStore gone(url + "?schema=" + schema);
    ASSERT_FALSE(gone.claim({stats}, &first, {"gone", later}, now));
  }
  ASSERT_FALSE(store.claim({stats}, &second, {"old", later}, now));
  postgres::Pool pool(postgres::parse_url(url, {}));
  pool.acquire()->exec("UPDATE \"" + schema +
                       "\".interloper_claims SET backend = '' WHERE owner = 'old'");
  // The session's end reaches pg_stat_activity a moment after the connection closes.
  std::optional<Claim> held;
  for (int i = 0; i < 100; ++i) {
    held = store.claim({stats}, &first, {"next", later}, now);
    if (!held) break;
    EXPECT_NE(held->holder.find("is open"), std::string::npos) << held->holder;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(held.has_value()) << held->holder;
  // A claim of an earlier version holds until its lease ends, and the message says so.
  held = PostgresStore(url + "?schema=" + schema).claim({stats}, &second, {"next", later}, now);
  ASSERT_TRUE(held.has_value());
  EXPECT_NE(held->holder.find("earlier version"), std::string::npos) << held->holder;
  // A live owner's claim holds, and the message says that its session is open.
  TimePartitionWindow third(day(2026, 1, 3), day(2026, 1, 3));
  ASSERT_FALSE(store.claim({stats}, &third, {"live", later}, now));
  held = PostgresStore(url + "?schema=" + schema).claim({stats}, &third, {"other", later}, now);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->owner, "live");
  EXPECT_NE(held->holder.find("its session with the store's server (server process "),
            std::string::npos)
      << held->holder;
}

TEST_P(StoreTest, FailuresOfAWindowWithTheirErrors) {
  TimePartitionWindow month(day(2026, 4, 1), day(2026, 4, 30));
  store->record(stats, &month, done("r1"));
  TimePartitionWindow early(day(2026, 3, 30), day(2026, 4, 2));
  store->record(stats, &early, failed("r2", "disk full"));
  TimePartitionWindow mid(day(2026, 4, 10), day(2026, 4, 10));
  store->record(stats, &mid, failed("r3", "timeout"));
  TimePartitionWindow late(day(2026, 4, 11), day(2026, 4, 12));
  store->record(stats, &late, failed("r4", "bad row"));
  std::vector<FailedRange> f = store->failures(stats, month, 10);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].range, (PartitionRange{0, 1}));  // clipped to the window
  EXPECT_EQ(f[0].record.error, "disk full");
  EXPECT_EQ(f[0].record.run_id, "r2");
  EXPECT_EQ(f[1].range, (PartitionRange{9, 9}));
  EXPECT_EQ(f[1].record.error, "timeout");
  EXPECT_EQ(f[2].range, (PartitionRange{10, 11}));
  EXPECT_EQ(f[2].record.error, "bad row");
  EXPECT_EQ(store->failures(stats, month, 1).size(), 1u);
  TimePartitionWindow quiet(day(2026, 4, 20), day(2026, 4, 30));
  EXPECT_TRUE(store->failures(stats, quiet, 10).empty());

  ListPartitionConfig regions("region", {"eu", "us", "apac"}, true);
  DatasetRef sales{"shop", "sales", &regions};
  auto all = regions.window("eu", "apac");
  store->record(sales, &all, failed("r5", "no feed"));
  auto eu = regions.window("eu", "eu");
  store->record(sales, &eu, done("r6"));
  f = store->failures(sales, all, 10);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].range, (PartitionRange{1, 2}));
  EXPECT_EQ(f[0].record.error, "no feed");
}

TEST_P(StoreTest, ErrorsAreStoredBounded) {
  std::string error = "command failed: " + std::string(10000, 'x') + " stderr: the real cause";
  TimePartitionWindow one(day(2026, 4, 1), day(2026, 4, 1));
  store->record(stats, &one, failed("r", error));
  TimePartition p(day(2026, 4, 1));
  const std::string kept = store->latest(stats, &p)->error;
  EXPECT_LE(kept.size(), kMaxStoredError);
  EXPECT_EQ(kept.rfind("command failed: ", 0), 0u) << kept.substr(0, 40);
  EXPECT_TRUE(kept.ends_with(" stderr: the real cause"));
  EXPECT_NE(kept.find("bytes cut ...]"), std::string::npos);
  // Multi-byte characters are not cut in half.
  std::string accents;
  for (int i = 0; i < 3000; ++i) accents += "\xc3\xa9";
  const std::string bounded = bound_error(accents, 101);
  EXPECT_LE(bounded.size(), 101u);
  EXPECT_EQ(bounded.find("\xc3["), std::string::npos);
  EXPECT_NE(bounded.rfind("]\xc3\xa9"), std::string::npos);
  EXPECT_EQ(bound_error("short"), "short");
}

TEST_P(StoreTest, RunHistoryNewestFirstAndBounded) {
  auto run = [](std::string id, std::string pipeline, RunState state) {
    RunRecord r;
    r.run_id = std::move(id);
    r.pipeline = std::move(pipeline);
    r.command_line = "backfill p.yaml --window 2026-01-01..2026-01-03";
    r.window = "2026-01-01..2026-01-03";
    r.started = TimePoint(at(2026, 5, 1, 10));
    r.finished = TimePoint(at(2026, 5, 1, 11));
    r.state = state;
    r.partitions = 3;
    r.succeeded = 2;
    r.failed = 1;
    r.canceled = 4;
    r.skipped = 5;
    return r;
  };
  store->record_run(run("a", "p.yaml", RunState::running), 3);
  store->record_run(run("b", "other.yaml", RunState::succeeded), 3);
  RunRecord finished = run("a", "p.yaml", RunState::interrupted);
  store->record_run(finished, 3);  // the same run, ended: replaced, not added
  std::vector<RunRecord> runs = store->runs("p.yaml", 10);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0], finished);
  for (const char* id : {"c", "d", "e"})
    store->record_run(run(id, "p.yaml", RunState::succeeded), 3);
  runs = store->runs("p.yaml", 10);
  ASSERT_EQ(runs.size(), 3u);  // kept: the newest three of the pipeline
  EXPECT_EQ(runs[0].run_id, "e");
  EXPECT_EQ(runs[2].run_id, "c");
  EXPECT_EQ(store->runs("p.yaml", 2).size(), 2u);
  EXPECT_EQ(store->runs("", 10).size(), 4u);  // another pipeline's run is kept apart
}

TEST_F(SqliteStoreTest, StoresOneRowPerStateChange) {
  const TimePoint start(day(2025, 1, 1));
  for (int i = 0; i < 400; ++i) {
    TimePoint t = TimeGranularity::DAY.advance(start, i);
    TimePartitionWindow one(t, t);
    store->record(stats, &one, i % 50 == 7 ? failed("r", "e") : done("r"));
  }
  EXPECT_EQ(count_rows(path, "SELECT count(*) FROM partition_ranges"), 17);
  EXPECT_EQ(count_rows(path, "SELECT count(*) FROM failures"), 8);
  // Redoing the failures leaves one range and no failure rows behind.
  for (int i = 7; i < 400; i += 50) {
    TimePoint t = TimeGranularity::DAY.advance(start, i);
    TimePartitionWindow one(t, t);
    store->record(stats, &one, done("r2"));
  }
  EXPECT_EQ(count_rows(path, "SELECT count(*) FROM partition_ranges"), 1);
  EXPECT_EQ(count_rows(path, "SELECT count(*) FROM failures"), 0);
  // Keys drop the failures they no longer refer to as well.
  DatasetRef dims{"", "dims", nullptr};
  store->record(dims, nullptr, failed("r3", "x"));
  EXPECT_EQ(count_rows(path, "SELECT count(*) FROM failures"), 1);
  store->record(dims, nullptr, done("r4"));
  EXPECT_EQ(count_rows(path, "SELECT count(*) FROM failures"), 0);
}

TEST_F(SqliteStoreTest, ConvertsTheEarlierFileFormat) {
  store.reset();
  const std::string old_path = dir / "old.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(old_path.c_str(), &db), SQLITE_OK);
  const char* sql =
      "CREATE TABLE materialization_ranges (source TEXT NOT NULL, asset TEXT NOT NULL,"
      " scope TEXT NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL, status TEXT NOT NULL,"
      " rows INTEGER NOT NULL, run_id TEXT NOT NULL, started TEXT NOT NULL,"
      " finished TEXT NOT NULL, error TEXT NOT NULL, asset_name TEXT NOT NULL,"
      " PRIMARY KEY (source, asset, scope, first)) WITHOUT ROWID;"
      "CREATE TABLE materialization_keys (source TEXT NOT NULL, asset TEXT NOT NULL,"
      " scope TEXT NOT NULL, key TEXT NOT NULL, status TEXT NOT NULL, rows INTEGER NOT NULL,"
      " run_id TEXT NOT NULL, started TEXT NOT NULL, finished TEXT NOT NULL,"
      " error TEXT NOT NULL, asset_name TEXT NOT NULL,"
      " PRIMARY KEY (source, asset, scope, key)) WITHOUT ROWID;"
      // 2026-01-01 is day 20454: days 1-3 done by two runs, day 4 failed, day 5 done.
      "INSERT INTO materialization_ranges VALUES"
      " ('ads', 'stats', 'time:day', 20454, 20455, 'materialized', 2, 'r1',"
      "  '2026-05-01T10:00:00', '2026-05-01T11:00:00', '', 'stats'),"
      " ('ads', 'stats', 'time:day', 20456, 20456, 'materialized', 1, 'r2',"
      "  '2026-05-01T10:00:00', '2026-05-01T11:00:00', '', 'stats'),"
      " ('ads', 'stats', 'time:day', 20457, 20457, 'failed', 0, 'r3',"
      "  '2026-05-01T10:00:00', '2026-05-01T11:00:00', 'boom', 'stats'),"
      " ('ads', 'stats', 'time:day', 20458, 20458, 'materialized', 1, 'r4',"
      "  '2026-05-01T10:00:00', '2026-05-01T11:00:00', '', 'stats');"
      "INSERT INTO materialization_keys VALUES ('', 'dims', 'none', '', 'failed', 0, 'r5',"
      " '2026-05-01T10:00:00', '2026-05-01T11:00:00', 'no file', 'dims');";
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);

  SqliteStore converted(old_path);
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 6));
  WindowStatus s = converted.status(stats, window);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 2}, {4, 4}}));
  EXPECT_EQ(s.failed, (std::vector<PartitionRange>{{3, 3}}));
  EXPECT_EQ(s.missing, (std::vector<PartitionRange>{{5, 5}}));
  TimePartition jan4(day(2026, 1, 4));
  EXPECT_EQ(converted.latest(stats, &jan4)->error, "boom");
  DatasetRef dims{"", "dims", nullptr};
  EXPECT_EQ(converted.latest(dims, nullptr)->error, "no file");
  EXPECT_EQ(count_rows(old_path, "SELECT count(*) FROM partition_ranges"), 3);
  EXPECT_EQ(count_rows(old_path,
                       "SELECT count(*) FROM sqlite_master WHERE name = 'materialization_ranges'"),
            0);
}

TEST_F(SqliteStoreTest, AStoreWrittenBeforeDefinitionsWereKeptOpensWithThemUnknown) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 10));
  store->record(stats, &window, done("r1"));
  store.reset();
  // The same file as the previous version wrote it: no definition columns.
  execute_sql(path,
              "ALTER TABLE partition_ranges DROP COLUMN definition;"
              "ALTER TABLE partition_keys DROP COLUMN definition;"
              "PRAGMA user_version = 4;");

  SqliteStore reopened(path);
  WindowStatus s = reopened.status(stats, window);
  EXPECT_EQ(s.materialized, (std::vector<PartitionRange>{{0, 9}}));
  EXPECT_TRUE(s.stale("current").empty());  // unknown is never stale
  TimePartitionWindow first(day(2026, 1, 1), day(2026, 1, 1));
  reopened.record(stats, &first, done_by("current"));
  s = reopened.status(stats, window);
  EXPECT_EQ(s.definitions, (std::vector<DefinedRange>{{{0, 0}, "current"}, {{1, 9}, ""}}));
  EXPECT_EQ(count_rows(path, "PRAGMA user_version"), 8);
}

TEST_F(SqliteStoreTest, AReaderTakesAVersionFiveFileAsItIsAndAWriterAddsTheLastRecords) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 10));
  store->record(stats, &window, done("r1"));
  store.reset();
  // The file as version 5 wrote it: no last record per dataset.
  execute_sql(path, "DROP TABLE last_records; PRAGMA user_version = 5;");
  {
    auto reader = open_store_read_only(path);
    EXPECT_EQ(reader->status(stats, window).materialized, (std::vector<PartitionRange>{{0, 9}}));
    EXPECT_FALSE(reader->last_record(stats).has_value());
  }
  SqliteStore writer(path);
  EXPECT_FALSE(writer.last_record(stats).has_value());
  writer.record(stats, &window, done("r2"));
  EXPECT_EQ(writer.last_record(stats)->run_id, "r2");
  EXPECT_EQ(count_rows(path, "PRAGMA user_version"), 8);
}

TEST_F(SqliteStoreTest, AVersionSixFileKeepsItsClaimsWhichLapseByTheirLease) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 3));
  const TimePoint now(at(2026, 6, 1, 12));
  const TimePoint later(at(2026, 6, 1, 13));
  store->record(stats, &window, done("r1"));
  ASSERT_FALSE(store->claim({stats}, &window, {"old", later}, now));
  store.reset();
  // The file as version 6 wrote it: claims without their process.
  execute_sql(path, "ALTER TABLE claims DROP COLUMN process; PRAGMA user_version = 6;");
  {
    auto reader = open_store_read_only(path);
    EXPECT_EQ(reader->status(stats, window).materialized, (std::vector<PartitionRange>{{0, 2}}));
  }
  SqliteStore writer(path);
  std::optional<Claim> held = writer.claim({stats}, &window, {"new", later}, now);
  ASSERT_TRUE(held.has_value());
  EXPECT_EQ(held->owner, "old");
  EXPECT_NE(held->holder.find("not recorded"), std::string::npos) << held->holder;
  EXPECT_FALSE(writer.claim({stats}, &window, {"new", later}, later));  // lapsed
  EXPECT_EQ(count_rows(path, "PRAGMA user_version"), 8);
}

TEST_F(SqliteStoreTest, AVersionSevenFileKeepsItsRunsAndCountsCanceledTasksOnceWritten) {
  RunRecord old;
  old.run_id = "old";
  old.pipeline = "p.yaml";
  old.state = RunState::interrupted;
  old.partitions = 4;
  old.failed = 2;
  store->record_run(old, 10);
  store.reset();
  // The file as version 7 wrote it: runs without their canceled count.
  execute_sql(path, "ALTER TABLE runs DROP COLUMN canceled; PRAGMA user_version = 7;");
  {
    auto reader = open_store_read_only(path);
    std::vector<RunRecord> runs = reader->runs("p.yaml", 10);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0], old);  // no canceled count recorded: 0
  }
  EXPECT_EQ(count_rows(path, "PRAGMA user_version"), 7);  // a reader changes nothing
  SqliteStore writer(path);
  EXPECT_EQ(count_rows(path, "PRAGMA user_version"), 8);
  RunRecord next = old;
  next.run_id = "next";
  next.canceled = 2;
  writer.record_run(next, 10);
  std::vector<RunRecord> runs = writer.runs("p.yaml", 10);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], next);
  EXPECT_EQ(runs[1], old);
}

TEST(PostgresStoreRuns, AStoreCreatedBeforeCanceledCountsGetsTheColumnOnce) {
  IL_REQUIRE_POSTGRES(url);
  static std::atomic<int> counter{0};
  std::random_device device;
  const std::string schema =
      "il_store_runs_" + std::to_string(device() % 1000000000u) + "_" + std::to_string(++counter);
  RunRecord old;
  old.run_id = "old";
  old.pipeline = "p.yaml";
  old.state = RunState::interrupted;
  old.failed = 2;
  PostgresStore(url + "?schema=" + schema).record_run(old, 10);
  auto server = std::make_shared<const postgres::Url>(postgres::parse_url(url, {}));
  {
    // The runs table as earlier versions created it: no canceled column.
    postgres::Connection conn(server);
    conn.exec("ALTER TABLE \"" + schema + "\".interloper_runs DROP COLUMN canceled");
  }
  RunRecord next = old;
  next.run_id = "next";
  next.canceled = 3;
  PostgresStore(url + "?schema=" + schema).record_run(next, 10);
  PostgresStore again(url + "?schema=" + schema);  // the column exists already: nothing to do
  std::vector<RunRecord> runs = again.runs("p.yaml", 10);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0], next);
  EXPECT_EQ(runs[1], old);
  postgres::Connection(server).exec("DROP SCHEMA \"" + schema + "\" CASCADE");
}

TEST_F(SqliteStoreTest, AReaderSeesAFileAWriterHasNotFilledYetAsEmpty) {
  store.reset();
  // A writer creates the file before it commits the tables; a reader in between sees nothing.
  const std::string fresh = dir / "fresh.db";
  { std::ofstream touch(fresh); }
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 3));
  auto reader = open_store_read_only(fresh);
  EXPECT_EQ(reader->status(stats, window).missing, (std::vector<PartitionRange>{{0, 2}}));
  // A file holding someone else's tables is not mistaken for an empty store.
  const std::string foreign = dir / "foreign.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THROW(open_store_read_only(foreign), DestinationError);
}

}  // namespace
}  // namespace interloper
