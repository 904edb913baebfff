// Storage throughput: SqliteDestination and FileDestination window writes against plain loops
// doing the same work, partition reads, and the store's status query over a million hours.
//
//   build/bench/destination_bench --benchmark_counters_tabular=true
//
// After the runs it prints each destination's speed as a fraction of its plain loop.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>

#include "ratio_reporter.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/store.hpp"
#include "interloper/time/civil.hpp"

namespace il = interloper;
namespace fs = std::filesystem;
using namespace std::chrono;

namespace {

constexpr std::size_t kRows = 1'000'000;
constexpr unsigned kDays = 30;

const il::TimePartitionConfig kDaily("date", {.allow_window = true});
const il::DatasetRef kDataset{"bench", "events", &kDaily};
const il::TimePartitionWindow kWindow(year{2026} / 1 / 1, year{2026} / 1 / kDays);

// 10^6 rows over 30 days, grouped by day (as an asset usually emits them).
const il::Table& rows() {
  static const il::Table table = [] {
    il::Table t(il::Schema({{"date", il::DataType::date},
                            {"campaign", il::DataType::string},
                            {"clicks", il::DataType::int64},
                            {"cost", il::DataType::float64},
                            {"active", il::DataType::boolean}}));
    t.reserve(kRows);
    std::mt19937_64 rng(1);
    for (std::size_t i = 0; i < kRows; ++i) {
      sys_days d = sys_days(year{2026} / 1 / 1) + days(i * kDays / kRows);
      t.append_row({il::Value(d), il::Value(fmt::format("campaign-{}", rng() % 1000)),
                    il::Value(static_cast<long long>(rng() % 100000)),
                    il::Value(static_cast<double>(rng() % 1000000) / 100.0),
                    il::Value(rng() % 2 == 0)});
    }
    return t;
  }();
  return table;
}

fs::path fresh_dir(const char* name) {
  std::string pattern =
      (fs::temp_directory_path() / fmt::format("il-bench-{}-XXXXXX", name)).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp");
  return pattern;
}

void check(int rc, sqlite3* db) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
}

void BM_SqliteWindowWrite(benchmark::State& state) {
  const il::Table& table = rows();
  for (auto _ : state) {
    state.PauseTiming();
    fs::path dir = fresh_dir("sqlite");
    {
      il::SqliteDestination destination((dir / "w.db").string());
      state.ResumeTiming();
      destination.write(kDataset, &kWindow, table);
      state.PauseTiming();
    }
    fs::remove_all(dir);
    state.ResumeTiming();
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
}

// The same rows through one transaction and one prepared INSERT, with the same PRAGMAs, the
// same table definition and the same index on the partition column.
void BM_RawSqliteInsert(benchmark::State& state) {
  const il::Table& table = rows();
  const auto& date = table.column(0);
  const auto& campaign = table.column(1);
  const auto& clicks = table.column(2);
  const auto& cost = table.column(3);
  const auto& active = table.column(4);
  for (auto _ : state) {
    state.PauseTiming();
    fs::path dir = fresh_dir("raw");
    sqlite3* db = nullptr;
    sqlite3_open((dir / "w.db").c_str(), &db);
    sqlite3_busy_timeout(db, 10000);
    check(sqlite3_exec(db,
                       "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                       "CREATE TABLE \"bench__events\" (\"date\" TEXT, \"campaign\" TEXT, "
                       "\"clicks\" INTEGER, \"cost\" REAL, \"active\" INTEGER);"
                       "CREATE INDEX \"bench__events__date\" ON \"bench__events\" (\"date\");",
                       nullptr, nullptr, nullptr),
          db);
    state.ResumeTiming();
    check(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), db);
    sqlite3_stmt* stmt = nullptr;
    check(sqlite3_prepare_v2(db,
                             "INSERT INTO \"bench__events\" (\"date\", \"campaign\", \"clicks\", "
                             "\"cost\", \"active\") VALUES (?, ?, ?, ?, ?)",
                             -1, &stmt, nullptr),
          db);
    char buffer[32];
    for (std::size_t r = 0; r < kRows; ++r) {
      const auto n = static_cast<std::size_t>(
          il::detail::put_date(buffer, date[r].as_date().time_since_epoch().count()) - buffer);
      sqlite3_bind_text(stmt, 1, buffer, static_cast<int>(n), SQLITE_STATIC);
      const std::string& s = campaign[r].as_string();
      sqlite3_bind_text(stmt, 2, s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
      sqlite3_bind_int64(stmt, 3, clicks[r].as_int());
      sqlite3_bind_double(stmt, 4, cost[r].as_double());
      sqlite3_bind_int(stmt, 5, active[r].as_bool() ? 1 : 0);
      check(sqlite3_step(stmt), db);
      sqlite3_reset(stmt);
    }
    sqlite3_finalize(stmt);
    check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db);
    state.PauseTiming();
    sqlite3_close(db);
    fs::remove_all(dir);
    state.ResumeTiming();
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_FileJsonlWindowWrite(benchmark::State& state) {
  const il::Table& table = rows();
  for (auto _ : state) {
    state.PauseTiming();
    fs::path dir = fresh_dir("files");
    il::FileDestination destination(dir.string());
    state.ResumeTiming();
    destination.write(kDataset, &kWindow, table);
    state.PauseTiming();
    fs::remove_all(dir);
    state.ResumeTiming();
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
}

// Formats the same JSON lines with a plain buffered loop and writes one file per day the same
// durable way (temporary file, fsync, rename, directory fsync).
void BM_RawJsonlWrite(benchmark::State& state) {
  const il::Table& table = rows();
  const auto& date = table.column(0);
  const auto& campaign = table.column(1);
  const auto& clicks = table.column(2);
  const auto& cost = table.column(3);
  const auto& active = table.column(4);
  for (auto _ : state) {
    state.PauseTiming();
    fs::path dir = fresh_dir("rawfiles");
    state.ResumeTiming();
    std::size_t r = 0;
    for (unsigned d = 0; d < kDays; ++d) {
      sys_days day = sys_days(year{2026} / 1 / 1) + days(d);
      std::string out;
      char buffer[32];
      while (r < kRows && date[r].as_date() == day) {
        const auto n = static_cast<std::size_t>(
            il::detail::put_date(buffer, day.time_since_epoch().count()) - buffer);
        fmt::format_to(
            std::back_inserter(out),
            "{{\"date\":\"{}\",\"campaign\":\"{}\",\"clicks\":{},\"cost\":{},\"active\":{}}}\n",
            std::string_view(buffer, n), campaign[r].as_string(), clicks[r].as_int(),
            cost[r].as_double(), active[r].as_bool());
        ++r;
      }
      fs::path pdir = dir / fmt::format("date={}", il::TimePoint(day).date_string());
      fs::create_directories(pdir);
      fs::path temp = pdir / ".data.jsonl.tmp";
      int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (::write(fd, out.data(), out.size()) != static_cast<ssize_t>(out.size())) std::abort();
      ::fsync(fd);
      ::close(fd);
      fs::rename(temp, pdir / "data.jsonl");
      int dfd = ::open(pdir.c_str(), O_RDONLY | O_DIRECTORY);
      ::fsync(dfd);
      ::close(dfd);
    }
    state.PauseTiming();
    fs::remove_all(dir);
    state.ResumeTiming();
  }
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
}

// Reads back one partition of 10^5 rows.
template <typename Make>
void read_partition(benchmark::State& state, Make make) {
  fs::path dir = fresh_dir("read");
  auto destination = make(dir);
  const il::Table& table = rows();
  std::vector<std::size_t> first;
  for (std::size_t r = 0; r < 100'000; ++r) first.push_back(r);
  il::Table part = table.select_rows(first);
  il::TimePartitionWindow one(year{2026} / 1 / 1, year{2026} / 1 / 1);
  // Fill the day with 10^5 rows (the first 10^5 rows all fall on the first day or two).
  il::Table day_rows(part.schema());
  for (std::size_t r = 0; r < part.num_rows(); ++r) {
    auto row = part.row(r);
    row[0] = il::Value(sys_days(year{2026} / 1 / 1));
    day_rows.append_row(std::move(row));
  }
  destination->write(kDataset, &one, day_rows);
  for (auto _ : state) {
    il::Table back = destination->read(kDataset, &one);
    if (back.num_rows() != 100'000) std::abort();
    benchmark::DoNotOptimize(back);
  }
  state.counters["rows/s"] =
      benchmark::Counter(100'000.0, benchmark::Counter::kIsIterationInvariantRate);
  destination.reset();
  fs::remove_all(dir);
}

void BM_SqliteReadPartition(benchmark::State& state) {
  read_partition(state, [](const fs::path& dir) {
    return std::make_unique<il::SqliteDestination>((dir / "r.db").string());
  });
}

// The engine's own read of the same partition: a prepared SELECT stepped row by row, each cell
// taken as its storage class (text, integer, real), with no Values made.
void BM_RawSqliteReadPartition(benchmark::State& state) {
  fs::path dir = fresh_dir("rawread");
  const std::string path = (dir / "r.db").string();
  {
    il::SqliteDestination destination(path);
    const il::Table& table = rows();
    il::Table day_rows(table.schema());
    for (std::size_t r = 0; r < 100'000; ++r) {
      auto row = table.row(r);
      row[0] = il::Value(sys_days(year{2026} / 1 / 1));
      day_rows.append_row(std::move(row));
    }
    il::TimePartitionWindow one(year{2026} / 1 / 1, year{2026} / 1 / 1);
    destination.write(kDataset, &one, day_rows);
  }
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT \"date\", campaign, clicks, cost, active FROM bench__events "
                     "WHERE \"date\" >= '2026-01-01' AND \"date\" < '2026-01-02' ORDER BY rowid",
                     -1, &stmt, nullptr);
  for (auto _ : state) {
    std::size_t n = 0, bytes = 0;
    std::int64_t sum = 0;
    double cost = 0;
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      bytes += static_cast<std::size_t>(sqlite3_column_bytes(stmt, 0));
      bytes += static_cast<std::size_t>(sqlite3_column_bytes(stmt, 1));
      sum += sqlite3_column_int64(stmt, 2) + sqlite3_column_int64(stmt, 4);
      cost += sqlite3_column_double(stmt, 3);
      ++n;
    }
    sqlite3_reset(stmt);
    if (n != 100'000) std::abort();
    benchmark::DoNotOptimize(bytes);
    benchmark::DoNotOptimize(sum);
    benchmark::DoNotOptimize(cost);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  state.counters["rows/s"] =
      benchmark::Counter(100'000.0, benchmark::Counter::kIsIterationInvariantRate);
  fs::remove_all(dir);
}

void BM_FileJsonlReadPartition(benchmark::State& state) {
  read_partition(state, [](const fs::path& dir) {
    return std::make_unique<il::FileDestination>(dir.string());
  });
}

// A backfill's shape: 2,000 day partitions of 10 rows, each one write (one window, one commit).
// Reports the time per partition.
void BM_SqliteSmallPartitions(benchmark::State& state) {
  constexpr int kPartitions = 2000;
  const il::Table& table = rows();
  for (auto _ : state) {
    state.PauseTiming();
    fs::path dir = fresh_dir("small");
    {
      il::SqliteDestination destination((dir / "s.db").string());
      std::vector<il::Table> parts;
      std::vector<il::TimePartitionWindow> windows;
      const sys_days first = year{2020} / 1 / 1;
      for (int p = 0; p < kPartitions; ++p) {
        il::Table t(table.schema());
        for (std::size_t r = 0; r < 10; ++r) {
          auto row = table.row(static_cast<std::size_t>(p) * 10 + r);
          row[0] = il::Value(first + days(p));
          t.append_row(std::move(row));
        }
        parts.push_back(std::move(t));
        windows.emplace_back(first + days(p), first + days(p));
      }
      state.ResumeTiming();
      for (int p = 0; p < kPartitions; ++p) {
        destination.write(kDataset, &windows[static_cast<std::size_t>(p)],
                          parts[static_cast<std::size_t>(p)]);
      }
      state.PauseTiming();
    }
    fs::remove_all(dir);
    state.ResumeTiming();
  }
  state.counters["us/partition"] =
      benchmark::Counter(kPartitions / 1e6, benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
}

// The same partitions with plain SQLite: one transaction each that deletes the day, inserts its
// rows and records the partition, every statement prepared once.
void BM_RawSqliteSmallPartitions(benchmark::State& state) {
  constexpr int kPartitions = 2000;
  const il::Table& table = rows();
  for (auto _ : state) {
    state.PauseTiming();
    fs::path dir = fresh_dir("rawsmall");
    sqlite3* db = nullptr;
    sqlite3_open((dir / "s.db").c_str(), &db);
    check(sqlite3_exec(db,
                       "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                       "CREATE TABLE \"bench__events\" (\"date\" TEXT, \"campaign\" TEXT, "
                       "\"clicks\" INTEGER, \"cost\" REAL, \"active\" INTEGER);"
                       "CREATE INDEX \"bench__events__date\" ON \"bench__events\" (\"date\");"
                       "CREATE TABLE parts (dataset TEXT NOT NULL, key TEXT NOT NULL, rows "
                       "INTEGER NOT NULL, written_at TEXT NOT NULL, PRIMARY KEY (dataset, key));",
                       nullptr, nullptr, nullptr),
          db);
    sqlite3_stmt* del = nullptr;
    sqlite3_stmt* ins = nullptr;
    sqlite3_stmt* rec = nullptr;
    sqlite3_prepare_v2(db, "DELETE FROM \"bench__events\" WHERE \"date\" >= ? AND \"date\" < ?", -1,
                       &del, nullptr);
    sqlite3_prepare_v2(db,
                       "INSERT INTO \"bench__events\" (\"date\", \"campaign\", \"clicks\", "
                       "\"cost\", \"active\") VALUES (?, ?, ?, ?, ?)",
                       -1, &ins, nullptr);
    sqlite3_prepare_v2(db,
                       "INSERT OR REPLACE INTO parts (dataset, key, rows, written_at) "
                       "VALUES ('bench__events', ?, 10, '2026-01-01T00:00:00Z')",
                       -1, &rec, nullptr);
    const sys_days first = year{2020} / 1 / 1;
    state.ResumeTiming();
    char day[32], next[32];
    for (int p = 0; p < kPartitions; ++p) {
      const auto d = (first + days(p)).time_since_epoch().count();
      const int n = static_cast<int>(il::detail::put_date(day, d) - day);
      const int m = static_cast<int>(il::detail::put_date(next, d + 1) - next);
      check(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), db);
      sqlite3_bind_text(del, 1, day, n, SQLITE_STATIC);
      sqlite3_bind_text(del, 2, next, m, SQLITE_STATIC);
      check(sqlite3_step(del), db);
      sqlite3_reset(del);
      for (std::size_t r = static_cast<std::size_t>(p) * 10;
           r < static_cast<std::size_t>(p) * 10 + 10; ++r) {
        sqlite3_bind_text(ins, 1, day, n, SQLITE_STATIC);
        const std::string& c = table.column(1)[r].as_string();
        sqlite3_bind_text(ins, 2, c.data(), static_cast<int>(c.size()), SQLITE_STATIC);
        sqlite3_bind_int64(ins, 3, table.column(2)[r].as_int());
        sqlite3_bind_double(ins, 4, table.column(3)[r].as_double());
        sqlite3_bind_int(ins, 5, table.column(4)[r].as_bool() ? 1 : 0);
        check(sqlite3_step(ins), db);
        sqlite3_reset(ins);
      }
      sqlite3_bind_text(rec, 1, day, n, SQLITE_STATIC);
      check(sqlite3_step(rec), db);
      sqlite3_reset(rec);
      check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db);
    }
    state.PauseTiming();
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    sqlite3_finalize(rec);
    sqlite3_close(db);
    fs::remove_all(dir);
    state.ResumeTiming();
  }
  state.counters["us/partition"] =
      benchmark::Counter(kPartitions / 1e6, benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
}

// "Which hours are missing?" over 10^6 hours after 1000 scattered recorded ranges.
void BM_StoreMissingMillionHours(benchmark::State& state) {
  fs::path dir = fresh_dir("store");
  il::SqliteStore store((dir / "store.db").string());
  il::TimePartitionConfig hourly("ts",
                                 {.granularity = il::TimeGranularity::HOUR, .allow_window = true});
  il::DatasetRef events{"bench", "hourly", &hourly};
  const il::TimePoint start(sys_days(year{2000} / 1 / 1));
  const std::int64_t span = 1'000'000;
  std::mt19937_64 rng(3);
  il::MaterializationRecord record;
  record.asset = "hourly";
  record.status = il::MaterializationStatus::materialized;
  record.run_id = "r";
  for (int i = 0; i < 1000; ++i) {
    auto a = static_cast<std::int64_t>(rng() % span);
    std::int64_t b = std::min(span - 1, a + static_cast<std::int64_t>(rng() % 500));
    record.status =
        rng() % 4 ? il::MaterializationStatus::materialized : il::MaterializationStatus::failed;
    il::TimePartitionWindow w(il::TimeGranularity::HOUR.advance(start, a),
                              il::TimeGranularity::HOUR.advance(start, b),
                              il::TimeGranularity::HOUR);
    store.record(events, &w, record);
  }
  il::TimePartitionWindow all(start, il::TimeGranularity::HOUR.advance(start, span - 1),
                              il::TimeGranularity::HOUR);
  std::size_t missing = 0;
  for (auto _ : state) {
    il::WindowStatus status = store.status(events, all);
    missing = status.count(status.missing);
    benchmark::DoNotOptimize(missing);
  }
  state.counters["missing_hours"] = static_cast<double>(missing);
  fs::remove_all(dir);
}

BENCHMARK(BM_SqliteWindowWrite)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_RawSqliteInsert)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_FileJsonlWindowWrite)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_RawJsonlWrite)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_SqliteReadPartition)->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_RawSqliteReadPartition)->Unit(benchmark::kMillisecond)->Iterations(10);
BENCHMARK(BM_FileJsonlReadPartition)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SqliteSmallPartitions)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_RawSqliteSmallPartitions)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_StoreMissingMillionHours)->Unit(benchmark::kMillisecond);


}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto ratio = [&](const char* ours, const char* raw, int iterations, const char* target) {
    auto a = reporter.times.find(fmt::format("{}/iterations:{}", ours, iterations));
    auto b = reporter.times.find(fmt::format("{}/iterations:{}", raw, iterations));
    if (a == reporter.times.end() || b == reporter.times.end()) return;
    std::cout << fmt::format("{} runs at {:.2f} of {} (target >= {})\n", ours,
                             b->second / a->second, raw, target);
  };
  ratio("BM_SqliteWindowWrite", "BM_RawSqliteInsert", 3, "0.80");
  ratio("BM_FileJsonlWindowWrite", "BM_RawJsonlWrite", 3, "0.70");
  ratio("BM_SqliteReadPartition", "BM_RawSqliteReadPartition", 10, "0.80");
  ratio("BM_SqliteSmallPartitions", "BM_RawSqliteSmallPartitions", 3, "0.80");
  benchmark::Shutdown();
  return 0;
}
