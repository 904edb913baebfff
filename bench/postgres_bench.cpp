// PostgresDestination throughput against plain libpq doing the same work on the same server:
// a 30-day window of 10^6 rows (5 columns) written, against binary COPY into an identical table;
// one 10^5-row partition read, against COPY ... TO STDOUT of the same rows.
//
//   scripts/with-postgres build/bench/postgres_bench     # a throw-away server
//   IL_TEST_POSTGRES_URL=postgresql://... build/bench/postgres_bench
//
// Without IL_TEST_POSTGRES_URL it says so and runs nothing. After the runs it prints each
// operation's speed as a fraction of plain libpq.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <libpq-fe.h>

#include <bit>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include "ratio_reporter.hpp"
#include "interloper/destination.hpp"
#include "interloper/postgres/postgres.hpp"

namespace il = interloper;
using namespace std::chrono;

namespace {

constexpr std::size_t kRows = 1'000'000;
constexpr unsigned kDays = 30;
constexpr std::size_t kReadRows = 100'000;

const il::TimePartitionConfig kDaily("date", {.allow_window = true});
const il::DatasetRef kDataset{"bench", "events", &kDaily};
const il::DatasetRef kReadDataset{"bench", "one_day", &kDaily};
const il::TimePartitionWindow kWindow(year{2026} / 1 / 1, year{2026} / 1 / kDays);
const il::TimePartitionWindow kReadDay(year{2026} / 2 / 1, year{2026} / 2 / 1);

std::string server_url() {
  const char* url = std::getenv("IL_TEST_POSTGRES_URL");
  return url ? url : "";
}

const std::string& schema() {
  static const std::string name = fmt::format("il_bench_{}", std::random_device()() % 1000000u);
  return name;
}

std::string schema_url() { return server_url() + "?schema=" + schema(); }

// The rows as plain columns (what a hand-written loader starts from) and as an il::Table.
struct Rows {
  std::vector<std::int32_t> day;  // days since 1970-01-01
  std::vector<std::string> campaign;
  std::vector<std::int64_t> clicks;
  std::vector<double> cost;
  std::vector<bool> active;
  il::Table table;
};

Rows make_rows(std::size_t n, sys_days first, unsigned days_spanned) {
  Rows r;
  r.table = il::Table(il::Schema({{"date", il::DataType::date},
                                  {"campaign", il::DataType::string},
                                  {"clicks", il::DataType::int64},
                                  {"cost", il::DataType::float64},
                                  {"active", il::DataType::boolean}}));
  r.table.reserve(n);
  std::mt19937_64 rng(1);
  for (std::size_t i = 0; i < n; ++i) {
    sys_days d = first + days(i * days_spanned / n);
    r.day.push_back(static_cast<std::int32_t>(d.time_since_epoch().count()));
    r.campaign.push_back(fmt::format("campaign-{}", rng() % 1000));
    r.clicks.push_back(static_cast<std::int64_t>(rng() % 100000));
    r.cost.push_back(static_cast<double>(rng() % 1000000) / 100.0);
    r.active.push_back(rng() % 2 == 0);
    r.table.append_row({il::Value(d), il::Value(r.campaign.back()),
                        il::Value(static_cast<long long>(r.clicks.back())),
                        il::Value(r.cost.back()), il::Value(static_cast<bool>(r.active.back()))});
  }
  return r;
}

const Rows& window_rows() {
  static const Rows rows = make_rows(kRows, sys_days(year{2026} / 1 / 1), kDays);
  return rows;
}

il::PostgresDestination& destination() {
  static il::PostgresDestination d(schema_url());
  return d;
}

// A plain libpq connection, for the hand-written side.
struct Raw {
  Raw() : conn(PQconnectdb(il::postgres::parse_url(server_url(), {}).conninfo.c_str())) {
    if (PQstatus(conn) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn));
    exec("SET client_min_messages = warning");
  }
  ~Raw() { PQfinish(conn); }
  void exec(const std::string& sql) {
    PGresult* r = PQexec(conn, sql.c_str());
    auto status = PQresultStatus(r);
    std::string error = PQresultErrorMessage(r);
    PQclear(r);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_COPY_IN &&
        status != PGRES_COPY_OUT) {
      throw std::runtime_error(error);
    }
  }
  PGconn* conn;
};

// The destination's table, column for column and with the same index, to load by hand.
std::string raw_table() {
  static const std::string name = [] {
    Raw raw;
    std::string t = fmt::format("\"{}\".raw_events", schema());
    raw.exec(fmt::format("CREATE SCHEMA IF NOT EXISTS \"{}\"", schema()));
    raw.exec("CREATE TABLE IF NOT EXISTS " + t +
             " (\"date\" date, campaign text, clicks bigint, cost double precision, "
             "active boolean)");
    raw.exec("CREATE INDEX IF NOT EXISTS raw_events_date ON " + t + " (\"date\")");
    return t;
  }();
  return name;
}

void put16(std::string& out, std::uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v);
}
void put32(std::string& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out += static_cast<char>(v >> s);
}
void put64(std::string& out, std::uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out += static_cast<char>(v >> s);
}

// One transaction: delete the window's rows, COPY the rows in binary, commit.
void raw_copy(Raw& raw, const Rows& rows) {
  raw.exec("BEGIN");
  raw.exec("DELETE FROM " + raw_table() +
           " WHERE \"date\" >= '2026-01-01' AND \"date\" < '2026-01-31'");
  raw.exec("COPY " + raw_table() +
           " (\"date\", campaign, clicks, cost, active) FROM STDIN (FORMAT binary)");
  std::string buffer("PGCOPY\n\377\r\n\0", 11);
  put32(buffer, 0);
  put32(buffer, 0);
  for (std::size_t i = 0; i < rows.day.size(); ++i) {
    put16(buffer, 5);
    put32(buffer, 4);
    put32(buffer, static_cast<std::uint32_t>(rows.day[i] - 10957));
    put32(buffer, static_cast<std::uint32_t>(rows.campaign[i].size()));
    buffer += rows.campaign[i];
    put32(buffer, 8);
    put64(buffer, static_cast<std::uint64_t>(rows.clicks[i]));
    put32(buffer, 8);
    put64(buffer, std::bit_cast<std::uint64_t>(rows.cost[i]));
    put32(buffer, 1);
    buffer += rows.active[i] ? '\1' : '\0';
    if (buffer.size() >= (1u << 20)) {
      PQputCopyData(raw.conn, buffer.data(), static_cast<int>(buffer.size()));
      buffer.clear();
    }
  }
  put16(buffer, 0xFFFF);
  PQputCopyData(raw.conn, buffer.data(), static_cast<int>(buffer.size()));
  PQputCopyEnd(raw.conn, nullptr);
  while (PGresult* r = PQgetResult(raw.conn)) PQclear(r);
  raw.exec("COMMIT");
}

void BM_PostgresWindowWrite(benchmark::State& state) {
  const Rows& rows = window_rows();
  for (auto _ : state) destination().write(kDataset, &kWindow, rows.table);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRows));
}

void BM_RawBinaryCopy(benchmark::State& state) {
  const Rows& rows = window_rows();
  Raw raw;
  for (auto _ : state) raw_copy(raw, rows);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRows));
}

void prepare_read_day() {
  static bool done = [] {
    Rows day = make_rows(kReadRows, sys_days(year{2026} / 2 / 1), 1);
    destination().write(kReadDataset, &kReadDay, day.table);
    return true;
  }();
  (void)done;
}

void BM_PostgresReadPartition(benchmark::State& state) {
  prepare_read_day();
  for (auto _ : state) {
    il::Table t = destination().read(kReadDataset, &kReadDay);
    if (t.num_rows() != kReadRows) state.SkipWithError("wrong row count");
    benchmark::DoNotOptimize(t);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kReadRows));
}

void BM_RawCopyTo(benchmark::State& state) {
  prepare_read_day();
  Raw raw;
  const std::string sql = fmt::format(
      "COPY (SELECT \"date\", campaign, clicks, cost, active FROM \"{}\".bench__one_day WHERE "
      "\"date\" >= '2026-02-01' AND \"date\" < '2026-02-02') TO STDOUT (FORMAT binary)",
      schema());
  for (auto _ : state) {
    raw.exec(sql);
    std::size_t rows = 0;
    char* data = nullptr;
    int n;
    while ((n = PQgetCopyData(raw.conn, &data, 0)) > 0) {
      ++rows;
      PQfreemem(data);
    }
    while (PGresult* r = PQgetResult(raw.conn)) PQclear(r);
    if (rows < kReadRows) state.SkipWithError("wrong row count");
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kReadRows));
}

BENCHMARK(BM_PostgresWindowWrite)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_RawBinaryCopy)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_PostgresReadPartition)->Unit(benchmark::kMillisecond)->Iterations(10)->UseRealTime();
BENCHMARK(BM_RawCopyTo)->Unit(benchmark::kMillisecond)->Iterations(10)->UseRealTime();


}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (server_url().empty()) {
    std::cout << "postgres_bench: IL_TEST_POSTGRES_URL is unset; run it under "
                 "scripts/with-postgres or point it at a server\n";
    return 0;
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto ratio = [&](const char* ours, const char* raw, int iterations, const char* target) {
    auto a = reporter.times.find(fmt::format("{}/iterations:{}/real_time", ours, iterations));
    auto b = reporter.times.find(fmt::format("{}/iterations:{}/real_time", raw, iterations));
    if (a == reporter.times.end() || b == reporter.times.end()) return;
    std::cout << fmt::format("{} runs at {:.2f} of {}{}\n", ours, b->second / a->second, raw,
                             target);
  };
  ratio("BM_PostgresWindowWrite", "BM_RawBinaryCopy", 3, " (target >= 0.80)");
  ratio("BM_PostgresReadPartition", "BM_RawCopyTo", 10, "");
  {
    Raw raw;  // the schema goes with its tables
    raw.exec(fmt::format("DROP SCHEMA IF EXISTS \"{}\" CASCADE", schema()));
  }
  benchmark::Shutdown();
  return 0;
}
