// Data layer throughput: building a table row by row, writing JSON lines, parsing them back.
// Run: build/bench/data_bench --benchmark_counters_tabular=true

#include <benchmark/benchmark.h>

#include <interloper/data.hpp>
#include <string>

namespace {

using namespace std::chrono;
using interloper::Table;
using interloper::Value;

constexpr std::int64_t kRows = 1'000'000;
const sys_days kDay = year{2026} / 1 / 1;

const std::string kCampaigns[] = {"spring", "summer_sale", "autumn \"promo\"", "winter"};

Table build_table(std::int64_t rows) {
  Table t;
  t.reserve(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i)
    t.append({{"date", kDay + days(i % 365)},
              {"campaign", kCampaigns[i % 4]},
              {"clicks", static_cast<long long>(i)},
              {"cost", static_cast<double>(i) * 0.37},
              {"active", i % 3 == 0}});
  return t;
}

const Table& shared_table() {
  static const Table t = build_table(kRows);
  return t;
}

void BM_AppendByName(benchmark::State& state) {
  for (auto _ : state) {
    Table t = build_table(kRows);
    benchmark::DoNotOptimize(t);
  }
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(kRows) * state.iterations(),
                                                benchmark::Counter::kIsRate);
  state.counters["cells/s"] = benchmark::Counter(
      static_cast<double>(kRows) * 5 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AppendByName)->Unit(benchmark::kMillisecond);

void BM_AppendRow(benchmark::State& state) {
  for (auto _ : state) {
    Table t(interloper::Schema{{"date", interloper::DataType::date},
                               {"campaign", interloper::DataType::string},
                               {"clicks", interloper::DataType::int64},
                               {"cost", interloper::DataType::float64},
                               {"active", interloper::DataType::boolean}});
    t.reserve(kRows);
    for (std::int64_t i = 0; i < kRows; ++i)
      t.append_row({kDay + days(i % 365), kCampaigns[i % 4], static_cast<long long>(i),
                    static_cast<double>(i) * 0.37, i % 3 == 0});
    benchmark::DoNotOptimize(t);
  }
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(kRows) * state.iterations(),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_AppendRow)->Unit(benchmark::kMillisecond);

void BM_WriteJsonLines(benchmark::State& state) {
  const Table& t = shared_table();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string s = interloper::to_json_lines(t);
    bytes += s.size();
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(kRows) * state.iterations(),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_WriteJsonLines)->Unit(benchmark::kMillisecond);

void BM_ParseJsonLines(benchmark::State& state) {
  const std::string text = interloper::to_json_lines(shared_table());
  const bool declared = state.range(0) != 0;
  for (auto _ : state) {
    Table t = interloper::parse_json_lines(text, declared ? &shared_table().schema() : nullptr);
    benchmark::DoNotOptimize(t);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(text.size()) * state.iterations());
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(kRows) * state.iterations(),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParseJsonLines)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_WriteCsv(benchmark::State& state) {
  const Table& t = shared_table();
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::string s = interloper::to_csv(t);
    bytes += s.size();
    benchmark::DoNotOptimize(s);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_WriteCsv)->Unit(benchmark::kMillisecond);

void BM_ParseCsv(benchmark::State& state) {
  const std::string text = interloper::to_csv(shared_table());
  for (auto _ : state) {
    Table t = interloper::parse_csv(text);
    benchmark::DoNotOptimize(t);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(text.size()) * state.iterations());
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(kRows) * state.iterations(),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParseCsv)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
