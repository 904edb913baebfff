// The PostgreSQL task queue: how fast workers drain it, and how fast a large plan goes in.
//
//   scripts/with-postgres build/bench/queue_bench --benchmark_counters_tabular=true
//
// Without IL_TEST_POSTGRES_URL it says so and runs nothing. Every case uses a schema of its own,
// dropped afterwards.
//
// Counters:
//   tasks_per_s   trivial tasks (memory destination) claimed, run under their partition lock
//                 and completed, by 4 workers as threads of one process (/threads) or as 4
//                 processes (/processes), the way `interloper worker` does it, and by one
//                 queue::Worker of 4 threads, which plans from the stored request (/worker)
//                 (target >= 1000)
//   enqueue_s     writing a plan of 10^6 hourly tasks (target < 10)
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "interloper/interloper.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/queue/queue.hpp"
#include "interloper/queue/worker.hpp"
#include "interloper/sql/identifier.hpp"

namespace {

using namespace std::chrono;
namespace queue = il::queue;

constexpr int kWorkers = 4;
constexpr auto kLease = seconds(30);

std::string server_url() {
  const char* url = std::getenv("IL_TEST_POSTGRES_URL");
  return url ? url : "";
}

std::string fresh_schema() {
  static std::mt19937 rng(std::random_device{}());
  return fmt::format("il_queue_bench_{}", rng() % 1000000u);
}

void drop_schema(const std::string& schema) {
  il::postgres::Connection db(
      std::make_shared<const il::postgres::Url>(il::postgres::parse_url(server_url(), {})));
  db.exec(fmt::format("DROP SCHEMA IF EXISTS {} CASCADE", il::sql::quote_identifier(schema)));
}

// A trivial task: nothing to compute, an empty partition to write.
il::Table nothing(il::ExecutionContext&) { return il::Table(); }

// Hourly events and a daily rollup of them, so completing hours releases days.
il::DAG hours_and_days(std::shared_ptr<il::Destination> destination) {
  static const il::TimePartitionConfig hourly("hour", {.granularity = il::TimeGranularity::HOUR});
  static const il::TimePartitionConfig daily("date", {.granularity = il::TimeGranularity::DAY});
  il::Source source("bench", std::move(destination));
  source.asset("events", nothing).partitioning(hourly);
  source.asset("daily", nothing).partitioning(daily).deps({"events"});
  return il::DAG({source});
}

struct Enqueued {
  std::string url;
  std::string schema;
  std::int64_t tasks = 0;
};

Enqueued enqueue(const il::Plan& plan, const il::PartitionWindow& window) {
  Enqueued out;
  out.schema = fresh_schema();
  out.url = server_url() + "?schema=" + out.schema;
  queue::Queue q(out.url);
  queue::BackfillSpec spec{.pipeline = "bench",
                           .pipeline_hash = "bench",
                           .request = queue::make_request(plan, window, {})};
  q.enqueue(plan, spec);
  out.tasks = static_cast<std::int64_t>(plan.to_run());
  return out;
}

// One worker thread's loop, as `interloper worker` runs it: claim (with the partition's lock),
// run the task by the plan's own path, complete (freeing the lock). Returns how many tasks it
// completed.
std::int64_t drain(queue::Queue& q, const il::DAG& dag, const il::Plan& plan,
                   const std::string& owner) {
  std::int64_t done = 0;
  il::ExecuteOptions options;
  for (;;) {
    std::optional<queue::Queue::Claim> claim = q.claim("bench", owner, kLease);
    if (!claim) {
      if (q.unfinished("bench") == 0) return done;
      std::this_thread::sleep_for(milliseconds(2));
      continue;
    }
    if (!claim->locked()) {
      q.release(*claim);
      continue;
    }
    const queue::ClaimedTask& task = claim->task();
    il::TaskResult result =
        il::execute_task(dag, plan, static_cast<std::size_t>(task.task), options);
    if (result.status != il::Status::succeeded) {
      throw std::runtime_error(task.asset + " " + task.partition + ": " + result.error);
    }
    if (q.complete(*claim)) ++done;
  }
}

// 40 days of hours and their days: 960 + 40 tasks.
const il::TimePartitionWindow kDrainWindow(il::TimePoint(year{2026} / 1 / 1),
                                           il::TimePoint(sys_days(year{2026} / 2 / 9) + hours(23)),
                                           il::TimeGranularity::HOUR);

void set_rate(benchmark::State& state, std::int64_t tasks, double seconds_spent) {
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["tasks_per_s"] = static_cast<double>(tasks) / seconds_spent;
}

void BM_DrainThreads(benchmark::State& state) {
  if (server_url().empty()) return state.SkipWithError("IL_TEST_POSTGRES_URL is not set");
  il::DAG dag = hours_and_days(std::make_shared<il::MemoryDestination>());
  const il::Plan plan = il::plan(dag, &kDrainWindow, {});
  std::int64_t tasks = 0;
  double spent = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const Enqueued in = enqueue(plan, kDrainWindow);
    queue::Queue q(in.url);
    state.ResumeTiming();
    const auto t0 = steady_clock::now();
    std::atomic<std::int64_t> done{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w) {
      workers.emplace_back([&, w] { done += drain(q, dag, plan, fmt::format("bench-{}", w)); });
    }
    for (auto& t : workers) t.join();
    spent += duration<double>(steady_clock::now() - t0).count();
    tasks += done.load();
    if (done.load() != in.tasks) state.SkipWithError("tasks were lost");
    state.PauseTiming();
    drop_schema(in.schema);
    state.ResumeTiming();
  }
  set_rate(state, tasks, spent);
}

void BM_DrainProcesses(benchmark::State& state) {
  if (server_url().empty()) return state.SkipWithError("IL_TEST_POSTGRES_URL is not set");
  std::int64_t tasks = 0;
  double spent = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::int64_t planned = 0;
    std::string url, schema;
    {
      il::DAG dag = hours_and_days(std::make_shared<il::MemoryDestination>());
      const Enqueued in = enqueue(il::plan(dag, &kDrainWindow, {}), kDrainWindow);
      planned = in.tasks;
      url = in.url;
      schema = in.schema;
    }
    state.ResumeTiming();
    const auto t0 = steady_clock::now();
    std::vector<pid_t> children;
    for (int w = 0; w < kWorkers; ++w) {
      const pid_t pid = fork();
      if (pid == 0) {
        // A worker process of its own: its own connections, DAG, plan and destination.
        int code = 0;
        try {
          il::DAG dag = hours_and_days(std::make_shared<il::MemoryDestination>());
          const il::Plan plan = il::plan(dag, &kDrainWindow, {});
          queue::Queue q(url);
          drain(q, dag, plan, fmt::format("bench-process-{}", w));
        } catch (const std::exception& e) {
          std::cerr << "worker process: " << e.what() << "\n";
          code = 1;
        }
        std::_Exit(code);
      }
      children.push_back(pid);
    }
    bool failed = false;
    for (pid_t pid : children) {
      int status = 0;
      waitpid(pid, &status, 0);
      failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    spent += duration<double>(steady_clock::now() - t0).count();
    state.PauseTiming();
    {
      queue::Queue q(url);
      if (failed || q.unfinished("bench") != 0) state.SkipWithError("a worker process failed");
      const auto counts = q.status("bench");
      if (!counts.empty() && counts.front().counts.succeeded != planned) {
        state.SkipWithError("tasks were lost");
      }
    }
    drop_schema(schema);
    state.ResumeTiming();
    tasks += planned;
  }
  set_rate(state, tasks, spent);
}

// The worker itself (queue/worker.hpp): 4 threads, the plan made from the stored request.
void BM_DrainWorker(benchmark::State& state) {
  if (server_url().empty()) return state.SkipWithError("IL_TEST_POSTGRES_URL is not set");
  il::DAG dag = hours_and_days(std::make_shared<il::MemoryDestination>());
  const il::Plan plan = il::plan(dag, &kDrainWindow, {});
  std::int64_t tasks = 0;
  double spent = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const Enqueued in = enqueue(plan, kDrainWindow);
    queue::Queue q(in.url);
    queue::Worker worker(dag, q,
                         {.pipeline = "bench",
                          .pipeline_hash = "bench",
                          .lease = kLease,
                          .concurrency = kWorkers,
                          .exit_when_idle = true,
                          .run = {},
                          .print = {}});
    const std::atomic<bool> stop{false};
    state.ResumeTiming();
    const auto t0 = steady_clock::now();
    worker.run(stop, [] { return 0; });
    spent += duration<double>(steady_clock::now() - t0).count();
    state.PauseTiming();
    const auto counts = q.status("bench");
    if (counts.empty() || counts.front().counts.succeeded != in.tasks) {
      state.SkipWithError("tasks were lost");
    }
    tasks += in.tasks;
    drop_schema(in.schema);
    state.ResumeTiming();
  }
  set_rate(state, tasks, spent);
}

// 10^6 hours (about 114 years) of one asset.
void BM_EnqueueMillionTasks(benchmark::State& state) {
  if (server_url().empty()) return state.SkipWithError("IL_TEST_POSTGRES_URL is not set");
  static const il::TimePartitionConfig hourly("hour", {.granularity = il::TimeGranularity::HOUR});
  il::Source source("bench", std::make_shared<il::MemoryDestination>());
  source.asset("events", nothing).partitioning(hourly);
  il::DAG dag({source});
  const sys_seconds start = sys_days(year{2000} / 1 / 1);
  const il::TimePartitionWindow window(start, start + hours(999'999), il::TimeGranularity::HOUR);
  const il::Plan plan = il::plan(dag, &window, {});
  double spent = 0;
  for (auto _ : state) {
    const auto t0 = steady_clock::now();
    const Enqueued in = enqueue(plan, window);
    spent += duration<double>(steady_clock::now() - t0).count();
    state.PauseTiming();
    if (in.tasks != 1'000'000) state.SkipWithError("the plan is not 10^6 tasks");
    drop_schema(in.schema);
    state.ResumeTiming();
  }
  state.counters["tasks"] = static_cast<double>(plan.to_run());
  state.counters["enqueue_s"] = spent / static_cast<double>(state.iterations());
}

BENCHMARK(BM_DrainThreads)->Name("BM_Drain/threads")->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DrainProcesses)->Name("BM_Drain/processes")->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DrainWorker)->Name("BM_Drain/worker")->Iterations(3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EnqueueMillionTasks)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (server_url().empty()) {
    std::cout << "queue_bench: IL_TEST_POSTGRES_URL is not set; run it under scripts/with-postgres\n";
    return 0;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
