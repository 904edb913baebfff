// Runner overhead: a long backfill of a 3-asset chain in memory, and validating a huge window.
//
//   build/bench/runner_bench
//
// Counters: us_per_asset_partition (target <= 20), peak_rss_mb (VmHWM), validate_ms (< 100).
// BM_BackfillOneAssetSqlite: one asset of 10 rows a day into SQLite with a SQLite store.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
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

il::DAG chain(std::shared_ptr<il::Destination> destination) {
  const il::TimePartitionConfig daily("date");
  il::Source s("bench", std::move(destination));
  s.asset("raw", [](il::ExecutionContext& ctx) {
     const il::Value date(ctx.partition_date());
     il::Table t;
     t.reserve(10);
     for (int i = 0; i < 10; ++i) t.append({{"date", date}, {"id", i}, {"clicks", i * 3}});
     return t;
   }).partitioning(daily);
  s.asset("clean",
          [](il::ExecutionContext& ctx) {
            il::Table raw = ctx.load("raw");
            il::Table t;
            t.reserve(raw.num_rows());
            for (std::size_t r = 0; r < raw.num_rows(); ++r) {
              t.append({{"date", raw.at(r, "date")},
                        {"id", raw.at(r, "id")},
                        {"clicks", raw.at(r, "clicks").as_int() + 1}});
            }
            return t;
          })
      .partitioning(daily)
      .deps({"raw"});
  s.asset("report",
          [](il::ExecutionContext& ctx) {
            il::Table clean = ctx.load("clean");
            il::Table t;
            t.reserve(clean.num_rows());
            for (std::size_t r = 0; r < clean.num_rows(); ++r) {
              t.append({{"date", clean.at(r, "date")},
                        {"id", clean.at(r, "id")},
                        {"share", static_cast<double>(clean.at(r, "clicks").as_int()) / 100.0}});
            }
            return t;
          })
      .partitioning(daily)
      .deps({"clean"});
  return il::DAG({s});
}

void BM_BackfillChain(benchmark::State& state) {
  const auto partitions = static_cast<std::int64_t>(state.range(0));
  const int concurrency = static_cast<int>(state.range(1));
  double total_us = 0;
  std::size_t failed = 0;
  for (auto _ : state) {
    auto destination = std::make_shared<il::MemoryDestination>();
    il::MemoryStore store;
    il::DAG dag = chain(destination);
    const il::TimePoint start = year{1900} / 1 / 1;
    il::TimePartitionWindow window(start, il::TimeGranularity::DAY.advance(start, partitions - 1));
    il::BackfillOptions options;
    options.concurrency = concurrency;
    options.run.store = &store;
    const auto t0 = steady_clock::now();
    il::BackfillResult result = il::backfill(dag, window, options);
    total_us += duration<double, std::micro>(steady_clock::now() - t0).count();
    failed += result.failed();
    benchmark::DoNotOptimize(result);
  }
  state.counters["us_per_asset_partition"] =
      total_us / static_cast<double>(state.iterations()) / static_cast<double>(3 * partitions);
  state.counters["failed_runs"] = static_cast<double>(failed);
  state.counters["peak_rss_mb"] = peak_rss_mb();
}
BENCHMARK(BM_BackfillChain)
    ->Args({100'000, 1})
    ->Args({100'000, 2})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// The engine's own cost of one asset of 10 rows per day partition into SQLite, recorded in a
// SQLite store: the baseline the Python package's figure (bench/python_bench.py) adds to.
void BM_BackfillOneAssetSqlite(benchmark::State& state) {
  const auto partitions = static_cast<std::int64_t>(state.range(0));
  double total_us = 0;
  for (auto _ : state) {
    const std::string dir = "/tmp/il_runner_bench_" + std::to_string(::getpid());
    std::filesystem::remove_all(dir);
    il::Source s("bench", std::make_shared<il::SqliteDestination>(dir + "/data.db"));
    s.asset("ten", [](il::ExecutionContext& ctx) {
       const il::Value date(ctx.partition_date());
       il::Table t;
       for (int i = 0; i < 10; ++i) t.append({{"date", date}, {"id", i}, {"clicks", i * 3}});
       return t;
     }).partitioning(il::TimePartitionConfig("date"));
    il::DAG dag({s});
    il::SqliteStore store(dir + "/state.db");
    const il::TimePoint start = year{1990} / 1 / 1;
    il::TimePartitionWindow window(start, il::TimeGranularity::DAY.advance(start, partitions - 1));
    il::BackfillOptions options;
    options.run.store = &store;
    const auto t0 = steady_clock::now();
    il::BackfillResult result = il::backfill(dag, window, options);
    total_us += duration<double, std::micro>(steady_clock::now() - t0).count();
    if (!result.ok()) state.SkipWithError("the backfill failed");
    std::filesystem::remove_all(dir);
  }
  state.counters["us_per_asset_partition"] =
      total_us / static_cast<double>(state.iterations()) / static_cast<double>(partitions);
}
BENCHMARK(BM_BackfillOneAssetSqlite)->Arg(10'000)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_ValidateMillionHourly(benchmark::State& state) {
  const il::TimePartitionConfig hourly(
      "ts", {.granularity = il::TimeGranularity::HOUR, .allow_window = true});
  std::vector<il::Asset> assets;
  for (int i = 0; i < 100; ++i) {
    il::Asset a("asset_" + std::to_string(i), [](il::ExecutionContext&) { return il::Table(); });
    a.partitioning(hourly);
    if (i > 0) a.deps({"asset_" + std::to_string(i - 1)});
    assets.push_back(std::move(a));
  }
  il::DAG dag({}, assets);
  const il::TimePoint start = year{2000} / 1 / 1;
  il::TimePartitionWindow window(start, il::TimeGranularity::HOUR.advance(start, 999'999),
                                 il::TimeGranularity::HOUR);
  double total_ms = 0;
  for (auto _ : state) {
    const auto t0 = steady_clock::now();
    il::validate(dag, &window);
    total_ms += duration<double, std::milli>(steady_clock::now() - t0).count();
  }
  state.counters["validate_ms"] = total_ms / static_cast<double>(state.iterations());
  state.counters["partitions"] = static_cast<double>(window.size());
}
BENCHMARK(BM_ValidateMillionHourly)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
