// Throughput of cron evaluation: successive next fires of typical expressions in a DST zone.
//   ./build/bench/cron_bench
#include <benchmark/benchmark.h>

#include <array>

#include "interloper/cron.hpp"

namespace il = interloper;

namespace {

constexpr std::array<const char*, 6> kExpressions = {
    "0 3 * * *", "*/15 * * * *", "30 2 * * mon-fri", "0 0 1 * *", "@hourly", "0 9,17 * * 1,3,5",
};

// Each iteration asks for the fire after the previous one, walking through the DST changes of
// Europe/Berlin from 2026 to 2100.
void BM_NextFireBerlin(benchmark::State& state) {
  const il::CronSchedule c = il::CronSchedule::parse(kExpressions[state.range(0)]);
  const il::TimePoint start = il::TimePoint::parse("2026-01-01T00:00:00");
  const il::TimePoint end = il::TimePoint::parse("2100-01-01T00:00:00");
  il::TimePoint t = start;
  for (auto _ : state) {
    t = c.next_fire(t, "Europe/Berlin");
    benchmark::DoNotOptimize(t);
    if (end < t) t = start;
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(kExpressions[state.range(0)]);
}
BENCHMARK(BM_NextFireBerlin)->DenseRange(0, kExpressions.size() - 1);

// Fires after unrelated instants, so no cached offset interval helps.
void BM_NextFireRandomInstantsNewYork(benchmark::State& state) {
  const il::CronSchedule c = il::CronSchedule::parse("30 2 * * *");
  std::uint64_t x = 88172645463325252ull;
  const std::int64_t base = il::TimePoint::parse("2000-01-01").epoch_seconds();
  for (auto _ : state) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const auto after = il::TimePoint::from_epoch_seconds(
        base + static_cast<std::int64_t>(x % (100ull * 365 * 86400)));
    benchmark::DoNotOptimize(c.next_fire(after, "America/New_York"));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NextFireRandomInstantsNewYork);

void BM_ParseCron(benchmark::State& state) {
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(il::CronSchedule::parse(kExpressions[i++ % kExpressions.size()]));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseCron);

}  // namespace

BENCHMARK_MAIN();
