// `interloper serve` over 10^6 hourly partitions in a SQLite store: one materialized stretch
// broken by a failed hour every 1 000 hours (1 000 failures, 2 001 ranges). The asset page's API
// call in process, the same call over HTTP to a running server, and the page in headless
// Chromium until its grid is laid out (the time the page itself records, from the start of the
// navigation; Chromium's own start is not counted).
//
//   build/bench/serve_bench
//   build/bench/serve_bench --benchmark_filter=Chromium   # needs /usr/bin/chromium
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "interloper/interloper.hpp"
#include "interloper/serve/api.hpp"
#include "interloper/serve/server.hpp"
#include "support/chromium.hpp"

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

il::DAG hourly_dag() {
  const il::TimePartitionConfig hourly("ts", {.granularity = il::TimeGranularity::HOUR});
  il::Source source("bench", nullptr);
  source.asset("events", nothing).partitioning(hourly);
  return il::DAG({source});
}

const il::TimePartitionWindow kAll(hour(0), hour(kHours - 1), il::TimeGranularity::HOUR);

// The store file, filled once per process and removed at exit.
class MillionHours {
 public:
  MillionHours()
      : path_(fs::temp_directory_path() / fmt::format("il-serve-bench-{}.db", ::getpid())) {
    const il::DAG dag = hourly_dag();
    il::SqliteStore store(path_.string());
    const il::DatasetRef dataset = dag.asset("events").dataset();
    il::MaterializationRecord record;
    record.asset = "events";
    record.status = il::MaterializationStatus::materialized;
    store.record(dataset, &kAll, record);
    record.status = il::MaterializationStatus::failed;
    for (std::int64_t i = 500; i < kHours; i += 1000) {
      record.run_id = fmt::format("run-{}", i);
      record.error = fmt::format("command failed: exit 1 (hour {})", i);
      il::TimePartitionWindow one(hour(i), hour(i), il::TimeGranularity::HOUR);
      store.record(dataset, &one, record);
    }
  }
  ~MillionHours() {
    // The servers' connections end with their processes, leaving the WAL files behind.
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path_.string() + suffix);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

const MillionHours& million_hours() {
  static const MillionHours store;
  return store;
}

il::serve::ApiOptions shown() {
  il::serve::ApiOptions options;
  options.pipeline = "bench";
  return options;
}

std::string grid_path() { return "/api/assets/events?window=" + kAll.to_string(); }

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// `interloper serve`'s server over the store, in a child process with a store connection of its
// own, until destroyed.
class ServerProcess {
 public:
  ServerProcess() : port_(free_port()) {
    const std::string path = million_hours().path().string();
    pid_ = ::fork();
    if (pid_ == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      const il::DAG dag = hourly_dag();
      il::serve::Api api(dag, std::make_shared<il::SqliteStore>(path), shown());
      il::serve::ServerOptions options;
      options.port = port_;
      il::serve::run_server(api, options);
      ::_exit(0);
    }
    for (int i = 0; i < 200; ++i) {
      if (client().Get("/api/lineage")) return;
      std::this_thread::sleep_for(milliseconds(50));
    }
    throw std::runtime_error("serve_bench: the server did not answer");
  }
  ~ServerProcess() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(30);
    return c;
  }
  std::string url(const std::string& path) const {
    return fmt::format("http://127.0.0.1:{}{}", port_, path);
  }

 private:
  int port_;
  pid_t pid_ = -1;
};

void BM_GridOfMillionHours(benchmark::State& state) {
  const il::DAG dag = hourly_dag();
  il::serve::Api api(dag, std::make_shared<il::SqliteStore>(million_hours().path().string()),
                     shown());
  const std::string window = kAll.to_string();
  std::size_t bytes = 0;
  for (auto _ : state) {
    il::serve::Response answer = api.get("/api/assets/events", window);
    if (answer.status != 200) state.SkipWithError(answer.body.c_str());
    bytes = answer.body.size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["response_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_GridOfMillionHours)->Unit(benchmark::kMillisecond);

// The same call as the page makes it: a GET over loopback to a running server.
void BM_GridOfMillionHoursOverHttp(benchmark::State& state) {
  million_hours();
  const ServerProcess server;
  httplib::Client client = server.client();
  client.set_keep_alive(false);  // a fresh connection per call, as a page load has
  const std::string path = grid_path();
  std::size_t bytes = 0;
  for (auto _ : state) {
    const auto answer = client.Get(path);
    if (!answer || answer->status != 200) {
      state.SkipWithError("the grid call failed");
      break;
    }
    bytes = answer->body.size();
  }
  state.counters["response_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_GridOfMillionHoursOverHttp)->Unit(benchmark::kMillisecond);

// The asset page in headless Chromium, from the start of its navigation until its grid of
// 1 000 buckets is laid out (the page records that in main's data-rendered-ms).
void BM_AssetPageOfMillionHoursInChromium(benchmark::State& state) {
  if (!fs::exists(il::testing::kChromium)) {
    state.SkipWithError("needs /usr/bin/chromium");
    return;
  }
  million_hours();
  const ServerProcess server;
  const fs::path profile =
      fs::temp_directory_path() / fmt::format("il-serve-bench-chromium-{}", ::getpid());
  {
    il::testing::Chromium browser(il::testing::kChromium, profile.string());
    const std::string page = server.url("/assets/events?window=" + kAll.to_string());
    const std::string drawn =
        "document.querySelectorAll('.cell.bucket').length === 1000 && "
        "!!document.getElementById('main').dataset.renderedMs";
    double wall = 0;
    for (auto _ : state) {
      browser.open("about:blank");
      browser.wait_for("location.href === 'about:blank'", seconds(30));
      const auto started = steady_clock::now();
      browser.open(page);
      if (!browser.wait_for(drawn, seconds(30))) {
        state.SkipWithError("the page did not draw its grid within 30 s");
        break;
      }
      wall = duration<double>(steady_clock::now() - started).count();
      const double rendered =
          browser.evaluate("Number(document.getElementById('main').dataset.renderedMs)")
              .get<double>();
      state.SetIterationTime(rendered / 1000);
    }
    state.counters["wall_ms"] = wall * 1000;  // the last load, seen from here (50 ms polls)
  }
  fs::remove_all(profile);
}
BENCHMARK(BM_AssetPageOfMillionHoursInChromium)
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(5);

}  // namespace

BENCHMARK_MAIN();
