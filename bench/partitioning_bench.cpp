// Throughput of the hot paths of the time and partitioning layers.
//   ./build/bench/partitioning_bench
#include <benchmark/benchmark.h>

#include <array>
#include <string>

#include "interloper/partitioning.hpp"

namespace il = interloper;
using G = il::TimeGranularity;

namespace {

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }

void BM_FormatDayKey(benchmark::State& state) {
  std::int64_t s = at("2026-05-20").epoch_seconds();
  for (auto _ : state) {
    std::string key = G::DAY.format(il::TimePoint::from_epoch_seconds(s));
    benchmark::DoNotOptimize(key);
    s += 86400;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FormatDayKey);

void BM_ParseDayKey(benchmark::State& state) {
  const std::array<std::string, 4> keys = {"2026-05-20", "1999-12-31", "2024-02-29", "2100-03-01"};
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(G::DAY.parse(keys[i++ & 3]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseDayKey);

void BM_FromKeyMixedShapes(benchmark::State& state) {
  const std::array<std::string, 8> keys = {"2026",     "2026-Q2",    "2026-05",       "2026-W21",
                                           "2026-05-20", "2026-05-20T13", "2020-W53", "2024-02-29"};
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(il::TimePartition::from_key(keys[i++ & 7]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FromKeyMixedShapes);

void BM_IterateWindow(benchmark::State& state) {
  const G g = G::from_name(state.range(0) == 0 ? "day" : "month");
  const std::int64_t n = 1'000'000;
  const il::TimePoint start = at("1000-01-01");
  const il::TimePartitionWindow window(start, g.advance(start, n - 1), g);
  for (auto _ : state) {
    std::int64_t sum = 0;
    for (il::TimePartition p : window) sum += p.value().epoch_seconds();
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(std::string(g.name()) + " x 10^6");
}
BENCHMARK(BM_IterateWindow)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_PeriodsBetween(benchmark::State& state) {
  const G g = G::from_name(state.range(0) == 0 ? "day" : state.range(0) == 1 ? "week" : "month");
  std::int64_t a = at("1990-03-17T05:00:00").epoch_seconds();
  const il::TimePoint b = at("2026-05-20T13:00:00");
  for (auto _ : state) {
    benchmark::DoNotOptimize(g.periods_between(il::TimePoint::from_epoch_seconds(a), b));
    a += 3607;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(g.name()));
}
BENCHMARK(BM_PeriodsBetween)->Arg(0)->Arg(1)->Arg(2);

void BM_LookbackInZone(benchmark::State& state) {
  std::int64_t now = at("2026-03-01T00:00:00").epoch_seconds();
  for (auto _ : state) {
    auto w = il::TimePartitionWindow::lookback(il::TimePoint::from_epoch_seconds(now), 7, 1,
                                               G::DAY, std::nullopt, "Europe/Berlin");
    benchmark::DoNotOptimize(w);
    now += 60;  // walks across the 2026-03-29 DST change
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LookbackInZone);

void BM_WindowToSql(benchmark::State& state) {
  const il::TimePartitionWindow window(at("2026-01-01"), at("2026-01-31"));
  for (auto _ : state) benchmark::DoNotOptimize(window.filter("date").to_sql());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WindowToSql);

}  // namespace

BENCHMARK_MAIN();
