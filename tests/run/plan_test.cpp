// The partition graph: plans across granularities, their dependencies, and their execution.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "interloper/interloper.hpp"

namespace {

using namespace std::chrono;
using G = il::TimeGranularity;

const std::vector<G> kAll = {G::HOUR, G::DAY, G::WEEK, G::MONTH, G::QUARTER, G::YEAR};

il::Table empty_table(il::ExecutionContext&) { return il::Table(); }

bool overlap(const il::Bounds& a, const il::Bounds& b) {
  return a.start < b.end && b.start < a.end;
}

// The bounds of partition `index` of a step, read from its share.
il::Bounds bounds_of(const il::Plan::Step& step, std::size_t index) {
  const auto& share = dynamic_cast<const il::TimePartitionWindow&>(*step.share);
  return share.at(index).bounds();
}

// For every task of both steps, the related range of the other step equals the partitions
// whose bounds overlap, found by comparing every pair.
void expect_overlaps_match(const il::Plan& plan, std::size_t a, std::size_t b,
                           const std::string& what) {
  const il::Plan::Step& from = plan.steps()[a];
  const il::Plan::Step& to = plan.steps()[b];
  for (std::size_t i = 0; i < from.tasks; ++i) {
    std::vector<std::size_t> expected;
    for (std::size_t j = 0; j < to.tasks; ++j) {
      if (overlap(bounds_of(from, i), bounds_of(to, j))) expected.push_back(j);
    }
    std::vector<std::size_t> actual;
    if (auto range = plan.related(from.first_task + i, b)) {
      for (std::size_t j = range->first; j <= range->last; ++j) actual.push_back(j);
    }
    ASSERT_EQ(actual, expected) << what << ": task " << i << " of " << from.asset->name();
  }
}

TEST(Plan, EveryPairOfGranularitiesRelatesByOverlappingBounds) {
  // A year end where ISO week 2026-W53 straddles into 2027, and a month end mid-year where
  // 2026-W22 straddles May and June.
  const std::vector<il::TimePartitionWindow> requests = {
      il::TimePartitionWindow(year{2026} / 12 / 27, year{2027} / 1 / 5, G::DAY),
      il::TimePartitionWindow(year{2026} / 5 / 27, year{2026} / 6 / 2, G::DAY),
      il::TimePartitionWindow(year{2026} / 3 / 1, year{2026} / 4 / 1, G::MONTH),
  };
  for (const auto& request : requests) {
    for (G up : kAll) {
      for (G down : kAll) {
        il::Source s("s", std::make_shared<il::MemoryDestination>());
        s.asset("up", empty_table).partitioning(il::TimePartitionConfig("t", {.granularity = up}));
        s.asset("down", empty_table)
            .partitioning(il::TimePartitionConfig("t", {.granularity = down}))
            .deps({"up"});
        il::DAG dag({s});
        il::Plan plan = il::plan(dag, &request);
        ASSERT_EQ(plan.steps().size(), 2u);
        const std::string what =
            fmt::format("{} -> {} over {}", up.name(), down.name(), request.to_string());
        // Each share is the asset's own partitions overlapping the request.
        for (const il::Plan::Step& step : plan.steps()) {
          const auto& share = dynamic_cast<const il::TimePartitionWindow&>(*step.share);
          EXPECT_TRUE(overlap(share.first().bounds(), request.bounds())) << what;
          EXPECT_TRUE(overlap(share.last().bounds(), request.bounds())) << what;
          EXPECT_LE(share.bounds().start, request.bounds().start) << what;
          EXPECT_GE(share.bounds().end, request.bounds().end) << what;
        }
        expect_overlaps_match(plan, 1, 0, what);  // what each downstream task reads
        expect_overlaps_match(plan, 0, 1, what);  // who reads each upstream task
      }
    }
  }
}

TEST(Plan, IsoWeeksReadTheDaysOfTheWeekAndTheMonthsTheyStraddle) {
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("daily", empty_table).partitioning(il::TimePartitionConfig("t"));
  s.asset("monthly", empty_table)
      .partitioning(il::TimePartitionConfig("t", {.granularity = G::MONTH}));
  s.asset("weekly", empty_table)
      .partitioning(il::TimePartitionConfig("t", {.granularity = G::WEEK}))
      .deps({"daily", "monthly"});
  il::DAG dag({s});
  // 2026-W53 runs from Monday 2026-12-28 to Sunday 2027-01-03.
  il::TimePartitionWindow request = il::TimePartitionWindow::parse("2026-W53");
  il::Plan plan = il::plan(dag, &request);
  ASSERT_EQ(plan.steps().size(), 3u);
  EXPECT_EQ(plan.steps()[0].share->to_string(), "2026-12-28..2027-01-03");
  EXPECT_EQ(plan.steps()[1].share->to_string(), "2026-12..2027-01");
  EXPECT_EQ(plan.steps()[2].share->to_string(), "2026-W53");
  const std::size_t week = plan.steps()[2].first_task;
  EXPECT_EQ(plan.related(week, 0), (il::PartitionRange{0, 6}));
  EXPECT_EQ(plan.related(week, 1), (il::PartitionRange{0, 1}));
  EXPECT_EQ(plan.size(), 7u + 2u + 1u);
}

TEST(Plan, SharesAreClampedToEachAssetsStart) {
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("late", empty_table)
      .partitioning(il::TimePartitionConfig("t", {.start = il::TimePoint(year{2026} / 11 / 20)}));
  il::DAG dag({s});
  il::TimePartitionWindow november = il::TimePartitionWindow::parse("2026-11");
  il::Plan plan = il::plan(dag, &november);
  EXPECT_EQ(plan.steps()[0].share->to_string(), "2026-11-20..2026-11-30");
  il::TimePartitionWindow october = il::TimePartitionWindow::parse("2026-10");
  try {
    il::plan(dag, &october);
    FAIL();
  } catch (const il::PartitionError& e) {
    EXPECT_STREQ(e.what(),
                 "asset 'late': window 2026-10 lies entirely before start 2026-11-20T00:00:00");
  }
}

TEST(Plan, PerAssetTasksNeedAllowWindowAndTheErrorListsEveryAsset) {
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("hourly", empty_table)
      .partitioning(il::TimePartitionConfig("t", {.granularity = G::HOUR}));
  s.asset("daily", empty_table).partitioning(il::TimePartitionConfig("t")).deps({"hourly"});
  s.asset("monthly", empty_table)
      .partitioning(il::TimePartitionConfig("t", {.granularity = G::MONTH}))
      .deps({"daily"});
  il::DAG dag({s});
  il::TimePartitionWindow november = il::TimePartitionWindow::parse("2026-11");
  il::PlanOptions options;
  options.scope = il::TaskScope::per_asset;
  try {
    il::plan(dag, &november, options);
    FAIL();
  } catch (const il::PartitionError& e) {
    EXPECT_STREQ(e.what(),
                 "asset 'hourly': window 2026-11-01T00..2026-11-30T23 has 720 partitions but "
                 "allow_window is off\n"
                 "asset 'daily': window 2026-11-01..2026-11-30 has 30 partitions but "
                 "allow_window is off");
  }
  // The month alone needs no window: one task.
  options.assets = {"monthly"};
  il::Plan plan = il::plan(dag, &november, options);
  EXPECT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan.window(0)->to_string(), "2026-11");
}

// hourly -> daily -> monthly, each writing one row per hour it saw, all in memory.
struct HourDayMonth {
  std::shared_ptr<il::MemoryDestination> destination = std::make_shared<il::MemoryDestination>();
  std::string broken_hour;  // this hour's task throws
  std::unique_ptr<il::DAG> dag;

  HourDayMonth() {
    il::Source s("s", destination);
    s.asset("hourly", [this](il::ExecutionContext& ctx) {
       const auto& hour = dynamic_cast<const il::TimePartitionWindow&>(ctx.window());
       if (ctx.partition().key() == broken_hour) throw std::runtime_error("broken hour");
       il::Table t;
       t.append({{"t", hour.start().seconds()}, {"n", 1}});
       return t;
     }).partitioning(il::TimePartitionConfig("t", {.granularity = G::HOUR}));
    // Each rollup keeps one row per hour it read, so its row count is the hours it covers.
    auto rollup = [](std::string upstream) {
      return [upstream](il::ExecutionContext& ctx) {
        const auto& own = dynamic_cast<const il::TimePartitionWindow&>(ctx.window());
        il::Table read = ctx.load(upstream);
        il::Table t;
        for (std::size_t r = 0; r < read.num_rows(); ++r)
          t.append({{"t", own.start().seconds()}, {"n", 1}});
        return t;
      };
    };
    s.asset("daily", rollup("hourly"))
        .partitioning(il::TimePartitionConfig("t"))
        .deps({"hourly"});
    s.asset("monthly", rollup("daily"))
        .partitioning(il::TimePartitionConfig("t", {.granularity = G::MONTH}))
        .deps({"daily"});
    dag = std::make_unique<il::DAG>(std::vector<il::Source>{s});
  }

  std::int64_t rows(const std::string& asset, const std::string& key) {
    const il::Asset& a = dag->asset(asset);
    return destination->row_count(a.dataset(), a.partitioning()->partition(key).get());
  }
};

struct Outcomes {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::function<void(const il::TaskResult&)> callback() {
    return [this](const il::TaskResult& t) {
      std::lock_guard lock(mutex);
      lines.push_back(t.asset + " " + t.window + " " + std::string(il::status_name(t.status)));
    };
  }
  std::vector<std::string> with(const std::string& status) {
    std::vector<std::string> out;
    for (const auto& line : lines) {
      if (line.size() > status.size() && line.ends_with(" " + status)) out.push_back(line);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST(Execute, LoadReadsTheUpstreamPartitionsOverlappingTheWindow) {
  HourDayMonth p;
  il::TimePartitionWindow november = il::TimePartitionWindow::parse("2026-11-01..2026-11-30");
  il::BackfillOptions options;
  options.concurrency = 3;
  il::BackfillResult result = il::backfill(*p.dag, november, options);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.tasks.succeeded, 720u + 30u + 1u);
  EXPECT_EQ(p.rows("hourly", "2026-11-15T07"), 1);
  EXPECT_EQ(p.rows("daily", "2026-11-15"), 24);
  EXPECT_EQ(p.rows("monthly", "2026-11"), 30 * 24);
}

TEST(Execute, NewestReadyTaskFirst) {
  HourDayMonth p;
  il::TimePartitionWindow two_days = il::TimePartitionWindow::parse("2026-11-29..2026-11-30");
  Outcomes outcomes;
  il::BackfillOptions options;
  options.run.assets = {"hourly", "daily"};
  options.on_task = outcomes.callback();
  il::backfill(*p.dag, two_days, options);
  ASSERT_EQ(outcomes.lines.size(), 50u);
  EXPECT_EQ(outcomes.lines[0], "hourly 2026-11-30T23 succeeded");
  EXPECT_EQ(outcomes.lines[23], "hourly 2026-11-30T00 succeeded");
  EXPECT_EQ(outcomes.lines[24], "daily 2026-11-30 succeeded");  // as soon as its hours are done
  EXPECT_EQ(outcomes.lines[25], "hourly 2026-11-29T23 succeeded");
  EXPECT_EQ(outcomes.lines[49], "daily 2026-11-29 succeeded");
}

TEST(Execute, OneFailedHourCancelsExactlyItsDayAndMonth) {
  HourDayMonth p;
  p.broken_hour = "2026-11-15T13";
  il::TimePartitionWindow two_months = il::TimePartitionWindow::parse("2026-11..2026-12");
  Outcomes outcomes;
  il::BackfillOptions options;
  options.concurrency = 2;
  options.on_task = outcomes.callback();
  il::BackfillResult result = il::backfill(*p.dag, two_months, options);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(outcomes.with("failed"), (std::vector<std::string>{"hourly 2026-11-15T13 failed"}));
  EXPECT_EQ(outcomes.with("canceled"),
            (std::vector<std::string>{"daily 2026-11-15 canceled", "monthly 2026-11 canceled"}));
  EXPECT_EQ(result.tasks.failed, 1u);
  EXPECT_EQ(result.tasks.canceled, 2u);
  EXPECT_EQ(result.tasks.succeeded, (61u * 24u - 1u) + 60u + 1u);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(result.failures[0].error, "broken hour");
  EXPECT_EQ(p.rows("monthly", "2026-12"), 31 * 24);
  EXPECT_EQ(p.rows("daily", "2026-11-16"), 24);
}

TEST(Execute, MissingRerunsAPartitionAndOnlyWhatReadsIt) {
  HourDayMonth p;
  il::MemoryStore store;
  il::TimePartitionWindow two_months = il::TimePartitionWindow::parse("2026-11..2026-12");
  il::BackfillOptions options;
  options.run.store = &store;
  ASSERT_TRUE(il::backfill(*p.dag, two_months, options).ok());

  // Everything is up to date: nothing runs.
  options.missing_only = true;
  il::BackfillResult idle = il::backfill(*p.dag, two_months, options);
  EXPECT_EQ(idle.tasks.skipped, 61u * 24u + 61u + 2u);
  EXPECT_EQ(idle.tasks.succeeded, 0u);

  // One hour's latest outcome is a failure: it, its day and its month run again.
  const il::Asset& hourly = p.dag->asset("hourly");
  il::MaterializationRecord failed;
  failed.asset = "hourly";
  failed.status = il::MaterializationStatus::failed;
  failed.error = "lost";
  store.record(hourly.dataset(),
               hourly.partitioning()->partition("2026-12-02T05")->as_window().get(), failed);
  Outcomes outcomes;
  options.on_task = outcomes.callback();
  std::size_t planned = 0;
  options.on_plan = [&](std::size_t to_run, std::size_t) { planned = to_run; };
  il::BackfillResult again = il::backfill(*p.dag, two_months, options);
  EXPECT_TRUE(again.ok());
  EXPECT_EQ(planned, 3u);
  EXPECT_EQ(outcomes.lines,
            (std::vector<std::string>{"hourly 2026-12-02T05 succeeded",
                                      "daily 2026-12-02 succeeded", "monthly 2026-12 succeeded"}));
  EXPECT_EQ(p.rows("monthly", "2026-12"), 31 * 24);

  // A missing downstream partition runs alone: its upstreams are up to date.
  store.record(p.dag->asset("daily").dataset(),
               p.dag->asset("daily").partitioning()->partition("2026-11-03")->as_window().get(),
               failed);
  outcomes.lines.clear();
  il::backfill(*p.dag, two_months, options);
  EXPECT_EQ(outcomes.lines,
            (std::vector<std::string>{"daily 2026-11-03 succeeded", "monthly 2026-11 succeeded"}));
}

TEST(Execute, UnselectedUpstreamsAreReadNotRun) {
  HourDayMonth p;
  il::TimePartitionWindow day = il::TimePartitionWindow::parse("2026-11-15");
  ASSERT_TRUE(il::backfill(*p.dag, day).ok());
  il::BackfillOptions options;
  options.run.assets = {"monthly"};
  Outcomes outcomes;
  options.on_task = outcomes.callback();
  il::TimePartitionWindow month = il::TimePartitionWindow::parse("2026-11");
  ASSERT_TRUE(il::backfill(*p.dag, month, options).ok());
  EXPECT_EQ(outcomes.lines, (std::vector<std::string>{"monthly 2026-11 succeeded"}));
  EXPECT_EQ(p.rows("monthly", "2026-11"), 24);  // the one day stored so far
}

TEST(Execute, ListPartitionsMapOneToOne) {
  auto destination = std::make_shared<il::MemoryDestination>();
  il::Source s("s", destination);
  il::ListPartitionConfig regions("region", {"eu", "us", "apac"});
  std::mutex mutex;
  std::vector<std::string> seen;
  s.asset("raw", [](il::ExecutionContext& ctx) {
     if (ctx.partition().key() == "us") throw std::runtime_error("no data");
     il::Table t;
     t.append({{"region", ctx.partition().key()}});
     return t;
   }).partitioning(regions);
  s.asset("clean",
          [&](il::ExecutionContext& ctx) {
            std::lock_guard lock(mutex);
            seen.push_back(ctx.partition().key());
            return ctx.load("raw");
          })
      .partitioning(regions)
      .deps({"raw"});
  il::DAG dag({s});
  il::BackfillResult result = il::backfill(dag, regions.window("eu", "apac"));
  EXPECT_EQ(result.tasks.failed, 1u);
  EXPECT_EQ(result.tasks.canceled, 1u);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"apac", "eu"}));
}

TEST(Execute, RunnerGivesEachAssetItsOwnShare) {
  HourDayMonth p;
  il::Source s("s", p.destination);
  std::mutex mutex;
  std::map<std::string, std::string> windows;
  auto record = [&](std::string name) {
    return [&, name](il::ExecutionContext& ctx) {
      std::lock_guard lock(mutex);
      windows[name] = ctx.window().to_string();
      return il::Table();
    };
  };
  s.asset("hourly", record("hourly"))
      .partitioning(il::TimePartitionConfig("t", {.granularity = G::HOUR, .allow_window = true}));
  s.asset("monthly", record("monthly"))
      .partitioning(il::TimePartitionConfig("t", {.granularity = G::MONTH}))
      .deps({"hourly"});
  il::DAG dag({s});
  il::RunResult result =
      il::ThreadedRunner(2).run(dag, il::TimePartitionWindow::parse("2026-02-01..2026-02-28"));
  EXPECT_TRUE(result.ok()) << result.error_summary();
  EXPECT_EQ(windows["hourly"], "2026-02-01T00..2026-02-28T23");
  EXPECT_EQ(windows["monthly"], "2026-02");
}

}  // namespace
