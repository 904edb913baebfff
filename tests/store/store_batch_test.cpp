// The batched calls of the stores (record_all, claim_all, release_all): a batch leaves a store
// as the same calls one by one do, on every store kind, and the SQL stores join a run's
// consecutive partitions into one range.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <sstream>

#include "destination/storage_fixtures.hpp"
#include "interloper/store.hpp"
#include "support/postgres.hpp"

namespace interloper {
namespace {

using testing::at;
using testing::day;
using testing::TempDir;

MaterializationRecord outcome(MaterializationStatus status, std::string error = "") {
  MaterializationRecord r;
  r.asset = "stats";
  r.status = status;
  r.rows = 4;
  r.run_id = "r1";
  r.started = TimePoint(at(2026, 5, 1, 10));
  r.finished = TimePoint(at(2026, 5, 1, 11));
  r.error = std::move(error);
  if (status == MaterializationStatus::materialized) r.definition = "def-a";
  return r;
}

class StoreBatchTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<MaterializationStore> open(const std::string& name) {
    if (GetParam() == "memory") return std::make_unique<MemoryStore>();
    if (GetParam() == "sqlite") return std::make_unique<SqliteStore>(dir / (name + ".db"));
    auto url = testing::postgres_url();
    if (!url) return nullptr;
    static std::atomic<int> counter{0};
    std::random_device device;
    return std::make_unique<PostgresStore>(*url + "?schema=il_batch_" +
                                           std::to_string(device() % 1000000000u) + "_" +
                                           std::to_string(++counter));
  }

  std::shared_ptr<const PartitionWindow> days(int first, int last) const {
    return std::make_shared<TimePartitionWindow>(day(2026, 3, first), day(2026, 3, last));
  }

  // What a store says of the datasets, as text.
  std::string said(MaterializationStore& s) {
    std::ostringstream out;
    const TimePartitionWindow march(day(2026, 3, 1), day(2026, 3, 31));
    for (const DatasetRef* d : {&stats, &clicks}) {
      const WindowStatus status = s.status(*d, march);
      for (const auto* ranges : {&status.materialized, &status.failed, &status.missing}) {
        for (const PartitionRange& r : *ranges) out << r.first << '-' << r.last << ' ';
        out << "| ";
      }
      for (const FailedRange& f : s.failures(*d, march, 10)) {
        out << f.range.first << '-' << f.range.last << ':' << f.record.error << ' ';
      }
      if (auto last = s.last_record(*d)) out << "last " << last->error << ' ' << last->rows;
      out << '\n';
    }
    const ListPartitionWindow all = regions.window("eu", "apac");
    const WindowStatus listed = s.status(by_region, all);
    out << "list " << listed.count(listed.materialized) << ' ' << listed.count(listed.failed);
    if (auto whole = s.latest(totals, nullptr)) out << " totals " << whole->error;
    return out.str();
  }

  // A run's outcomes: days 1-12 newest first (the 5th failed), a list key, the whole table.
  std::vector<PartitionOutcome> outcomes() const {
    std::vector<PartitionOutcome> out;
    for (int d = 12; d >= 1; --d) {
      out.push_back({stats, days(d, d),
                     d == 5 ? outcome(MaterializationStatus::failed, "boom")
                            : outcome(MaterializationStatus::materialized)});
    }
    out.push_back({clicks, days(20, 22), outcome(MaterializationStatus::materialized)});
    out.push_back({by_region, std::make_shared<ListPartitionWindow>(regions.window("us", "us")),
                   outcome(MaterializationStatus::failed, "no us")});
    out.push_back({totals, nullptr, outcome(MaterializationStatus::failed, "empty")});
    return out;
  }

  TempDir dir;
  TimePartitionConfig daily{"date", {.allow_window = true}};
  ListPartitionConfig regions{"region", {"eu", "us", "apac"}, true};
  DatasetRef stats{"ads", "stats", &daily};
  DatasetRef clicks{"ads", "clicks", &daily};
  DatasetRef by_region{"ads", "by_region", &regions};
  DatasetRef totals{"ads", "totals", nullptr};
};

INSTANTIATE_TEST_SUITE_P(Stores, StoreBatchTest, ::testing::Values("memory", "sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST_P(StoreBatchTest, ABatchOfRecordsLeavesWhatTheRecordsOneByOneLeave) {
  auto batched = open("batched");
  auto single = open("single");
  if (!batched) GTEST_SKIP() << "no PostgreSQL server";
  // Earlier state the batch partly overwrites.
  for (MaterializationStore* s : {batched.get(), single.get()}) {
    s->record(stats, days(1, 31).get(), outcome(MaterializationStatus::failed, "old"));
  }
  batched->record_all(outcomes());
  for (const PartitionOutcome& o : outcomes()) single->record(o.dataset, o.window.get(), o.record);
  EXPECT_EQ(said(*batched), said(*single));
  EXPECT_NE(said(*batched).find("4-4:boom"), std::string::npos) << said(*batched);
  batched->record_all({});  // nothing to do
  EXPECT_EQ(said(*batched), said(*single));
}

TEST_P(StoreBatchTest, ABatchOfClaimsTakesEachRequestOnItsOwnAndABatchReleasesThem) {
  auto s = open("claims");
  if (!s) GTEST_SKIP() << "no PostgreSQL server";
  const TimePoint now(at(2026, 6, 1, 12));
  const TimePoint later(at(2026, 6, 1, 13));
  ASSERT_FALSE(s->claim({stats}, days(3, 3).get(), {"other", later}, now));
  const std::vector<ClaimRequest> requests{{{stats}, days(1, 1)},
                                           {{stats, clicks}, days(2, 3)},
                                           {{clicks}, days(3, 3)},
                                           {{totals}, nullptr}};
  const auto held = s->claim_all(requests, {"me", later}, now);
  ASSERT_EQ(held.size(), 4u);
  EXPECT_FALSE(held[0]);
  ASSERT_TRUE(held[1]);  // all or nothing: day 2 of clicks is not taken either
  EXPECT_EQ(held[1]->owner, "other");
  EXPECT_FALSE(held[2]);
  EXPECT_FALSE(held[3]);
  EXPECT_FALSE(s->claim({clicks}, days(2, 2).get(), {"third", later}, now));
  EXPECT_TRUE(s->claim({stats}, days(1, 1).get(), {"third", later}, now));
  EXPECT_TRUE(s->claim({totals}, nullptr, {"third", later}, now));
  s->release_all(requests, "me");
  EXPECT_FALSE(s->claim({stats}, days(1, 1).get(), {"third", later}, now));
  EXPECT_FALSE(s->claim({clicks}, days(3, 3).get(), {"third", later}, now));
  EXPECT_FALSE(s->claim({totals}, nullptr, {"third", later}, now));
  EXPECT_TRUE(s->claim({stats}, days(3, 3).get(), {"third", later}, now));  // still other's
  EXPECT_TRUE(s->claim_all({}, {"me", later}, now).empty());
}

TEST(SqliteStoreBatch, ARunsConsecutivePartitionsRecordedTogetherAreOneRange) {
  TempDir dir;
  SqliteStore store(dir / "state.db");
  TimePartitionConfig daily{"date"};
  DatasetRef stats{"ads", "stats", &daily};
  std::vector<PartitionOutcome> batch;
  for (int d = 31; d >= 1; --d) {
    MaterializationRecord r = outcome(MaterializationStatus::materialized);
    batch.push_back(
        {stats, std::make_shared<TimePartitionWindow>(day(2026, 1, d), day(2026, 1, d)), r});
  }
  store.record_all(batch);
  const WindowStatus s =
      store.status(stats, TimePartitionWindow(day(2026, 1, 1), day(2026, 1, 31)));
  ASSERT_EQ(s.materialized.size(), 1u);
  EXPECT_EQ(s.count(s.materialized), 31u);
  EXPECT_EQ(store.last_record(stats)->rows, 4);
}

}  // namespace
}  // namespace interloper
