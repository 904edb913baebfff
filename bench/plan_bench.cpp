// The partition graph at scale: planning years of hours over a DAG that mixes granularities,
// executing a mixed plan, and a backfill of a million partitions.
//
//   build/bench/plan_bench
//
// Counters: plan_ms and tasks (5 years of hours, 20 assets; target < 1000 ms), plan_rss_mb (the
// growth of peak RSS while planning; target < 100), us_per_task (executing trivial tasks with
// their dependencies derived by arithmetic; target <= 20), backfill_rss_mb (peak RSS of a 10^6
// partition backfill; target < 100); and for 10^6 asset-partitions joined by mappings (offset,
// trailing windows, an asset reading itself) plan_ms, walk_ms and plan_rss_mb.
#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include "interloper/interloper.hpp"

namespace {

using namespace std::chrono;

double peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  }
  return 0;
}

il::Table nothing(il::ExecutionContext&) { return il::Table(); }

// Hourly, daily and monthly assets in turn, each reading the previous asset of its own
// granularity and the finer one beside it, so that every edge between two granularities appears.
il::DAG mixed_dag(int assets, std::shared_ptr<il::Destination> destination = nullptr) {
  const il::TimePartitionConfig hourly("hour", {.granularity = il::TimeGranularity::HOUR});
  const il::TimePartitionConfig daily("date", {.granularity = il::TimeGranularity::DAY});
  const il::TimePartitionConfig monthly("month", {.granularity = il::TimeGranularity::MONTH});
  const il::TimePartitionConfig* configs[] = {&hourly, &daily, &monthly};
  il::Source source("bench", std::move(destination));
  for (int i = 0; i < assets; ++i) {
    std::vector<std::string> deps;
    if (i >= 3) deps.push_back("a" + std::to_string(i - 3));      // same granularity
    if (i % 3 != 0) deps.push_back("a" + std::to_string(i - 1));  // the finer one beside it
    source.asset("a" + std::to_string(i), nothing).partitioning(*configs[i % 3]).deps(deps);
  }
  return il::DAG({source});
}

void BM_PlanFiveYearsOfHours(benchmark::State& state) {
  il::DAG dag = mixed_dag(20);
  const il::TimePoint start = year{2021} / 1 / 1;
  const il::TimePartitionWindow window(start, year{2025} / 12 / 31);
  const double rss_before = peak_rss_mb();
  double total_ms = 0;
  std::size_t tasks = 0;
  for (auto _ : state) {
    const auto t0 = steady_clock::now();
    il::Plan plan = il::plan(dag, &window, {});
    total_ms += duration<double, std::milli>(steady_clock::now() - t0).count();
    tasks = plan.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["plan_ms"] = total_ms / static_cast<double>(state.iterations());
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["plan_rss_mb"] = peak_rss_mb() - rss_before;
}
BENCHMARK(BM_PlanFiveYearsOfHours)->Unit(benchmark::kMillisecond);

// Executes every task of a 20-asset mixed plan over `days` days (memory destination, trivial
// assets): the runner's cost per task, dependencies included.
void BM_ExecuteMixedPlan(benchmark::State& state) {
  const auto days = static_cast<int>(state.range(0));
  double total_us = 0;
  std::size_t tasks = 0, failed = 0;
  for (auto _ : state) {
    il::DAG placed = mixed_dag(20, std::make_shared<il::MemoryDestination>());
    const il::TimePoint start = year{2001} / 1 / 1;
    const il::TimePartitionWindow window(start,
                                         il::TimeGranularity::DAY.advance(start, days - 1));
    il::ExecuteOptions options;
    il::Plan plan = il::plan(placed, &window, {});
    const auto t0 = steady_clock::now();
    il::PlanResult result = il::execute(placed, plan, options);
    total_us += duration<double, std::micro>(steady_clock::now() - t0).count();
    tasks = plan.size();
    failed += result.failed();
  }
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["us_per_task"] =
      total_us / static_cast<double>(state.iterations()) / static_cast<double>(tasks);
  state.counters["failed"] = static_cast<double>(failed);
}
BENCHMARK(BM_ExecuteMixedPlan)->Arg(500)->Iterations(1)->Unit(benchmark::kMillisecond);

// A backfill of 10^6 hourly partitions of one trivial asset with a store: results stream, so
// memory stays flat.
void BM_BackfillMillionPartitions(benchmark::State& state) {
  for (auto _ : state) {
    auto destination = std::make_shared<il::MemoryDestination>();
    il::MemoryStore store;
    il::Source source("bench", destination);
    source.asset("tick", nothing)
        .partitioning(il::TimePartitionConfig("hour", {.granularity = il::TimeGranularity::HOUR}));
    il::DAG dag({source});
    const il::TimePoint start = year{1950} / 1 / 1;
    const il::TimePartitionWindow window(
        start, il::TimeGranularity::HOUR.advance(start, 999'999), il::TimeGranularity::HOUR);
    il::BackfillOptions options;
    options.run.store = &store;
    options.claim = false;
    il::BackfillResult result = il::backfill(dag, window, options);
    state.counters["tasks"] = static_cast<double>(result.succeeded());
  }
  state.counters["backfill_rss_mb"] = peak_rss_mb();
}
BENCHMARK(BM_BackfillMillionPartitions)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

// Five daily assets over 200,000 days (10^6 asset-partitions) whose edges are mappings: a
// balance reading its own day before and the day's events, a 7-day rolling window, yesterday of
// the balance, and a 30-day window of the rolling one. plan_ms is the planning alone (target
// < 1000 ms); walk_ms adds asking every task for the tasks it waits for, as execution does.
void BM_PlanMappedMillion(benchmark::State& state) {
  const il::TimePoint start = year{1500} / 1 / 1;
  const il::TimePartitionConfig daily("date", {.start = start});
  il::Source source("bench");
  source.asset("events", nothing).partitioning(daily);
  source.asset("balances", nothing)
      .partitioning(daily)
      .deps({"events"})
      .dep("balances", il::DepMapping::offset(-1));
  source.asset("rolling", nothing).partitioning(daily).dep("events", il::DepMapping::window(-6, 0));
  source.asset("change", nothing).partitioning(daily).dep("balances", il::DepMapping::offset(-1));
  source.asset("report", nothing)
      .partitioning(daily)
      .deps({"change"})
      .dep("rolling", il::DepMapping::window(-29, 0));
  const il::DAG dag({source});
  const il::TimePartitionWindow window(start, il::TimeGranularity::DAY.advance(start, 199'999));
  il::MemoryStore store;
  const double rss_before = peak_rss_mb();
  double plan_ms = 0, walk_ms = 0;
  std::size_t tasks = 0, edges = 0;
  for (auto _ : state) {
    const auto t0 = steady_clock::now();
    il::PlanOptions options;
    options.store = &store;
    il::Plan plan = il::plan(dag, &window, options);
    plan_ms += duration<double, std::milli>(steady_clock::now() - t0).count();
    for (const il::Plan::Step& step : plan.steps()) {
      for (std::size_t t = step.first_task; t < step.first_task + step.tasks; ++t) {
        for (std::size_t up : step.upstream) {
          if (auto r = plan.related(t, up)) edges += r->last - r->first + 1;
        }
      }
    }
    walk_ms += duration<double, std::milli>(steady_clock::now() - t0).count();
    tasks = plan.size();
    benchmark::DoNotOptimize(plan);
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["plan_ms"] = plan_ms / n;
  state.counters["walk_ms"] = walk_ms / n;
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["edges"] = static_cast<double>(edges) / n;
  state.counters["plan_rss_mb"] = peak_rss_mb() - rss_before;
}
BENCHMARK(BM_PlanMappedMillion)->Iterations(3)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
