// The grid API of `interloper serve` over 10^6 hourly partitions in a SQLite store: one
// materialized stretch broken by a failed hour every 1 000 hours (1 000 failures, 2 001 ranges).
//
//   build/bench/serve_bench
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "interloper/interloper.hpp"
#include "interloper/serve/api.hpp"

namespace il = interloper;
namespace fs = std::filesystem;
using namespace std::chrono;

namespace {

constexpr std::int64_t kHours = 1'000'000;

il::Table nothing(il::ExecutionContext&) { return il::Table(); }

il::TimePoint hour(std::int64_t i) {
  static const il::TimePoint start(sys_days(year{2000} / 1 / 1));
  return il::TimeGranularity::HOUR.advance(start, i);
}

void BM_GridOfMillionHours(benchmark::State& state) {
  const il::TimePartitionConfig hourly("ts", {.granularity = il::TimeGranularity::HOUR});
  il::Source source("bench", nullptr);
  source.asset("events", nothing).partitioned(hourly);
  const il::DAG dag({source});
  const fs::path path = fs::temp_directory_path() / fmt::format("il-serve-bench-{}.db", ::getpid());
  auto store = std::make_shared<il::SqliteStore>(path.string());
  const il::DatasetRef dataset = dag.asset("events").dataset();
  il::MaterializationRecord record;
  record.asset = "events";
  record.status = il::MaterializationStatus::materialized;
  il::TimePartitionWindow all(hour(0), hour(kHours - 1), il::TimeGranularity::HOUR);
  store->record(dataset, &all, record);
  record.status = il::MaterializationStatus::failed;
  for (std::int64_t i = 500; i < kHours; i += 1000) {
    record.run_id = fmt::format("run-{}", i);
    record.error = fmt::format("command failed: exit 1 (hour {})", i);
    il::TimePartitionWindow one(hour(i), hour(i), il::TimeGranularity::HOUR);
    store->record(dataset, &one, record);
  }
  il::serve::ApiOptions options;
  options.pipeline = "bench";
  il::serve::Api api(dag, store, std::move(options));
  const std::string window = all.to_string();
  std::size_t bytes = 0;
  for (auto _ : state) {
    il::serve::Response answer = api.get("/api/assets/events", window);
    if (answer.status != 200) state.SkipWithError(answer.body.c_str());
    bytes = answer.body.size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["response_bytes"] = static_cast<double>(bytes);
  fs::remove(path);
}
BENCHMARK(BM_GridOfMillionHours)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
