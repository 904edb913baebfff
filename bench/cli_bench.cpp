// `interloper backfill` of N daily partitions of a trivial `sql:` asset into SQLite, through the
// same entry point as the binary (il::cli::main), with a fresh pipeline directory each time.
// Reports wall time and the overhead per partition (store record, query, write, events).
// `interloper -q check` of a pipeline declaring a chain of N command assets, each depending on
// the one before: reading the file, the declarations and the DAG, per asset.
//
//   build/bench/cli_bench --benchmark_filter=Backfill/10000
//   build/bench/cli_bench --benchmark_filter=Check/100000
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "interloper/cli.hpp"

namespace fs = std::filesystem;
using namespace std::chrono;

namespace {

std::string day_key(sys_days day) {
  year_month_day ymd(day);
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
}

int run(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return interloper::cli::main(static_cast<int>(args.size()), argv.data());
}

void Backfill(benchmark::State& state) {
  const auto partitions = static_cast<int>(state.range(0));
  const sys_days first = sys_days(2000y / 1 / 1);
  const std::string window = day_key(first) + ".." + day_key(first + days(partitions - 1));
  for (auto _ : state) {
    state.PauseTiming();
    std::string pattern = (fs::temp_directory_path() / "il_bench_XXXXXX").string();
    fs::path dir = ::mkdtemp(pattern.data());
    std::ofstream(dir / "pipeline.yaml")
        << "sources:\n"
           "  - name: bench\n"
           "    assets:\n"
           "      - name: trivial\n"
           "        partitioning: {kind: time, column: date, granularity: day}\n"
           "        sql: SELECT :partition_key AS date, 1 AS n\n";
    state.ResumeTiming();
    int code = run({"interloper", "--quiet", "backfill", (dir / "pipeline.yaml").string(),
                    "--window", window});
    state.PauseTiming();
    if (code != 0) state.SkipWithError("backfill failed");
    std::error_code ec;
    fs::remove_all(dir, ec);
    state.ResumeTiming();
  }
  state.counters["partitions"] = partitions;
  state.counters["per_partition"] =
      benchmark::Counter(static_cast<double>(partitions) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(Backfill)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();

// A pipeline of `assets` command assets a0, a1..., each depending on the one before.
std::string chain_pipeline(int assets) {
  std::string text = "destination: memory://\nsources:\n  - name: s\n    assets:\n";
  for (int i = 0; i < assets; ++i) {
    text += fmt::format("      - name: a{}\n        command: [/bin/true]\n", i);
    if (i > 0) text += fmt::format("        deps: [a{}]\n", i - 1);
  }
  return text;
}

void Check(benchmark::State& state) {
  const auto assets = static_cast<int>(state.range(0));
  std::string pattern = (fs::temp_directory_path() / "il_bench_XXXXXX").string();
  const fs::path dir = ::mkdtemp(pattern.data());
  const fs::path file = dir / "pipeline.yaml";
  std::ofstream(file) << chain_pipeline(assets);
  for (auto _ : state) {
    if (run({"interloper", "-q", "check", file.string()}) != 0) state.SkipWithError("check failed");
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  state.counters["assets"] = assets;
  state.counters["per_asset"] =
      benchmark::Counter(static_cast<double>(assets) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK(Check)
    ->Arg(10000)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
