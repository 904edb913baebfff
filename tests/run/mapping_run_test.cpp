// Dependencies with mappings, run: an asset reading its own earlier partitions, a partition
// reading its upstream's day before, and a rolling window made stale by its upstream.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "interloper/interloper.hpp"

namespace {

using namespace std::chrono;

const il::TimePoint kStart = year{2026} / November / 1;

il::TimePartitionConfig daily(std::optional<il::TimePoint> start = kStart) {
  return il::TimePartitionConfig("date", {.start = start});
}

il::TimePartitionWindow days(std::string_view text) {
  return il::TimePartitionWindow::parse(text);
}

// A balance: yesterday's rows plus one, so the partition of day N from the start holds N rows
// exactly when every day ran after the one before. Keeps the order the days ran in.
struct Balances {
  std::shared_ptr<il::MemoryDestination> destination = std::make_shared<il::MemoryDestination>();
  il::MemoryStore store;
  std::mutex mutex;
  std::vector<std::string> ran;

  il::DAG dag() {
    il::Source s("s", destination);
    s.asset("balances",
            [this](il::ExecutionContext& ctx) {
              const il::Table before = ctx.load("balances");
              {
                std::lock_guard lock(mutex);
                ran.push_back(ctx.partition().key());
              }
              il::Table rows;
              for (std::size_t i = 0; i <= before.num_rows(); ++i) {
                rows.append({{"date", ctx.partition_date()}, {"n", static_cast<std::int64_t>(i)}});
              }
              return rows;
            })
        .partitioning(daily())
        .dep("balances", il::DepMapping::offset(-1));
    return il::DAG({s});
  }

  std::size_t rows(std::string_view day) {
    il::Source s("s", destination);
    s.asset("balances", [](il::ExecutionContext&) { return il::Table(); }).partitioning(daily());
    const il::TimePartitionWindow window = days(day);
    return destination->read(s.assets()[0].dataset(), &window).num_rows();
  }
};

TEST(SelfDependency, RunsOldestFirstEachDayAfterTheOneItReads) {
  Balances b;
  const il::DAG dag = b.dag();
  il::BackfillOptions options;
  options.concurrency = 4;
  options.run.store = &b.store;
  const il::BackfillResult result = il::backfill(dag, days("2026-11-01..2026-11-10"), options);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.succeeded(), 10u);
  ASSERT_EQ(b.ran.size(), 10u);
  EXPECT_EQ(b.ran.front(), "2026-11-01");
  EXPECT_EQ(b.ran.back(), "2026-11-10");
  EXPECT_TRUE(std::is_sorted(b.ran.begin(), b.ran.end()));
  // The first day's yesterday is before the start: it reads nothing.
  EXPECT_EQ(b.rows("2026-11-01"), 1u);
  EXPECT_EQ(b.rows("2026-11-10"), 10u);
}

TEST(SelfDependency, AFirstBackfillRunsTheEarlierDaysAndALaterOneOnlyTheRequest) {
  Balances b;
  const il::DAG dag = b.dag();
  il::BackfillOptions options;
  options.run.store = &b.store;
  const il::TimePartitionWindow two = days("2026-11-05..2026-11-06");
  il::PlanOptions plan_options;
  plan_options.store = &b.store;
  const il::Plan plan = il::plan(dag, &two, plan_options);
  EXPECT_EQ(plan.steps()[0].share->to_string(), "2026-11-01..2026-11-06");
  EXPECT_EQ(plan.related(plan.steps()[0].first_task + 3, 0), (il::PartitionRange{2, 2}));
  EXPECT_EQ(plan.related(plan.steps()[0].first_task, 0), std::nullopt);
  EXPECT_EQ(plan.readers(plan.steps()[0].first_task + 3, 0), (il::PartitionRange{4, 4}));

  il::BackfillResult result = il::backfill(dag, days("2026-11-05..2026-11-06"), options);
  EXPECT_EQ(result.succeeded(), 6u);
  EXPECT_EQ(b.rows("2026-11-06"), 6u);
  b.ran.clear();
  result = il::backfill(dag, days("2026-11-05..2026-11-06"), options);
  EXPECT_EQ(result.succeeded(), 2u);
  EXPECT_EQ(result.tasks.skipped, 4u);
  EXPECT_EQ(b.ran, (std::vector<std::string>{"2026-11-05", "2026-11-06"}));
  EXPECT_EQ(b.rows("2026-11-06"), 6u);
}

TEST(SelfDependency, ManyPartitionsInOneTaskAreRefused) {
  Balances b;
  const il::DAG dag = b.dag();
  const il::TimePartitionWindow week = days("2026-11-01..2026-11-07");
  il::PlanOptions per_asset;
  per_asset.scope = il::TaskScope::per_asset;
  EXPECT_THROW(il::plan(dag, &week, per_asset), il::PartitionError);
}

// Yesterday's events, counted: one row per day upstream.
il::DAG previous_day(std::shared_ptr<il::MemoryDestination> destination) {
  il::Source s("s", destination);
  s.asset("events", [](il::ExecutionContext& ctx) {
     il::Table rows;
     rows.append({{"date", ctx.partition_date()}, {"id", 1}});
     return rows;
   }).partitioning(daily());
  s.asset("stats", [](il::ExecutionContext& ctx) {
     const il::Table yesterday = ctx.load("events");
     il::Table rows;
     rows.append({{"date", ctx.partition_date()},
                  {"seen", static_cast<std::int64_t>(yesterday.num_rows())}});
     return rows;
   })
      .partitioning(daily())
      .dep("events", il::DepMapping::offset(-1));
  return il::DAG({s});
}

TEST(PreviousDay, APlainBackfillRunsTheUpstreamsDayBeforeFirst) {
  auto destination = std::make_shared<il::MemoryDestination>();
  const il::DAG dag = previous_day(destination);
  il::MemoryStore store;
  il::BackfillOptions options;
  options.run.store = &store;
  const il::BackfillResult result = il::backfill(dag, days("2026-11-03..2026-11-05"), options);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.succeeded(), 7u);  // events 11-02..11-05, stats 11-03..11-05
  const il::Table stats = destination->read(dag.asset("stats").dataset(), nullptr);
  ASSERT_EQ(stats.num_rows(), 3u);
  for (const il::Value& seen : stats.column("seen")) EXPECT_EQ(seen.as_int(), 1);
  // The first day reads nothing and succeeds.
  const il::BackfillResult first = il::backfill(dag, days("2026-11-01"), options);
  EXPECT_TRUE(first.ok());
  const il::TimePartitionWindow day = days("2026-11-01");
  const il::Table day_one = destination->read(dag.asset("stats").dataset(), &day);
  ASSERT_EQ(day_one.num_rows(), 1u);
  EXPECT_EQ(day_one.column("seen")[0].as_int(), 0);
}

TEST(PreviousDay, AMissingDayBeforeIsReportedWhenTheUpstreamIsNotRun) {
  auto destination = std::make_shared<il::MemoryDestination>();
  const il::DAG dag = previous_day(destination);
  il::MemoryStore store;
  il::BackfillOptions options;
  options.run.store = &store;
  options.run.assets = {"stats"};
  const il::BackfillResult result = il::backfill(dag, days("2026-11-03"), options);
  ASSERT_EQ(result.failed(), 1u);
  EXPECT_EQ(result.failures[0].error, "upstream 'events': 1 of 1 partitions missing");
}

TEST(RollingWindow, ReRunningADayMakesTheSevenReadersStaleAndMissingRunsExactlyThem) {
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("events", [](il::ExecutionContext& ctx) {
     il::Table rows;
     rows.append({{"date", ctx.partition_date()}, {"id", 1}});
     return rows;
   }).partitioning(daily());
  s.asset("rolling", [](il::ExecutionContext& ctx) {
     il::Table rows;
     rows.append({{"date", ctx.partition_date()},
                  {"events", static_cast<std::int64_t>(ctx.load("events").num_rows())}});
     return rows;
   })
      .partitioning(daily())
      .dep("events", il::DepMapping::window(-6, 0));
  const il::DAG dag({s});
  il::MemoryStore store;
  il::BackfillOptions options;
  options.run.store = &store;
  const il::TimePartitionWindow month = days("2026-11-01..2026-11-30");
  ASSERT_TRUE(il::backfill(dag, month, options).ok());
  const il::Asset& rolling = dag.asset("rolling");
  EXPECT_TRUE(store.status(rolling.dataset(), month).stale(rolling.definition_fingerprint()).empty());

  options.run.assets = {"events"};
  ASSERT_EQ(il::backfill(dag, days("2026-11-03"), options).succeeded(), 1u);
  EXPECT_EQ(store.status(rolling.dataset(), month).stale(rolling.definition_fingerprint()),
            (std::vector<il::PartitionRange>{{2, 8}}));  // 2026-11-03..2026-11-09

  options.run.assets = {};
  options.missing_only = true;
  const il::BackfillResult again = il::backfill(dag, month, options);
  EXPECT_EQ(again.succeeded(), 7u);
  EXPECT_TRUE(store.status(rolling.dataset(), month).stale(rolling.definition_fingerprint()).empty());
}

}  // namespace
