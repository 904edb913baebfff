// A run's store calls, grouped: the outcomes of its tasks reach the store in batches (and
// always by the time the run returns: finished, failed or stopped), the claims it took are all
// given up, and a process killed mid-run leaves no partition recorded without its rows.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "interloper/interloper.hpp"

namespace {

using namespace std::chrono;

il::TimePoint day(int d) {
  return il::TimeGranularity::DAY.advance(il::TimePoint(year{2026} / 1 / 1), d - 1);
}

const il::TimePartitionConfig kDaily("date");

// A SQLite store that counts the records it is given, one by one and in batches, and fails
// every record of the partition `refuse` (when set).
class CountingStore final : public il::MaterializationStore {
 public:
  explicit CountingStore(std::string path) : inner_(std::move(path)) {}
  bool groups_calls() const override { return true; }
  void record(const il::DatasetRef& d, const il::PartitionWindow* w,
              const il::MaterializationRecord& r) override {
    ++singles;
    if (refuse && w != nullptr && w->to_string() == *refuse) throw il::DestinationError("refused");
    inner_.record(d, w, r);
  }
  void record_all(const std::vector<il::PartitionOutcome>& outcomes) override {
    ++batches;
    largest = std::max(largest.load(), outcomes.size());
    for (const il::PartitionOutcome& o : outcomes) {
      if (refuse && o.window && o.window->to_string() == *refuse) {
        throw il::DestinationError("refused");
      }
    }
    inner_.record_all(outcomes);
  }
  void forget(const il::DatasetRef& d, const il::PartitionWindow* w) override {
    inner_.forget(d, w);
  }
  il::WindowStatus status(const il::DatasetRef& d, const il::PartitionWindow& w) override {
    return inner_.status(d, w);
  }
  std::optional<il::MaterializationRecord> latest(const il::DatasetRef& d,
                                                  const il::Partition* p) override {
    return inner_.latest(d, p);
  }
  std::optional<il::MaterializationRecord> last_record(const il::DatasetRef& d) override {
    return inner_.last_record(d);
  }
  std::vector<il::FailedRange> failures(const il::DatasetRef& d, const il::PartitionWindow& w,
                                        std::size_t limit) override {
    return inner_.failures(d, w, limit);
  }
  std::optional<il::Claim> claim(const std::vector<il::DatasetRef>& d, const il::PartitionWindow* w,
                                 const il::Claim& c, il::TimePoint now) override {
    return inner_.claim(d, w, c, now);
  }
  std::vector<std::optional<il::Claim>> claim_all(const std::vector<il::ClaimRequest>& r,
                                                  const il::Claim& c, il::TimePoint now) override {
    ++claim_batches;
    return inner_.claim_all(r, c, now);
  }
  void release(const std::vector<il::DatasetRef>& d, const il::PartitionWindow* w,
               std::string_view owner) override {
    inner_.release(d, w, owner);
  }
  void release_all(const std::vector<il::ClaimRequest>& r, std::string_view owner) override {
    inner_.release_all(r, owner);
  }
  void renew(std::string_view owner, il::TimePoint expires) override {
    inner_.renew(owner, expires);
  }
  void record_run(const il::RunRecord& run, std::size_t keep) override {
    inner_.record_run(run, keep);
  }
  std::vector<il::RunRecord> runs(std::string_view pipeline, std::size_t last) override {
    return inner_.runs(pipeline, last);
  }

  std::atomic<std::size_t> singles{0}, batches{0}, largest{0}, claim_batches{0};
  std::optional<std::string> refuse;

 private:
  il::SqliteStore inner_;
};

// Daily ten-row assets over a SQLite destination and store in a directory of their own.
class StoreBatchRun : public ::testing::Test {
 protected:
  // The days in `fail` throw; `after` runs once a day's rows are made. Into `into`, or the
  // test's destination.
  il::DAG dag(std::function<void(const std::string&)> after = {},
              std::shared_ptr<il::Destination> into = nullptr) {
    il::Source s("ads", into ? into : destination_);
    s.asset("stats", [this, after](il::ExecutionContext& ctx) -> il::Table {
       const std::string key = il::TimePoint(ctx.partition_date()).date_string();
       if (fail.count(key) != 0) throw std::runtime_error("no data for " + key);
       il::Table t;
       for (int i = 0; i < 10; ++i) t.append({{"date", ctx.partition_date()}, {"n", i}});
       if (after) after(key);
       return t;
     }).partitioning(kDaily);
    return il::DAG({s});
  }
  il::BackfillResult backfill(const il::DAG& dag, int days, int workers = 1,
                              std::atomic<bool>* stop = nullptr) {
    il::BackfillOptions options;
    options.run.store = &store;
    options.run.stop = stop;
    options.concurrency = workers;
    return il::backfill(dag, il::TimePartitionWindow(day(1), day(days)), options);
  }
  il::WindowStatus status(const il::DAG& dag, int days) {
    return store.status(dag.asset("stats").dataset(), il::TimePartitionWindow(day(1), day(days)));
  }
  // True when another owner can claim every day of the first `days`: the run left no claim.
  bool nothing_claimed(const il::DAG& dag, int days) {
    const il::TimePartitionWindow all(day(1), day(days));
    const il::TimePoint now = il::SystemClock().now();
    return !store.claim({dag.asset("stats").dataset()}, &all,
                        {"someone else", il::TimePoint(now.seconds() + seconds(60))}, now);
  }

  std::filesystem::path dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "il-batch-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    return std::filesystem::path(pattern);
  }();
  std::shared_ptr<il::Destination> destination_ =
      il::open_destination("sqlite:" + (dir / "data.db").string());
  CountingStore store{(dir / "state.db").string()};
  std::set<std::string> fail;

  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

TEST_F(StoreBatchRun, EveryOutcomeIsInTheStoreWhenTheRunReturnsRecordedInBatches) {
  const il::DAG d = dag();
  for (int workers : {1, 4}) {
    store.forget(d.asset("stats").dataset(), nullptr);
    store.batches = 0;
    const il::BackfillResult result = backfill(d, 200, workers);
    ASSERT_TRUE(result.ok());
    const il::WindowStatus s = status(d, 200);
    EXPECT_EQ(s.count(s.materialized), 200u) << workers << " workers";
    EXPECT_EQ(store.singles, 0u);
    EXPECT_LT(store.batches, 200u);  // grouped: fewer store calls than tasks
    EXPECT_LE(store.largest, 32u);
    EXPECT_TRUE(nothing_claimed(d, 200));
    store.release_all({{{d.asset("stats").dataset()},
                        std::make_shared<il::TimePartitionWindow>(day(1), day(200))}},
                      "someone else");
  }
  EXPECT_LT(store.claim_batches, 400u);  // claims taken ahead, several in one call
}

TEST_F(StoreBatchRun, FailedTasksAreRecordedWithTheRest) {
  fail = {"2026-01-07", "2026-01-30"};
  const il::DAG d = dag();
  const il::BackfillResult result = backfill(d, 40);
  EXPECT_EQ(result.tasks.failed, 2u);
  const il::WindowStatus s = status(d, 40);
  EXPECT_EQ(s.count(s.materialized), 38u);
  EXPECT_EQ(s.count(s.failed), 2u);
  const auto failures =
      store.failures(d.asset("stats").dataset(), il::TimePartitionWindow(day(1), day(40)), 5);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].record.error, "no data for 2026-01-07");
  EXPECT_TRUE(nothing_claimed(d, 40));
}

TEST_F(StoreBatchRun, AStoppedRunRecordsWhatItWroteAndGivesUpItsClaims) {
  std::atomic<bool> stop{false};
  std::atomic<int> done{0};
  const il::DAG d = dag([&](const std::string&) {
    if (++done == 10) stop = true;
  });
  const il::BackfillResult result = backfill(d, 100, 1, &stop);
  EXPECT_EQ(result.tasks.succeeded, 10u);
  EXPECT_EQ(result.tasks.canceled, 90u);
  const il::WindowStatus s = status(d, 100);
  EXPECT_EQ(s.count(s.materialized), 10u);
  EXPECT_EQ(s.count(s.missing), 90u);
  EXPECT_TRUE(nothing_claimed(d, 100));  // the claims taken ahead too
}

TEST_F(StoreBatchRun, AnOutcomeTheStoreRefusesFailsItsTaskAlone) {
  store.refuse = "2026-01-03";
  const il::DAG d = dag();
  const il::BackfillResult result = backfill(d, 6);
  EXPECT_EQ(result.tasks.succeeded, 5u);
  EXPECT_EQ(result.tasks.failed, 1u);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(result.failures[0].window, "2026-01-03");
  EXPECT_EQ(result.failures[0].error, "recording the outcome failed: refused");
  const il::WindowStatus s = status(d, 6);
  EXPECT_EQ(s.count(s.materialized), 5u);
  EXPECT_EQ(s.count(s.missing), 1u);
}

// Killed mid-run again and again: whatever the store records as materialized has its rows,
// and a backfill of the missing partitions completes the rest.
TEST_F(StoreBatchRun, AKilledBackfillNeverRecordsAPartitionWithoutItsRows) {
  constexpr int kDays = 600;
  auto slowly = [](const std::string&) { std::this_thread::sleep_for(microseconds(300)); };
  const il::DAG d = dag(slowly);
  const il::DatasetRef dataset = d.asset("stats").dataset();
  for (int kill_after_ms : {40, 90, 150, 220}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Connections of its own: none is carried across fork().
      const il::DAG own_dag =
          dag(slowly, il::open_destination("sqlite:" + (dir / "data.db").string()));
      il::BackfillOptions options;
      il::SqliteStore own((dir / "state.db").string());
      options.run.store = &own;
      options.missing_only = true;
      // Forked, not started: its claims name this test's process, which lives on, so they
      // lapse only with their lease.
      options.claim_lease = seconds(1);
      il::backfill(own_dag, il::TimePartitionWindow(day(1), day(kDays)), options);
      ::_exit(0);
    }
    std::this_thread::sleep_for(milliseconds(kill_after_ms));
    ::kill(child, SIGKILL);
    int wstatus = 0;
    ::waitpid(child, &wstatus, 0);
    const il::WindowStatus s = status(d, kDays);
    for (const il::PartitionRange& r : s.materialized) {
      for (std::size_t i = r.first; i <= r.last; ++i) {
        const il::TimePartition p(day(static_cast<int>(i) + 1));
        ASSERT_EQ(destination_->row_count(dataset, &p), 10) << p.key() << " recorded without rows";
      }
    }
  }
  std::this_thread::sleep_for(milliseconds(1100));  // the killed runs' claims lapse
  il::BackfillOptions options;
  options.run.store = &store;
  options.missing_only = true;
  const il::BackfillResult rest =
      il::backfill(d, il::TimePartitionWindow(day(1), day(kDays)), options);
  EXPECT_TRUE(rest.ok());
  const il::WindowStatus s = status(d, kDays);
  EXPECT_EQ(s.count(s.materialized), static_cast<std::size_t>(kDays));
  EXPECT_EQ(destination_->row_count(dataset, nullptr), 10 * kDays);
}

}  // namespace
