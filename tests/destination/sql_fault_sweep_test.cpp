// Fault injection the way SQLite's test_vfs tests a database: every call a window write makes on
// its SqlSession is failed in turn (a FaultySession fails the Nth), on SQLite and PostgreSQL.
// After each fault every partition of the window holds its old rows or its new rows (all of the
// window the one or the other), never a mix and never nothing, the partition registry agrees
// with the rows, and the same write run again succeeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "destination/fault_sweep_rows.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/session_hook.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sqlsession/faulty_session.hpp"
#include "support/postgres.hpp"

namespace interloper {
namespace {

using testing::day;
using testing::TempDir;

const DatasetRef& kOrders = testing::kSweepOrders;
const TimePartitionWindow& kWindow = testing::kSweepWindow;
using testing::sweep_ids;
Table rows(int first, int n, bool extra = false) { return testing::sweep_rows(first, n, extra); }

// The ids each day of the window holds, sorted.
std::vector<std::vector<long long>> ids_by_day(Destination& destination) {
  return {sweep_ids(destination, 1), sweep_ids(destination, 2)};
}

std::vector<std::vector<long long>> expected(int first, int n) {
  std::vector<std::vector<long long>> out(2);
  for (int d = 0; d < 2; ++d) {
    for (int i = 0; i < n; ++i) out[d].push_back(first + d * 100 + i);
  }
  return out;
}

// A fresh destination of one engine, one per call.
class Engine {
 public:
  explicit Engine(std::string engine) : engine_(std::move(engine)) {}
  ~Engine() {
    if (pool_) {
      for (const std::string& schema : schemas_) {
        try {
          pool_->acquire()->exec("DROP SCHEMA IF EXISTS " + sql::quote_identifier(schema) +
                                 " CASCADE");
        } catch (const std::exception&) {
        }
      }
    }
  }
  bool available() const { return engine_ == "sqlite" || testing::postgres_url(); }
  std::unique_ptr<Destination> fresh() {
    ++count_;
    if (engine_ == "sqlite") {
      return std::make_unique<SqliteDestination>(dir_ / ("w" + std::to_string(count_) + ".db"));
    }
    const std::string url = *testing::postgres_url();
    if (!pool_) pool_ = std::make_unique<postgres::Pool>(postgres::parse_url(url, {"schema"}));
    schemas_.push_back(testing::fresh_schema("sweep"));
    return std::make_unique<PostgresDestination>(testing::with_schema(url, schemas_.back()));
  }

 private:
  std::string engine_;
  TempDir dir_{"il-sweep"};
  int count_ = 0;
  std::unique_ptr<postgres::Pool> pool_;
  std::vector<std::string> schemas_;
};

// Each window writer opened while this lives runs on a FaultySession failing call `fail_at`.
class Faults {
 public:
  explicit Faults(std::size_t fail_at) {
    detail::set_session_wrap([this, fail_at](sql::SqlSession& inner) -> sql::SqlSession& {
      sessions_.push_back(std::make_unique<sql::FaultySession>(inner, fail_at));
      return *sessions_.back();
    });
  }
  ~Faults() { detail::set_session_wrap(nullptr); }
  std::size_t calls() const {
    std::size_t n = 0;
    for (const auto& s : sessions_) n += s->calls();
    return n;
  }

 private:
  std::vector<std::unique_ptr<sql::FaultySession>> sessions_;
};

class SqlFaultSweep : public ::testing::TestWithParam<std::string> {
 protected:
  // Sweeps every call of writing `next` over the window, which holds `rows(1, 2)` before.
  void sweep(const Table& next, const std::vector<std::vector<long long>>& after) {
    Engine engine(GetParam());
    if (!engine.available()) {
      if (testing::postgres_required()) FAIL() << "no PostgreSQL server";
      GTEST_SKIP() << "no PostgreSQL server: run under scripts/with-postgres";
    }
    const auto before = expected(1, 2);
    std::size_t calls = 0;
    {
      auto destination = engine.fresh();
      destination->write(kOrders, &kWindow, rows(1, 2));
      Faults counting(0);
      destination->write(kOrders, &kWindow, next);
      calls = counting.calls();
    }
    ASSERT_GT(calls, 3u);
    for (std::size_t n = 1; n <= calls; ++n) {
      SCOPED_TRACE("fault at call " + std::to_string(n) + " of " + std::to_string(calls));
      auto destination = engine.fresh();
      destination->write(kOrders, &kWindow, rows(1, 2));
      {
        Faults faults(n);
        EXPECT_THROW(destination->write(kOrders, &kWindow, next), DestinationError);
      }
      const auto held = ids_by_day(*destination);
      EXPECT_TRUE(held == before || held == after)
          << "day 1 holds " << ::testing::PrintToString(held[0]) << ", day 2 holds "
          << ::testing::PrintToString(held[1]);
      // The registry agrees with the rows.
      for (const PartitionCount& count : destination->partition_counts(kOrders, kWindow)) {
        EXPECT_TRUE(count.written) << count.key;
        const std::size_t d = count.key == "2026-01-01" ? 0 : 1;
        EXPECT_EQ(count.rows, static_cast<std::int64_t>(held[d].size())) << count.key;
      }
      // Run again, the write succeeds.
      destination->write(kOrders, &kWindow, next);
      EXPECT_EQ(ids_by_day(*destination), after);
    }
  }
};

TEST_P(SqlFaultSweep, AWindowWriteIsWhollyDoneOrNotAtAll) { sweep(rows(11, 3), expected(11, 3)); }

TEST_P(SqlFaultSweep, AWriteThatChangesTheSchemaIsWhollyDoneOrNotAtAll) {
  sweep(rows(21, 3, true), expected(21, 3));
}

INSTANTIATE_TEST_SUITE_P(Engines, SqlFaultSweep, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace interloper
