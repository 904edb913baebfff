// The SQL state store under injected faults, the SQLite test_vfs way: a FaultySession in front of
// the store's session fails its Nth call, for every N an update makes (a record of a window, a
// forget, a claim, a run record), on every engine. After each fault the store reads as it did
// before the update or as it does after it, never a mix, and the update run again succeeds.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <random>
#include <sstream>

#include "destination/storage_fixtures.hpp"
#include "interloper/sqlsession/faulty_session.hpp"
#include "interloper/store/sql_store_state.hpp"
#include "support/postgres.hpp"

namespace interloper {
namespace {

using testing::at;
using testing::day;
using testing::TempDir;

// A SqlStore whose state a test reaches, to put a session in front of the engine's.
class OpenedStore : public SqlStore {
 public:
  explicit OpenedStore(std::unique_ptr<detail::SqlStoreState> s) : SqlStore(std::move(s)) {}
  detail::SqlStoreState& inner() { return state(); }
};

MaterializationRecord outcome(std::string asset, MaterializationStatus status, std::string run,
                              std::string error = "", std::string definition = "") {
  MaterializationRecord r;
  r.asset = std::move(asset);
  r.status = status;
  r.rows = 3;
  r.run_id = std::move(run);
  r.started = TimePoint(at(2026, 5, 1, 10));
  r.finished = TimePoint(at(2026, 5, 1, 11));
  r.error = std::move(error);
  r.definition = std::move(definition);
  return r;
}

RunRecord run(std::string id, RunState state) {
  RunRecord r;
  r.run_id = std::move(id);
  r.pipeline = "p.yaml";
  r.state = state;
  r.succeeded = state == RunState::succeeded ? 1 : 0;
  return r;
}

std::ostream& operator<<(std::ostream& out, const std::vector<PartitionRange>& ranges) {
  for (const PartitionRange& r : ranges) out << r.first << '-' << r.last << ' ';
  return out;
}

std::ostream& operator<<(std::ostream& out, const std::optional<MaterializationRecord>& r) {
  if (!r) return out << "none";
  return out << r->asset << ' ' << static_cast<int>(r->status) << ' ' << r->rows << ' ' << r->run_id
             << ' ' << r->started << ' ' << r->finished << ' ' << r->error << ' ' << r->definition;
}

class StoreFaultTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() != "postgres") return;
    IL_REQUIRE_POSTGRES(url);
    url_ = url;
  }

  std::unique_ptr<OpenedStore> open() {
    static std::atomic<int> counter{0};
    const std::string n = std::to_string(++counter);
    if (GetParam() == "sqlite") {
      return std::make_unique<OpenedStore>(
          detail::open_sqlite_state(dir / ("store" + n + ".db"), false));
    }
    std::random_device device;
    return std::make_unique<OpenedStore>(detail::open_postgres_state(
        url_ + "?schema=il_fault_" + std::to_string(device() % 1000000000u) + "_" + n));
  }

  // The state every update starts from.
  void seed(MaterializationStore& s) {
    TimePartitionWindow january(day(2026, 1, 1), day(2026, 1, 31));
    s.record(stats, &january, outcome("stats", ok, "r1", "", "def-a"));
    TimePartitionWindow middle(day(2026, 1, 10), day(2026, 1, 12));
    s.record(stats, &middle, outcome("stats", bad, "r1", "boom"));
    ListPartitionWindow emea_us = regions.window("emea", "us");
    s.record(by_region, &emea_us, outcome("by_region", ok, "r1"));
    ListPartitionWindow apac = regions.window("apac", "apac");
    s.record(by_region, &apac, outcome("by_region", bad, "r1", "no region"));
    s.record(totals, nullptr, outcome("totals", ok, "r1"));
    TimePartitionWindow held(day(2026, 1, 20), day(2026, 1, 21));
    ASSERT_FALSE(s.claim({stats}, &held, {"other", TimePoint(at(2099, 1, 1, 0))}, now));
    TimePartitionWindow lapsed(day(2026, 1, 1), day(2026, 1, 1));
    ASSERT_FALSE(s.claim({stats}, &lapsed, {"gone", TimePoint(at(2026, 5, 1, 0))}, before_now));
    s.record_run(run("r1", RunState::succeeded), 5);
  }

  // All three roles of the store, as text.
  std::string snapshot(OpenedStore& s) {
    std::ostringstream out;
    TimePartitionWindow january(day(2026, 1, 1), day(2026, 1, 31));
    ListPartitionWindow all = regions.window("emea", "latam");
    for (const auto& [dataset, window] :
         {std::pair<const DatasetRef*, const PartitionWindow*>{&stats, &january},
          {&by_region, &all}}) {
      const WindowStatus st = s.status(*dataset, *window);
      out << "materialized " << st.materialized << "failed " << st.failed << "missing "
          << st.missing << "\n";
      for (const DefinedRange& d : st.definitions) {
        out << "defined " << d.range.first << '-' << d.range.last << ' ' << d.definition << "\n";
      }
      for (const FailedRange& f : s.failures(*dataset, *window, 100)) {
        out << "failure " << f.range.first << '-' << f.range.last << ' '
            << std::optional<MaterializationRecord>(f.record) << "\n";
      }
      out << "last " << s.last_record(*dataset) << "\n";
    }
    out << "totals " << s.latest(totals, nullptr) << "\n";
    for (const RunRecord& r : s.runs("", 100)) {
      out << "run " << r.run_id << ' ' << r.pipeline << ' ' << run_state_name(r.state) << ' '
          << r.succeeded << "\n";
    }
    const Table claims = s.inner().query(
        "SELECT source, asset, scope, key, first, last, owner, expires FROM " +
        s.inner().t("claims") + " ORDER BY source, asset, scope, key, first, owner");
    for (std::size_t i = 0; i < claims.num_rows(); ++i) {
      out << "claim";
      for (std::size_t c = 0; c < claims.num_columns(); ++c) {
        out << ' ' << claims.column(c)[i].to_string();
      }
      out << "\n";
    }
    return out.str();
  }

  // Runs `update` on a store failing at call 1, 2, ... until the update makes no more calls.
  void sweep(const std::function<void(MaterializationStore&)>& update) {
    auto reference = open();
    seed(*reference);
    const std::string before = snapshot(*reference);
    update(*reference);
    const std::string after = snapshot(*reference);
    ASSERT_NE(before, after);
    for (std::size_t n = 1; n < 1000; ++n) {
      auto store = open();
      seed(*store);
      sql::FaultySession faulty(store->inner().db(), n);
      store->inner().interposed = &faulty;
      bool threw = false;
      try {
        update(*store);
      } catch (const DestinationError&) {
        threw = true;
      }
      store->inner().interposed = nullptr;
      if (!faulty.failed()) {
        EXPECT_FALSE(threw);
        EXPECT_EQ(snapshot(*store), after);
        EXPECT_GT(n, 2u) << "the update made too few calls to be swept";
        return;
      }
      EXPECT_TRUE(threw) << "fault at call " << n << " was not reported";
      const std::string got = snapshot(*store);
      EXPECT_TRUE(got == before || got == after)
          << "fault at call " << n << " left neither the old state nor the new:\n"
          << got << "\nbefore:\n"
          << before << "\nafter:\n"
          << after;
      update(*store);
      EXPECT_EQ(snapshot(*store), after) << "the update run again after the fault at call " << n;
    }
    FAIL() << "the update never ran out of calls";
  }

  const MaterializationStatus ok = MaterializationStatus::materialized;
  const MaterializationStatus bad = MaterializationStatus::failed;
  TempDir dir;
  std::string url_;
  TimePartitionConfig daily{"date", {.allow_window = true}};
  ListPartitionConfig regions{"region", {"emea", "us", "apac", "latam"}, true};
  DatasetRef stats{"ads", "stats", &daily};
  DatasetRef by_region{"ads", "by_region", &regions};
  DatasetRef totals{"ads", "totals", nullptr};
  TimePoint before_now{at(2026, 4, 1, 0)};
  TimePoint now{at(2026, 5, 1, 12)};
};

INSTANTIATE_TEST_SUITE_P(Engines, StoreFaultTest, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST_P(StoreFaultTest, ARecordOfATimeWindow) {
  sweep([&](MaterializationStore& s) {
    // Splits the failed range, drops the failure no range refers to any more, merges.
    TimePartitionWindow window(day(2026, 1, 11), day(2026, 1, 25));
    s.record(stats, &window, outcome("stats", bad, "r2", "again"));
  });
}

TEST_P(StoreFaultTest, ARecordOfAListWindow) {
  sweep([&](MaterializationStore& s) {
    ListPartitionWindow window = regions.window("us", "latam");
    s.record(by_region, &window, outcome("by_region", ok, "r2", "", "def-b"));
  });
}

TEST_P(StoreFaultTest, AForgetOfAWholeDataset) {
  sweep([&](MaterializationStore& s) { s.forget(stats, nullptr); });
}

TEST_P(StoreFaultTest, AClaim) {
  sweep([&](MaterializationStore& s) {
    TimePartitionWindow window(day(2026, 1, 22), day(2026, 1, 23));
    // Deletes the lapsed claim and takes one for two datasets, all or nothing.
    auto held = s.claim({stats, totals}, &window, {"me", TimePoint(at(2026, 5, 1, 13))}, now);
    EXPECT_FALSE(held.has_value());
  });
}

TEST_P(StoreFaultTest, ABatchOfRecords) {
  sweep([&](MaterializationStore& s) {
    // Consecutive days joined into one range, a failed day, a list key and an unpartitioned
    // dataset, all in one transaction.
    auto days = [&](int first, int last) {
      return std::make_shared<TimePartitionWindow>(day(2026, 2, first), day(2026, 2, last));
    };
    s.record_all({{stats, days(3, 3), outcome("stats", ok, "r3", "", "def-c")},
                  {stats, days(2, 2), outcome("stats", ok, "r3", "", "def-c")},
                  {stats, days(4, 4), outcome("stats", bad, "r3", "late")},
                  {stats, days(1, 1), outcome("stats", ok, "r3", "", "def-c")},
                  {by_region, std::make_shared<ListPartitionWindow>(regions.window("emea", "emea")),
                   outcome("by_region", bad, "r3", "down")},
                  {totals, nullptr, outcome("totals", bad, "r3", "empty")}});
  });
}

TEST_P(StoreFaultTest, ABatchOfClaims) {
  sweep([&](MaterializationStore& s) {
    auto window = [&](int d) {
      return std::make_shared<TimePartitionWindow>(day(2026, 1, d), day(2026, 1, d));
    };
    // The second request meets "other"'s claim and alone is refused.
    auto held = s.claim_all({{{stats}, window(22)}, {{stats}, window(20)}, {{totals}, nullptr}},
                            {"me", TimePoint(at(2026, 5, 1, 13))}, now);
    ASSERT_EQ(held.size(), 3u);
    EXPECT_FALSE(held[0].has_value());
    ASSERT_TRUE(held[1].has_value());
    EXPECT_EQ(held[1]->owner, "other");
    EXPECT_FALSE(held[2].has_value());
  });
}

TEST_P(StoreFaultTest, ABatchOfReleases) {
  sweep([&](MaterializationStore& s) {
    auto window = [&](int d) {
      return std::make_shared<TimePartitionWindow>(day(2026, 1, d), day(2026, 1, d));
    };
    s.release_all({{{stats}, window(20)}, {{stats}, window(21)}, {{totals}, nullptr}}, "other");
  });
}

TEST_P(StoreFaultTest, ARunRecord) {
  sweep([&](MaterializationStore& s) {
    // Adds a run and trims the history of its pipeline to it.
    s.record_run(run("r2", RunState::failed), 1);
  });
}

}  // namespace
}  // namespace interloper
