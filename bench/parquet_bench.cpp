// Parquet and DuckDB throughput: the Parquet codec writing 10^6 rows beside DuckDB's own
// COPY ... TO ... (FORMAT parquet) of the same rows, the codec reading them back, a raw appender
// loop of 10^6 rows into a DuckDB file (what a DuckDB destination will be measured against),
// and the peak memory of one 3·10^6-row partition written as Parquet.
//
//   build/bench/parquet_bench --benchmark_counters_tabular=true
//   build/bench/parquet_bench --benchmark_filter=BM_ParquetWritePeakMemory   # alone: peak RSS
//
// After the runs it prints the codec's write speed as a fraction of DuckDB's COPY.
#include <benchmark/benchmark.h>
#include <duckdb.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>

#include "ratio_reporter.hpp"
#include "interloper/duckdb/duckdb.hpp"
#include "interloper/parquet/parquet.hpp"

namespace il = interloper;
namespace fs = std::filesystem;
using namespace std::chrono;

namespace {

constexpr std::size_t kRows = 1'000'000;
constexpr std::size_t kBatch = 8192;

const il::Schema kSchema({{"date", il::DataType::date},
                          {"at", il::DataType::timestamp},
                          {"campaign", il::DataType::string},
                          {"clicks", il::DataType::int64},
                          {"cost", il::DataType::float64},
                          {"amount", il::DataType::decimal, 12, 2},
                          {"active", il::DataType::boolean}});

// Rows [first, first + count) of a deterministic stream, as an asset emits them.
il::Table batch(std::size_t first, std::size_t count) {
  il::Table t(kSchema);
  t.reserve(count);
  std::mt19937_64 rng(first + 1);
  for (std::size_t i = first; i < first + count; ++i) {
    const sys_days d = sys_days(year{2026} / 1 / 1) + days(i % 30);
    t.append_row({il::Value(d),
                  il::Value(il::Value::Timestamp(d) + microseconds(rng() % 86'400'000'000ULL)),
                  il::Value(fmt::format("campaign-{}", rng() % 1000)),
                  il::Value(static_cast<long long>(rng() % 100000)),
                  il::Value(static_cast<double>(rng() % 1000000) / 100.0),
                  il::Value(il::Decimal(static_cast<__int128>(rng() % 100000000), 2)),
                  il::Value(rng() % 2 == 0)});
  }
  return t;
}

const std::vector<il::Table>& batches() {
  static const std::vector<il::Table> all = [] {
    std::vector<il::Table> out;
    for (std::size_t first = 0; first < kRows; first += kBatch) {
      out.push_back(batch(first, std::min(kBatch, kRows - first)));
    }
    return out;
  }();
  return all;
}

fs::path fresh_dir(const char* name) {
  std::string pattern =
      (fs::temp_directory_path() / fmt::format("il-bench-{}-XXXXXX", name)).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
  return pattern;
}

void rows_per_second(benchmark::State& state, std::size_t rows) {
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ParquetWrite(benchmark::State& state) {
  const auto& input = batches();
  const fs::path dir = fresh_dir("parquet");
  for (auto _ : state) {
    il::parquet::Writer writer((dir / "w.parquet").string(), kSchema);
    for (const il::Table& b : input) writer.append(b);
    writer.finish();
  }
  state.counters["file_mb"] = static_cast<double>(fs::file_size(dir / "w.parquet")) / 1e6;
  rows_per_second(state, kRows);
  fs::remove_all(dir);
}

// DuckDB's own COPY of the same rows, held in a table of an in-memory database beforehand.
void BM_DuckDBCopyParquet(benchmark::State& state) {
  const fs::path dir = fresh_dir("copy");
  const std::string staged = (dir / "staged.parquet").string();
  il::parquet::Writer writer(staged, kSchema);
  for (const il::Table& b : batches()) writer.append(b);
  writer.finish();
  il::duckdb::Database db;
  il::duckdb::Connection con(db);
  con.execute(fmt::format("CREATE TABLE t AS SELECT * FROM read_parquet('{}')", staged));
  const std::string copy =
      fmt::format("COPY t TO '{}' (FORMAT parquet)", (dir / "copy.parquet").string());
  for (auto _ : state) con.execute(copy);
  rows_per_second(state, kRows);
  fs::remove_all(dir);
}

void BM_ParquetRead(benchmark::State& state) {
  const fs::path dir = fresh_dir("read");
  const std::string path = (dir / "r.parquet").string();
  il::parquet::Writer writer(path, kSchema);
  for (const il::Table& b : batches()) writer.append(b);
  writer.finish();
  for (auto _ : state) {
    std::size_t rows = 0;
    il::parquet::read_file(
        path, [&](il::Table&& t) { rows += t.num_rows(); }, &kSchema);
    benchmark::DoNotOptimize(rows);
  }
  rows_per_second(state, kRows);
  fs::remove_all(dir);
}

// The plain appender loop: one value at a time into a table of a DuckDB file, in one
// transaction, through the C API alone.
void BM_RawAppenderLoop(benchmark::State& state) {
  const auto& input = batches();
  for (auto _ : state) {
    state.PauseTiming();
    const fs::path dir = fresh_dir("appender");
    {
      il::duckdb::Database db((dir / "a.duckdb").string());
      il::duckdb::Connection con(db);
      con.execute(
          "CREATE TABLE t (\"date\" DATE, \"at\" TIMESTAMPTZ, campaign VARCHAR, clicks BIGINT, "
          "cost DOUBLE, amount DECIMAL(12,2), active BOOLEAN)");
      state.ResumeTiming();
      con.execute("BEGIN");
      duckdb_appender app = nullptr;
      if (duckdb_appender_create(con.get(), nullptr, "t", &app) != DuckDBSuccess) {
        state.SkipWithError("appender");
        break;
      }
      for (const il::Table& b : input) {
        const auto& date = b.column(0);
        const auto& at = b.column(1);
        const auto& campaign = b.column(2);
        const auto& clicks = b.column(3);
        const auto& cost = b.column(4);
        const auto& amount = b.column(5);
        const auto& active = b.column(6);
        for (std::size_t r = 0; r < b.num_rows(); ++r) {
          duckdb_append_date(
              app, duckdb_date{static_cast<int32_t>(date[r].as_date().time_since_epoch().count())});
          duckdb_append_timestamp(
              app, duckdb_timestamp{at[r].as_timestamp().time_since_epoch().count()});
          const std::string& s = campaign[r].as_string();
          duckdb_append_varchar_length(app, s.data(), s.size());
          duckdb_append_int64(app, clicks[r].as_int());
          duckdb_append_double(app, cost[r].as_double());
          duckdb_append_int64(app, static_cast<int64_t>(amount[r].as_decimal().unscaled()));
          duckdb_append_bool(app, active[r].as_bool());
          duckdb_appender_end_row(app);
        }
      }
      duckdb_appender_close(app);
      duckdb_appender_destroy(&app);
      con.execute("COMMIT");
      state.PauseTiming();
    }
    fs::remove_all(dir);
    state.ResumeTiming();
  }
  rows_per_second(state, kRows);
}

// One 3·10^6-row partition streamed through the writer in batches made on the fly; reports the
// process's peak resident memory (run it alone to measure the writer, not earlier benchmarks).
void BM_ParquetWritePeakMemory(benchmark::State& state) {
  constexpr std::size_t kBig = 3'000'000;
  const fs::path dir = fresh_dir("peak");
  for (auto _ : state) {
    il::parquet::Writer writer((dir / "big.parquet").string(), kSchema);
    for (std::size_t first = 0; first < kBig; first += kBatch) {
      writer.append(batch(first, std::min(kBatch, kBig - first)));
    }
    writer.finish();
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  state.counters["file_mb"] = static_cast<double>(fs::file_size(dir / "big.parquet")) / 1e6;
  rows_per_second(state, kBig);
  fs::remove_all(dir);
}

BENCHMARK(BM_ParquetWrite)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_DuckDBCopyParquet)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ParquetRead)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_RawAppenderLoop)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ParquetWritePeakMemory)->UseRealTime()->Unit(benchmark::kMillisecond)->Iterations(1);


}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto ours = reporter.times.find("BM_ParquetWrite/iterations:3/real_time");
  auto copy = reporter.times.find("BM_DuckDBCopyParquet/iterations:3/real_time");
  if (ours != reporter.times.end() && copy != reporter.times.end()) {
    std::cout << fmt::format(
        "BM_ParquetWrite runs at {:.2f} of BM_DuckDBCopyParquet (target >= 0.80)\n",
        copy->second / ours->second);
  }
  benchmark::Shutdown();
  return 0;
}
