// The materialization store as history grows: 10^6 hourly partitions recorded one at a time
// (each by its own run, as a backfill records them), 1% of them failed at scattered hours, then
// the status of the whole window and the size of the store file.
//
//   build/bench/store_bench                       # both stores
//   build/bench/store_bench --benchmark_filter=Sqlite
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <random>

#include "interloper/interloper.hpp"
#include "interloper/store.hpp"

namespace il = interloper;
namespace fs = std::filesystem;
using namespace std::chrono;

namespace {

constexpr std::int64_t kHours = 1'000'000;

const il::TimePartitionConfig& hourly() {
  static const il::TimePartitionConfig config(
      "ts", {.granularity = il::TimeGranularity::HOUR, .allow_window = true});
  return config;
}

il::TimePoint hour(std::int64_t i) {
  static const il::TimePoint start(sys_days(year{2000} / 1 / 1));
  return il::TimeGranularity::HOUR.advance(start, i);
}

// Records every hour of [0, kHours) as its own window and run; about 1% fail.
void record_history(il::MaterializationStore& store, const il::DatasetRef& dataset) {
  std::mt19937_64 rng(11);
  il::MaterializationRecord record;
  record.asset = dataset.asset;
  const auto began = steady_clock::now();
  for (std::int64_t i = 0; i < kHours; ++i) {
    const bool failed = rng() % 100 == 0;
    record.status =
        failed ? il::MaterializationStatus::failed : il::MaterializationStatus::materialized;
    record.rows = failed ? 0 : 24;
    record.run_id = fmt::format("run-20260101T000000-bench-{}", i);
    record.started = hour(i);
    record.finished = hour(i);
    record.error = failed ? fmt::format("command failed: exit 1 (hour {})", i) : "";
    il::TimePartitionWindow window(hour(i), hour(i), il::TimeGranularity::HOUR);
    store.record(dataset, &window, record);
  }
  std::cout << fmt::format("recorded {} hours one at a time in {:.1f} s\n", kHours,
                           duration<double>(steady_clock::now() - began).count());
}

void status_of_history(benchmark::State& state, il::MaterializationStore& store,
                       const il::DatasetRef& dataset) {
  il::TimePartitionWindow all(hour(0), hour(kHours - 1), il::TimeGranularity::HOUR);
  std::size_t failed = 0;
  std::size_t ranges = 0;
  for (auto _ : state) {
    il::WindowStatus status = store.status(dataset, all);
    failed = status.count(status.failed);
    ranges = status.materialized.size() + status.failed.size() + status.missing.size();
    benchmark::DoNotOptimize(failed);
  }
  state.counters["failed_hours"] = static_cast<double>(failed);
  state.counters["ranges"] = static_cast<double>(ranges);
}

void BM_SqliteStoreStatusAfterMillionRecords(benchmark::State& state) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("il_store_bench_{}", ::getpid());
  fs::remove_all(dir);
  const fs::path path = dir / "store.db";
  il::DatasetRef dataset{"bench", "hourly", &hourly()};
  {
    il::SqliteStore store(path.string());
    record_history(store, dataset);
  }
  std::uintmax_t bytes = 0;
  for (const auto& entry : fs::directory_iterator(dir)) bytes += entry.file_size();
  std::cout << fmt::format("store files after closing: {:.2f} MB (target < 20 MB)\n",
                           static_cast<double>(bytes) / 1e6);
  il::SqliteStore store(path.string());
  status_of_history(state, store, dataset);
  state.counters["store_MB"] = static_cast<double>(bytes) / 1e6;
  fs::remove_all(dir);
}

void BM_MemoryStoreStatusAfterMillionRecords(benchmark::State& state) {
  il::MemoryStore store;
  il::DatasetRef dataset{"bench", "hourly", &hourly()};
  record_history(store, dataset);
  status_of_history(state, store, dataset);
}

// Fixed iteration counts: the history is recorded once per benchmark, not per trial.
BENCHMARK(BM_SqliteStoreStatusAfterMillionRecords)->Unit(benchmark::kMillisecond)->Iterations(20);
BENCHMARK(BM_MemoryStoreStatusAfterMillionRecords)->Unit(benchmark::kMillisecond)->Iterations(20);

}  // namespace

BENCHMARK_MAIN();
