// One partition of N rows written from a real `command:` asset into SQLite and into JSON-lines
// and CSV files, through `interloper materialize` (il::cli::main) in a child process, so that
// peak memory is the child's own (getrusage of the child: ru_maxrss). The command is this
// binary itself, run as a generator (`stream_bench --generate N DATE [csv]`).
//
//   build/bench/stream_bench --benchmark_filter='Sqlite/10000000'
//
// Reports rows/s and peak RSS in MiB. Memory should stay flat as N grows: rows stream from the
// command's stdout into the destination in batches.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "interloper/cli.hpp"

namespace fs = std::filesystem;

namespace {

// Prints `rows` rows of one day as fast as stdio allows.
int generate(long long rows, const char* date, bool csv) {
  static char buffer[1 << 16];
  std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  if (csv) std::printf("date,id,campaign,clicks,cost\n");
  for (long long i = 0; i < rows; ++i) {
    const long long clicks = (i * 7919) % 1000;
    const double cost = static_cast<double>(i % 10000) / 100.0 + 0.5;
    if (csv) {
      std::printf("%s,%lld,campaign_%lld,%lld,%.2f\n", date, i, i % 97, clicks, cost);
    } else {
      std::printf(
          "{\"date\":\"%s\",\"id\":%lld,\"campaign\":\"campaign_%lld\",\"clicks\":%lld,"
          "\"cost\":%.2f}\n",
          date, i, i % 97, clicks, cost);
    }
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

std::string self_path() { return fs::read_symlink("/proc/self/exe").string(); }

struct ChildRun {
  int status = -1;
  double seconds = 0;
  long max_rss_kib = 0;
};

// Runs `interloper ARGS` (the library's entry point) in a forked child and measures it.
ChildRun run_cli(std::vector<std::string> args) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    ::_exit(interloper::cli::main(static_cast<int>(args.size()), argv.data()));
  }
  ChildRun run;
  rusage usage{};
  ::wait4(child, &run.status, 0, &usage);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.max_rss_kib = usage.ru_maxrss;
  return run;
}

void Materialize(benchmark::State& state, const std::string& destination, bool csv) {
  const long long rows = state.range(0);
  for (auto _ : state) {
    std::string pattern = (fs::temp_directory_path() / "il_stream_bench_XXXXXX").string();
    const fs::path dir = ::mkdtemp(pattern.data());
    std::ofstream(dir / "pipeline.yaml") << fmt::format(
        "destination: {}\n"
        "store: state.db\n"
        "sources:\n"
        "  - name: bench\n"
        "    assets:\n"
        "      - name: rows\n"
        "        partitioning: {{kind: time, column: date, granularity: day}}\n"
        "        format: {}\n"
        "        command: [{}, --generate, '{}', '{{partition.key}}', {}]\n",
        destination, csv ? "csv" : "jsonl", self_path(), rows, csv ? "csv" : "jsonl");
    const ChildRun run = run_cli({"interloper", "--quiet", "materialize",
                                  (dir / "pipeline.yaml").string(), "--partition", "2026-01-05"});
    state.SetIterationTime(run.seconds);
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0) {
      state.SkipWithError("materialize failed");
      break;
    }
    state.counters["rows_per_s"] = static_cast<double>(rows) / run.seconds;
    state.counters["peak_rss_MiB"] = static_cast<double>(run.max_rss_kib) / 1024.0;
  }
}

void Sqlite(benchmark::State& state) { Materialize(state, "sqlite:out.db", false); }
void JsonFiles(benchmark::State& state) { Materialize(state, "file:files?format=jsonl", false); }
void CsvFiles(benchmark::State& state) { Materialize(state, "file:files?format=csv", true); }

BENCHMARK(Sqlite)->Arg(1000000)->Arg(10000000)->Iterations(1)->UseManualTime()->Unit(
    benchmark::kSecond);
BENCHMARK(JsonFiles)->Arg(1000000)->Arg(10000000)->Iterations(1)->UseManualTime()->Unit(
    benchmark::kSecond);
BENCHMARK(CsvFiles)->Arg(1000000)->Arg(10000000)->Iterations(1)->UseManualTime()->Unit(
    benchmark::kSecond);

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::strcmp(argv[1], "--generate") == 0) {
    return generate(std::atoll(argv[2]), argv[3], argc > 4 && std::strcmp(argv[4], "csv") == 0);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
