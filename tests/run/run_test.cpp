// Runners, validation, events, the materialization store and backfills.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "interloper/interloper.hpp"
#include "interloper/store/range_map.hpp"

namespace {

using namespace std::chrono;

il::TimePoint day(int d) { return year{2026} / 1 / d; }

// Waits (bounded) until `parties` callers have arrived; false on timeout.
class Rendezvous {
 public:
  explicit Rendezvous(int parties) : parties_(parties) {}
  bool arrive_and_wait() {
    std::unique_lock lock(mutex_);
    ++arrived_;
    cv_.notify_all();
    return cv_.wait_for(lock, seconds(20), [this] { return arrived_ >= parties_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int parties_;
  int arrived_ = 0;
};

// Records which assets computed, in order.
struct Journal {
  std::mutex mutex;
  std::vector<std::string> names;
  void add(const std::string& name) {
    std::lock_guard lock(mutex);
    names.push_back(name);
  }
  std::size_t count(const std::string& name) {
    std::lock_guard lock(mutex);
    return static_cast<std::size_t>(std::count(names.begin(), names.end(), name));
  }
};

// A daily asset writing `rows` rows per partition.
il::ComputeFn daily_rows(Journal* journal, std::string name, int rows = 2) {
  return [=](il::ExecutionContext& ctx) {
    if (journal != nullptr) journal->add(name);
    il::Table t;
    for (int i = 0; i < rows; ++i) t.append({{"date", ctx.partition_date()}, {"n", i}});
    return t;
  };
}

const il::TimePartitionConfig kDaily("date");

struct RunnerCase {
  std::string name;
  std::shared_ptr<il::Runner> runner;
};

void PrintTo(const RunnerCase& c, std::ostream* out) { *out << c.name; }

class Runners : public ::testing::TestWithParam<RunnerCase> {
 protected:
  const il::Runner& runner() const { return *GetParam().runner; }
  std::shared_ptr<il::MemoryDestination> destination_ = std::make_shared<il::MemoryDestination>();
};

INSTANTIATE_TEST_SUITE_P(
    All, Runners,
    ::testing::Values(RunnerCase{"Serial", std::make_shared<il::SerialRunner>()},
                      RunnerCase{"Threaded", std::make_shared<il::ThreadedRunner>(4)}),
    [](const auto& info) { return info.param.name; });

TEST_P(Runners, EmittedBatchesAreWrittenThroughTheDestinationsWriter) {
  il::Source s("ads", destination_);
  s.asset("clicks", [](il::ExecutionContext& ctx) {
     for (int b = 0; b < 5; ++b) {
       il::Table batch;
       for (int i = 0; i < 100; ++i) {
         batch.append({{"date", ctx.partition_date()}, {"n", b * 100 + i}});
       }
       ctx.emit(batch);
     }
     return il::Table();
   }).partitioning(kDaily);
  il::DAG dag({s});
  il::RunResult result = runner().run(dag, il::TimePartition(day(5)));
  ASSERT_TRUE(result.ok()) << result.error_summary();
  EXPECT_EQ(result.asset("clicks").rows, 500);
  il::TimePartition p(day(5));
  EXPECT_EQ(destination_->row_count(dag.asset("clicks").dataset(), &p), 500);
}

TEST_P(Runners, ChainRunsInOrderAndLoadsTheUpstreamWindow) {
  Journal journal;
  il::Source s("ads", destination_);
  s.asset(
       "report",
       [&](il::ExecutionContext& ctx) {
         journal.add("report");
         il::Table clean = ctx.load("clean");
         il::Table t;
         t.append({{"date", ctx.partition_date()}, {"rows", static_cast<int>(clean.num_rows())}});
         return t;
       })
      .partitioning(kDaily)
      .deps({"clean"});
  s.asset("raw", daily_rows(&journal, "raw", 3)).partitioning(kDaily);
  s.asset("clean",
          [&](il::ExecutionContext& ctx) {
            journal.add("clean");
            return ctx.load("raw");
          })
      .partitioning(kDaily)
      .deps({"raw"});
  il::DAG dag({s});
  il::RunResult result = runner().run(dag, il::TimePartition(day(5)));
  ASSERT_TRUE(result.ok()) << result.error_summary();
  EXPECT_EQ(journal.names, (std::vector<std::string>{"raw", "clean", "report"}));
  EXPECT_EQ(result.window, "2026-01-05");
  EXPECT_EQ(result.asset("raw").rows, 3);
  EXPECT_EQ(result.asset("clean").rows, 3);
  EXPECT_EQ(result.asset("report").status, il::Status::succeeded);
  il::TimePartition p(day(5));
  il::Table report = destination_->read(dag.asset("report").dataset(), p.as_window().get());
  ASSERT_EQ(report.num_rows(), 1u);
  EXPECT_EQ(report.at(0, "rows"), il::Value(3));
  EXPECT_THROW(result.asset("nope"), il::RunError);
}

TEST_P(Runners, FailedAssetCancelsItsDownstreamsOnly) {
  Journal journal;
  il::Source s("s", destination_);
  s.asset("bad", [](il::ExecutionContext&) -> il::Table {
     throw std::runtime_error("boom");
   }).partitioning(kDaily);
  s.asset("after_bad", daily_rows(&journal, "after_bad")).partitioning(kDaily).deps({"bad"});
  s.asset("deeper", daily_rows(&journal, "deeper")).partitioning(kDaily).deps({"after_bad"});
  s.asset("good", daily_rows(&journal, "good")).partitioning(kDaily);
  il::DAG dag({s});
  il::RunResult result = runner().run(dag, il::TimePartition(day(1)));
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.status, il::Status::failed);
  EXPECT_EQ(result.asset("bad").status, il::Status::failed);
  EXPECT_EQ(result.asset("bad").error, "boom");
  EXPECT_EQ(result.asset("after_bad").status, il::Status::canceled);
  EXPECT_NE(result.asset("after_bad").error.find("'bad'"), std::string::npos);
  EXPECT_EQ(result.asset("deeper").status, il::Status::canceled);
  EXPECT_NE(result.asset("deeper").error.find("'bad'"), std::string::npos);
  EXPECT_EQ(result.asset("good").status, il::Status::succeeded);
  EXPECT_EQ(journal.names, std::vector<std::string>{"good"});
  EXPECT_EQ(result.error_summary(), "bad: boom");
}

TEST_P(Runners, NonStandardExceptionsFailTheAsset) {
  struct NotAnException {};
  il::Source s("s", destination_);
  s.asset("int", [](il::ExecutionContext&) -> il::Table { throw 42; });
  s.asset("struct", [](il::ExecutionContext&) -> il::Table { throw NotAnException{}; });
  s.asset("fine", [](il::ExecutionContext&) { return il::Table(); });
  il::DAG dag({s});
  il::RunResult result = runner().run(dag);
  EXPECT_EQ(result.asset("int").status, il::Status::failed);
  EXPECT_NE(result.asset("int").error.find("unknown exception"), std::string::npos);
  EXPECT_EQ(result.asset("struct").status, il::Status::failed);
  EXPECT_EQ(result.asset("fine").status, il::Status::succeeded);
  EXPECT_EQ(result.window, "");
}

TEST_P(Runners, MissingDestinationFailsThatAsset) {
  il::Source s("s");  // no destination
  s.asset("a", daily_rows(nullptr, "a")).partitioning(kDaily);
  il::DAG dag({s});
  il::RunResult result = runner().run(dag, il::TimePartition(day(1)));
  EXPECT_EQ(result.asset("a").status, il::Status::failed);
  EXPECT_NE(result.asset("a").error.find("no destination"), std::string::npos)
      << result.asset("a").error;
}

TEST_P(Runners, LoadingANonDependencyFails) {
  il::Source s("s", destination_);
  s.asset("a", daily_rows(nullptr, "a")).partitioning(kDaily);
  s.asset("b", [](il::ExecutionContext& ctx) { return ctx.load("a"); }).partitioning(kDaily);
  il::DAG dag({s});
  il::RunResult result = runner().run(dag, il::TimePartition(day(1)));
  EXPECT_EQ(result.asset("b").status, il::Status::failed);
  EXPECT_NE(result.asset("b").error.find("not one of its dependencies"), std::string::npos)
      << result.asset("b").error;
}

TEST_P(Runners, UnpartitionedUpstreamIsReadWhole) {
  il::Source s("s", destination_);
  s.asset("dim", [](il::ExecutionContext& ctx) {
    EXPECT_TRUE(ctx.has_window());  // an unpartitioned asset still sees the run's window
    il::Table t;
    for (int i = 0; i < 4; ++i) t.append({{"id", i}});
    return t;
  });
  s.asset("fact",
          [](il::ExecutionContext& ctx) {
            il::Table dim = ctx.load("dim");
            il::Table t;
            t.append({{"date", ctx.partition_date()}, {"dims", static_cast<int>(dim.num_rows())}});
            return t;
          })
      .partitioning(kDaily)
      .deps({"dim"});
  il::DAG dag({s});
  il::RunResult result = runner().run(dag, il::TimePartition(day(2)));
  ASSERT_TRUE(result.ok()) << result.error_summary();
  il::Table fact = destination_->read(dag.asset("fact").dataset(), nullptr);
  EXPECT_EQ(fact.at(0, "dims"), il::Value(4));
  EXPECT_EQ(destination_->row_count(dag.asset("dim").dataset(), nullptr), 4);
}

TEST_P(Runners, DisabledAssetsAreSkippedAndExemptFromValidation) {
  Journal journal;
  il::Source s("s", destination_);
  s.asset("off", daily_rows(&journal, "off")).partitioning(kDaily).enabled(false);
  s.asset("on", [&](il::ExecutionContext&) {
     journal.add("on");
     return il::Table();
   }).partitioning(il::TimePartitionConfig("date", {.allow_window = true}));
  il::DAG dag({s});
  // "off" could not serve a week, but it is disabled.
  il::RunResult result = runner().run(dag, il::TimePartitionWindow(day(1), day(7)));
  EXPECT_TRUE(result.ok()) << result.error_summary();
  EXPECT_EQ(result.asset("off").status, il::Status::skipped);
  EXPECT_EQ(journal.names, std::vector<std::string>{"on"});
}

TEST_P(Runners, ValidationFailureListsEveryAssetAndExecutesNothing) {
  Journal journal;
  il::Source s("s", destination_);
  s.asset("first", daily_rows(&journal, "first")).partitioning(kDaily);
  s.asset("windowed", daily_rows(&journal, "windowed"))
      .partitioning(il::TimePartitionConfig("date", {.allow_window = true}));
  s.asset("second", daily_rows(&journal, "second"))
      .partitioning(il::TimePartitionConfig("date", {.start = day(20)}));
  // Another granularity serves its own partitions overlapping the window: no error.
  s.asset("monthly", daily_rows(&journal, "monthly"))
      .partitioning(il::TimePartitionConfig(
          "date", {.granularity = il::TimeGranularity::MONTH, .allow_window = true}));
  il::DAG dag({s});
  il::EventBus events;
  std::vector<il::EventType> seen;
  events.subscribe([&](const il::Event& e) { seen.push_back(e.type); });
  il::RunOptions options;
  options.events = &events;
  try {
    runner().run(dag, il::TimePartitionWindow(day(1), day(3)), options);
    FAIL() << "expected PartitionError";
  } catch (const il::PartitionError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find("asset 'first': "), 0u) << message;
    EXPECT_NE(message.find("\nasset 'second': "), std::string::npos) << message;
    EXPECT_EQ(message.find("'windowed'"), std::string::npos) << message;
    EXPECT_EQ(message.find("'monthly'"), std::string::npos) << message;
  }
  EXPECT_TRUE(journal.names.empty());
  EXPECT_EQ(seen, std::vector<il::EventType>{il::EventType::run_failed});
  // A partitioned DAG given no window fails the same way.
  EXPECT_THROW(runner().run(dag), il::PartitionError);
  EXPECT_TRUE(journal.names.empty());
}

TEST_P(Runners, EventsAndStoreRecords) {
  il::FixedClock clock(il::TimePoint(sys_days(year{2026} / 1 / 15) + hours(8)));
  il::MemoryStore store;
  il::EventBus events;
  std::vector<il::Event> seen;
  events.subscribe([&](const il::Event& e) { seen.push_back(e); });
  il::Source s("s", destination_);
  s.asset("a", daily_rows(nullptr, "a", 5)).partitioning(kDaily);
  s.asset("b",
          [](il::ExecutionContext& ctx) -> il::Table {
            ctx.logger().info("about to fail");
            ctx.load("a");
            throw std::runtime_error("nope");
          })
      .partitioning(kDaily)
      .deps({"a"});
  il::DAG dag({s});
  il::RunOptions options;
  options.events = &events;
  options.store = &store;
  options.clock = &clock;
  il::RunResult result = runner().run(dag, il::TimePartition(day(3)), options);
  EXPECT_EQ(result.run_id.rfind("run-20260115T080000-", 0), 0u) << result.run_id;

  std::vector<std::string> types;
  for (const il::Event& e : seen) {
    types.push_back(std::string(il::event_type_name(e.type)) + (e.asset.empty() ? "" : ":") +
                    e.asset);
    EXPECT_EQ(e.run_id, result.run_id);
    EXPECT_EQ(e.window, "2026-01-03");
    EXPECT_EQ(e.time, clock.now());
    const auto json = nlohmann::json::parse(e.to_json());
    EXPECT_EQ(json.at("type"), il::event_type_name(e.type));
  }
  EXPECT_EQ(types, (std::vector<std::string>{
                       "run_started", "asset_queued:a", "asset_started:a", "destination_write:a",
                       "asset_completed:a", "asset_queued:b", "asset_started:b", "log:b",
                       "destination_read:b", "asset_failed:b", "run_failed"}));
  EXPECT_EQ(seen[3].rows, 5);
  EXPECT_EQ(seen[8].rows, 5);
  EXPECT_EQ(seen[9].message, "nope");

  const il::TimePartition p(day(3));
  auto a = store.latest(dag.asset("a").dataset(), &p);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->status, il::MaterializationStatus::materialized);
  // A failure keeps its run's details; a materialized partition only its state.
  auto b = store.latest(dag.asset("b").dataset(), &p);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->status, il::MaterializationStatus::failed);
  EXPECT_EQ(b->error, "nope");
  EXPECT_EQ(b->run_id, result.run_id);
  EXPECT_EQ(b->started, clock.now());
  const il::TimePartition other(day(4));
  EXPECT_FALSE(store.latest(dag.asset("a").dataset(), &other).has_value());
}

// An hourly `events` asset, a daily `daily` reading it and an unpartitioned `dims`.
struct UpstreamCase {
  std::shared_ptr<il::MemoryDestination> destination = std::make_shared<il::MemoryDestination>();
  il::MemoryStore store;
  il::TimePartitionConfig hourly{"ts",
                                 {.granularity = il::TimeGranularity::HOUR, .allow_window = true}};

  il::DAG dag(bool require_upstream, bool with_dims) const {
    il::Source s("s", destination);
    // One row an hour, for a run of one hour or of a window of them.
    s.asset("events", [](il::ExecutionContext& ctx) {
       il::Table t;
       const il::TimePartitionWindow window = *ctx.time_window();
       for (const il::TimePartition& hour : window) {
         t.append({{"ts", hour.value().seconds()}, {"n", 1}});
       }
       return t;
     }).partitioning(hourly);
    if (with_dims) s.asset("dims", [](il::ExecutionContext&) { return il::Table(); });
    std::vector<std::string> deps{"events"};
    if (with_dims) deps.push_back("dims");
    s.asset("daily",
            [](il::ExecutionContext& ctx) {
              il::Table rows = ctx.load("events");
              il::Table t;
              t.append(
                  {{"date", ctx.partition_date()}, {"n", static_cast<long long>(rows.num_rows())}});
              return t;
            })
        .partitioning(kDaily)
        .deps(deps)
        .require_upstream(require_upstream);
    return il::DAG({s});
  }

  // Backfills the hours of 2026-01-03 from `first` to `last` of the upstream alone.
  void materialize_hours(const il::DAG& dag, int first, int last) {
    il::BackfillOptions options;
    options.run.store = &store;
    options.run.assets = {"events"};
    il::TimePoint start(sys_days(year{2026} / 1 / 3) + hours(first));
    il::TimePoint end(sys_days(year{2026} / 1 / 3) + hours(last));
    ASSERT_TRUE(
        il::backfill(dag, il::TimePartitionWindow(start, end, il::TimeGranularity::HOUR), options)
            .ok());
  }

  il::RunResult run_daily(const il::Runner& runner, const il::DAG& dag,
                          std::vector<std::string> assets = {"daily"}) {
    il::RunOptions options;
    options.store = &store;
    options.assets = std::move(assets);
    return runner.run(dag, il::TimePartition(day(3)), options);
  }
};

TEST_P(Runners, UpstreamPartitionsReadFromStorageMustBeMaterialized) {
  UpstreamCase c;
  il::DAG dag = c.dag(true, false);
  c.materialize_hours(dag, 0, 18);
  il::RunResult result = c.run_daily(runner(), dag);
  ASSERT_EQ(result.assets.size(), 1u);
  EXPECT_EQ(result.assets[0].status, il::Status::failed);
  EXPECT_EQ(result.assets[0].error, "upstream 'events': 5 of 24 partitions missing");
  const il::TimePartition p(day(3));
  auto recorded = c.store.latest(dag.asset("daily").dataset(), &p);
  ASSERT_TRUE(recorded.has_value());
  EXPECT_EQ(recorded->status, il::MaterializationStatus::failed);
  EXPECT_EQ(c.destination->row_count(dag.asset("daily").dataset(), nullptr), 0);

  // Once every hour is there, the day runs.
  c.materialize_hours(dag, 19, 23);
  result = c.run_daily(runner(), dag);
  EXPECT_TRUE(result.ok()) << result.error_summary();
  EXPECT_EQ(c.destination->read(dag.asset("daily").dataset(), nullptr).at(0, "n"), il::Value(24));
}

TEST_P(Runners, UpstreamTasksOfThePlanCountAsPresent) {
  UpstreamCase c;
  il::DAG dag = c.dag(true, false);
  il::RunResult result = c.run_daily(runner(), dag, {});
  EXPECT_TRUE(result.ok()) << result.error_summary();
}

TEST_P(Runners, UnpartitionedUpstreamNeverMaterializedIsMissing) {
  UpstreamCase c;
  il::DAG dag = c.dag(true, true);
  c.materialize_hours(dag, 0, 23);
  il::RunResult result = c.run_daily(runner(), dag);
  ASSERT_EQ(result.assets.size(), 1u);
  EXPECT_EQ(result.assets[0].error, "upstream 'dims': not materialized");
}

TEST_P(Runners, RequireUpstreamOffReadsWhatIsStored) {
  UpstreamCase c;
  il::DAG dag = c.dag(false, true);
  c.materialize_hours(dag, 0, 1);
  il::RunResult result = c.run_daily(runner(), dag);
  EXPECT_TRUE(result.ok()) << result.error_summary();
  EXPECT_EQ(c.destination->read(dag.asset("daily").dataset(), nullptr).at(0, "n"), il::Value(2));
}

TEST_P(Runners, GivenRunIdAndSelection) {
  Journal journal;
  il::Source s("s", destination_);
  s.asset("raw", daily_rows(&journal, "raw", 2)).partitioning(kDaily);
  s.asset("count",
          [&](il::ExecutionContext& ctx) {
            journal.add("count");
            il::Table t;
            t.append({{"date", ctx.partition_date()},
                      {"n", static_cast<int>(ctx.load("raw").num_rows())}});
            return t;
          })
      .partitioning(kDaily)
      .deps({"raw"});
  il::DAG dag({s});
  il::RunOptions options;
  options.run_id = "manual";
  EXPECT_EQ(runner().run(dag, il::TimePartition(day(1)), options).run_id, "manual");
  options.assets = {"count"};
  options.run_id.clear();
  il::RunResult only = runner().run(dag, il::TimePartition(day(1)), options);
  ASSERT_TRUE(only.ok()) << only.error_summary();
  EXPECT_EQ(only.assets.size(), 1u);
  EXPECT_EQ(journal.names, (std::vector<std::string>{"raw", "count", "count"}));
  options.assets = {"nope"};
  EXPECT_THROW(runner().run(dag, il::TimePartition(day(1)), options), il::DagError);
}

TEST_P(Runners, WindowedRunAndPerPartitionRunsStoreTheSame) {
  auto per_partition = std::make_shared<il::MemoryDestination>();
  auto make = [](std::shared_ptr<il::Destination> destination) {
    il::Source s("s", std::move(destination));
    s.asset("w", [](il::ExecutionContext& ctx) {
       il::Table t;
       const auto& window = dynamic_cast<const il::TimePartitionWindow&>(ctx.window());
       for (il::TimePartition p : window) {
         for (int i = 0; i < 3; ++i) t.append({{"date", p.value().date()}, {"i", i}});
       }
       return t;
     }).partitioning(il::TimePartitionConfig("date", {.allow_window = true}));
    return il::DAG({s});
  };
  il::DAG windowed = make(destination_);
  il::DAG single = make(per_partition);
  il::TimePartitionWindow week(day(1), day(7));
  ASSERT_TRUE(runner().run(windowed, week).ok());
  for (il::TimePartition p : week) ASSERT_TRUE(runner().run(single, p).ok());
  const il::DatasetRef ref = windowed.asset("w").dataset();
  EXPECT_EQ(destination_->read(ref, &week), per_partition->read(ref, &week));
  EXPECT_EQ(destination_->read(ref, &week).num_rows(), 21u);
}

TEST(SerialRunner, FailFastCancelsEverythingNotStarted) {
  Journal journal;
  auto destination = std::make_shared<il::MemoryDestination>();
  il::Source s("s", destination);
  s.asset("bad", [](il::ExecutionContext&) -> il::Table { throw std::runtime_error("x"); });
  s.asset("independent", [&](il::ExecutionContext&) {
    journal.add("independent");
    return il::Table();
  });
  il::DAG dag({s});
  il::RunOptions options;
  options.fail_fast = true;
  il::SerialRunner serial;
  il::ThreadedRunner one_worker(1);
  for (const il::Runner* runner :
       {static_cast<const il::Runner*>(&serial), static_cast<const il::Runner*>(&one_worker)}) {
    il::RunResult result = runner->run(dag, options);
    EXPECT_EQ(result.asset("independent").status, il::Status::canceled);
    EXPECT_NE(result.asset("independent").error.find("fail_fast"), std::string::npos);
    options.fail_fast = false;
    result = runner->run(dag, options);
    EXPECT_EQ(result.asset("independent").status, il::Status::succeeded);
    options.fail_fast = true;
  }
  EXPECT_EQ(journal.names.size(), 2u);
}

TEST(ThreadedRunner, IndependentAssetsRunConcurrently) {
  // Each asset waits for the other to start: only a concurrent runner can finish both.
  Rendezvous both(2);
  auto destination = std::make_shared<il::MemoryDestination>();
  il::Source s("s", destination);
  for (const char* name : {"left", "right"}) {
    s.asset(name, [&](il::ExecutionContext&) {
      if (!both.arrive_and_wait()) throw std::runtime_error("the other asset never started");
      return il::Table();
    });
  }
  il::DAG dag({s});
  il::RunResult result = il::ThreadedRunner(2).run(dag);
  EXPECT_TRUE(result.ok()) << result.error_summary();
  EXPECT_THROW(il::ThreadedRunner(0), std::invalid_argument);
}

// ---- validate ----------------------------------------------------------------------------

TEST(Validate, MultiPartitionWindowNeedsAllowWindowEverywhere) {
  il::Source s("s");
  s.asset("yes", daily_rows(nullptr, "yes"))
      .partitioning(il::TimePartitionConfig("date", {.allow_window = true}));
  s.asset("no", daily_rows(nullptr, "no")).partitioning(kDaily);
  s.asset("plain", daily_rows(nullptr, "plain"));
  il::DAG dag({s});
  il::TimePartitionWindow week(day(1), day(7));
  try {
    il::validate(dag, &week);
    FAIL();
  } catch (const il::PartitionError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("asset 'no': ", 0), 0u) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
  il::RunOptions only_yes;
  only_yes.assets = {"yes", "plain"};
  EXPECT_NO_THROW(il::validate(dag, &week, only_yes));
  il::TimePartitionWindow one(day(1), day(1));
  EXPECT_NO_THROW(il::validate(dag, &one));
}

// ---- the store ---------------------------------------------------------------------------

TEST(RangeMap, AssignSplitsAndMerges) {
  il::detail::RangeMap<int> map;
  map.assign(10, 19, 0);
  map.assign(15, 15, 1);
  auto segments = map.overlapping(0, 30);
  ASSERT_EQ(segments.size(), 3u);
  EXPECT_EQ(segments[0].first, 10);
  EXPECT_EQ(segments[0].last, 14);
  EXPECT_EQ(segments[1].value, 1);
  EXPECT_EQ(segments[2].first, 16);
  EXPECT_EQ(segments[2].last, 19);
  map.assign(15, 15, 0);  // equal neighbours merge back
  EXPECT_EQ(map.segment_count(), 1u);
  EXPECT_EQ(map.overlapping(12, 13).front().first, 12);
  ASSERT_NE(map.find(19), nullptr);
  EXPECT_EQ(map.find(20), nullptr);
  map.erase(0, 11);
  EXPECT_EQ(map.overlapping(0, 100).front().first, 12);
}

TEST(RangeMap, WindowStatusFromSegments) {
  using il::detail::StatusSegment;
  const auto m = il::MaterializationStatus::materialized;
  const auto f = il::MaterializationStatus::failed;
  il::WindowStatus status = il::detail::to_window_status(
      {StatusSegment{5, 9, m}, StatusSegment{10, 10, m}, StatusSegment{12, 20, f}}, 7, 10);
  EXPECT_EQ(status.materialized, (std::vector<il::PartitionRange>{{0, 3}}));
  EXPECT_EQ(status.missing, (std::vector<il::PartitionRange>{{4, 4}}));
  EXPECT_EQ(status.failed, (std::vector<il::PartitionRange>{{5, 9}}));
  EXPECT_EQ(status.count(status.failed), 5u);
}

TEST(MemoryStore, AMillionHourlyPartitionsAnswerAsRanges) {
  il::TimePartitionConfig hourly("ts",
                                 {.granularity = il::TimeGranularity::HOUR, .allow_window = true});
  il::DatasetRef ref{"s", "h", &hourly};
  const il::TimePoint start = day(1);
  il::TimePartitionWindow huge(start, il::TimeGranularity::HOUR.advance(start, 999'999),
                               il::TimeGranularity::HOUR);
  ASSERT_EQ(huge.size(), 1'000'000u);
  il::MemoryStore store;
  il::MaterializationRecord ok;
  ok.asset = "h";
  ok.status = il::MaterializationStatus::materialized;
  store.record(ref, &huge, ok);
  il::MaterializationRecord bad = ok;
  bad.status = il::MaterializationStatus::failed;
  const il::TimePartition hour(il::TimeGranularity::HOUR.advance(start, 500'000),
                               il::TimeGranularity::HOUR);
  store.record(ref, hour.as_window().get(), bad);
  il::TimePartitionWindow larger(il::TimeGranularity::HOUR.advance(start, -10), huge.end(),
                                 il::TimeGranularity::HOUR);
  il::WindowStatus status = store.status(ref, larger);
  EXPECT_EQ(status.missing, (std::vector<il::PartitionRange>{{0, 9}}));
  EXPECT_EQ(status.failed, (std::vector<il::PartitionRange>{{500'010, 500'010}}));
  EXPECT_EQ(status.materialized,
            (std::vector<il::PartitionRange>{{10, 500'009}, {500'011, 1'000'009}}));
  EXPECT_EQ(store.latest(ref, &hour)->status, il::MaterializationStatus::failed);
}

TEST(MemoryStore, ListPartitionsAndUnpartitionedAssets) {
  il::ListPartitionConfig regions("region", {"eu", "us", "apac"}, true);
  il::DatasetRef ref{"s", "sales", &regions};
  il::MemoryStore store;
  il::MaterializationRecord ok;
  ok.asset = "sales";
  ok.status = il::MaterializationStatus::materialized;
  ok.rows = 7;
  auto us = regions.window("us", "us");
  store.record(ref, &us, ok);
  auto all = regions.window("eu", "apac");
  il::WindowStatus status = store.status(ref, all);
  EXPECT_EQ(status.materialized, (std::vector<il::PartitionRange>{{1, 1}}));
  EXPECT_EQ(status.missing, (std::vector<il::PartitionRange>{{0, 0}, {2, 2}}));
  il::ListPartition p("us");
  EXPECT_EQ(store.latest(ref, &p)->status, il::MaterializationStatus::materialized);

  il::DatasetRef plain{"s", "dim", nullptr};
  store.record(plain, nullptr, ok);
  EXPECT_EQ(store.latest(plain, nullptr)->status, il::MaterializationStatus::materialized);
  EXPECT_EQ(store.status(plain, all).materialized, (std::vector<il::PartitionRange>{{0, 2}}));
}

// ---- backfill ----------------------------------------------------------------------------

// Collects the outcome of every task, in the order they were reported.
struct Outcomes {
  std::mutex mutex;
  std::vector<std::string> lines;  // "asset window status"
  std::function<void(const il::TaskResult&)> callback() {
    return [this](const il::TaskResult& t) {
      std::lock_guard lock(mutex);
      lines.push_back(t.asset + " " + t.window + " " + std::string(il::status_name(t.status)));
    };
  }
};

TEST(Backfill, NewestFirstOneTaskPerPartition) {
  auto destination = std::make_shared<il::MemoryDestination>();
  il::Source s("s", destination);
  s.asset("a", daily_rows(nullptr, "a", 2)).partitioning(kDaily);  // no allow_window needed
  il::DAG dag({s});
  Outcomes outcomes;
  il::BackfillOptions options;
  options.on_task = outcomes.callback();
  il::BackfillResult result = il::backfill(dag, il::TimePartitionWindow(day(1), day(5)), options);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.succeeded(), 5u);
  EXPECT_TRUE(result.failures.empty());
  EXPECT_EQ(outcomes.lines,
            (std::vector<std::string>{"a 2026-01-05 succeeded", "a 2026-01-04 succeeded",
                                      "a 2026-01-03 succeeded", "a 2026-01-02 succeeded",
                                      "a 2026-01-01 succeeded"}));
  EXPECT_EQ(destination->row_count(dag.asset("a").dataset(), nullptr), 10);
}

TEST(Backfill, StopStartsNothingNewAndRecordsTheInterruptedTask) {
  auto destination = std::make_shared<il::MemoryDestination>();
  std::atomic<bool> stop{false};
  Journal journal;
  il::Source s("s", destination);
  s.asset("a", [&](il::ExecutionContext& ctx) -> il::Table {
     const std::string key = il::TimePoint(ctx.partition_date()).date_string();
     journal.add(key);
     if (key == "2026-01-04") {
       // What a terminated command looks like from here: the stop is set, then it fails.
       stop = true;
       throw std::runtime_error("command 'x' killed by signal 15");
     }
     il::Table t;
     t.append({{"date", ctx.partition_date()}});
     return t;
   }).partitioning(kDaily);
  il::DAG dag({s});
  il::MemoryStore store;
  Outcomes outcomes;
  il::BackfillOptions options;
  options.run.store = &store;
  options.run.stop = &stop;
  options.on_task = outcomes.callback();
  const il::TimePartitionWindow window(day(1), day(5));
  il::BackfillResult result = il::backfill(dag, window, options);
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.tasks.succeeded, 1u);
  EXPECT_EQ(result.tasks.failed, 1u);
  EXPECT_EQ(result.tasks.canceled, 3u);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(result.failures[0].error, "interrupted");
  EXPECT_EQ(journal.names, (std::vector<std::string>{"2026-01-05", "2026-01-04"}));
  EXPECT_EQ(std::count(outcomes.lines.begin(), outcomes.lines.end(), "a 2026-01-01 canceled"), 1);

  const il::DatasetRef dataset = dag.asset("a").dataset();
  il::WindowStatus status = store.status(dataset, window);
  EXPECT_EQ(status.count(status.materialized), 1u);  // 2026-01-05, written before the stop
  EXPECT_EQ(status.count(status.failed), 1u);
  EXPECT_EQ(status.count(status.missing), 3u);       // never started: nothing recorded
  std::vector<il::FailedRange> failures = store.failures(dataset, window, 10);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].record.error, "interrupted");
  EXPECT_EQ(destination->row_count(dataset, nullptr), 1);
}

TEST(Backfill, ValidatesTheWholeWindowFirst) {
  Journal journal;
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("late", daily_rows(&journal, "late"))
      .partitioning(il::TimePartitionConfig("date", {.start = day(10)}));
  s.asset("regions", daily_rows(&journal, "regions"))
      .partitioning(il::ListPartitionConfig("region", {"eu", "us"}));
  il::DAG dag({s});
  try {
    il::backfill(dag, il::TimePartitionWindow(day(1), day(5)));
    FAIL();
  } catch (const il::PartitionError& e) {
    EXPECT_NE(std::string(e.what()).find("asset 'late': "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("asset 'regions': "), std::string::npos) << e.what();
  }
  EXPECT_TRUE(journal.names.empty());
  il::BackfillOptions bad;
  bad.concurrency = 0;
  EXPECT_THROW(il::backfill(dag, il::TimePartitionWindow(day(3), day(5)), bad),
               std::invalid_argument);
}

TEST(Backfill, ClampsEachShareToTheAssetsStart) {
  Journal journal;
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("late", daily_rows(&journal, "late"))
      .partitioning(il::TimePartitionConfig("date", {.start = day(3)}));
  il::DAG dag({s});
  il::BackfillResult result = il::backfill(dag, il::TimePartitionWindow(day(1), day(5)));
  EXPECT_EQ(result.succeeded(), 3u);
  EXPECT_EQ(journal.count("late"), 3u);
}

TEST(Backfill, RunsPartitionsConcurrently) {
  // The two newest partitions wait for each other: only concurrent tasks finish them.
  Rendezvous both(2);
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("a", [&](il::ExecutionContext& ctx) {
     if (ctx.partition_date() >= year{2026} / 1 / 3 && !both.arrive_and_wait()) {
       throw std::runtime_error("partitions did not overlap");
     }
     return il::Table();
   }).partitioning(kDaily);
  il::DAG dag({s});
  il::BackfillOptions options;
  options.concurrency = 2;
  il::BackfillResult result = il::backfill(dag, il::TimePartitionWindow(day(1), day(4)), options);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.succeeded(), 4u);
}

TEST(Backfill, MissingOnlyRedoesFailedAndMissingPartitions) {
  Journal journal;
  std::atomic<bool> break_day_3{true};
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("up", [&](il::ExecutionContext& ctx) {
     journal.add("up " + il::TimePoint(ctx.partition_date()).date_string());
     if (ctx.partition_date() == year{2026} / 1 / 3 && break_day_3) {
       throw std::runtime_error("flaky");
     }
     il::Table t;
     t.append({{"date", ctx.partition_date()}});
     return t;
   }).partitioning(kDaily);
  s.asset("down",
          [&](il::ExecutionContext& ctx) {
            journal.add("down " + il::TimePoint(ctx.partition_date()).date_string());
            return ctx.load("up");
          })
      .partitioning(kDaily)
      .deps({"up"});
  il::DAG dag({s});
  il::MemoryStore store;
  il::BackfillOptions options;
  options.run.store = &store;
  options.concurrency = 2;
  il::TimePartitionWindow w(day(1), day(5));
  il::BackfillResult first = il::backfill(dag, w, options);
  EXPECT_EQ(first.failed(), 1u);
  EXPECT_EQ(first.tasks.canceled, 1u);  // down 2026-01-03 only
  EXPECT_EQ(first.tasks.succeeded, 8u);
  ASSERT_EQ(first.failures.size(), 1u);
  EXPECT_EQ(first.failures[0].asset, "up");
  EXPECT_EQ(first.failures[0].window, "2026-01-03");
  EXPECT_FALSE(first.ok());
  EXPECT_EQ(journal.count("down 2026-01-03"), 0u);

  // A later window also covers day 6, which was never run.
  break_day_3 = false;
  journal.names.clear();
  options.missing_only = true;
  std::size_t planned = 0;
  std::size_t skipped = 0;
  options.on_plan = [&](std::size_t p, std::size_t s) {
    planned = p;
    skipped = s;
  };
  Outcomes outcomes;
  options.on_task = outcomes.callback();
  options.concurrency = 1;
  il::TimePartitionWindow wider(day(1), day(6));
  il::BackfillResult second = il::backfill(dag, wider, options);
  EXPECT_TRUE(second.ok());
  EXPECT_EQ(planned, 4u);  // what the progress display counts down
  EXPECT_EQ(skipped, 8u);
  EXPECT_EQ(second.tasks.skipped, 8u);
  EXPECT_EQ(outcomes.lines,
            (std::vector<std::string>{"up 2026-01-06 succeeded", "down 2026-01-06 succeeded",
                                      "up 2026-01-03 succeeded", "down 2026-01-03 succeeded"}));
  EXPECT_EQ(journal.count("up 2026-01-01"), 0u);
  EXPECT_EQ(journal.count("down 2026-01-03"), 1u);
  EXPECT_TRUE(store.status(dag.asset("down").dataset(), wider).missing.empty());

  il::BackfillOptions no_store;
  no_store.missing_only = true;
  EXPECT_THROW(il::backfill(dag, w, no_store), il::RunError);
}

TEST(Backfill, SkipsPartitionsClaimedByAnotherRunAndReleasesItsOwn) {
  Journal journal;
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("a", [&](il::ExecutionContext& ctx) {
     journal.add(il::TimePoint(ctx.partition_date()).date_string());
     il::Table t;
     t.append({{"date", ctx.partition_date()}});
     return t;
   }).partitioning(kDaily);
  il::DAG dag({s});
  il::MemoryStore store;
  il::FixedClock clock(il::TimePoint(day(10)));
  // Another process is running day 2, its claim still live.
  il::TimePartitionWindow day2(day(2), day(2));
  ASSERT_FALSE(store.claim({dag.asset("a").dataset()}, &day2, {"elsewhere", il::TimePoint(day(11))},
                           clock.now()));
  il::BackfillOptions options;
  options.run.store = &store;
  options.run.clock = &clock;
  options.claim_owner = "here";
  il::TimePartitionWindow w(day(1), day(3));
  il::BackfillResult result = il::backfill(dag, w, options);
  EXPECT_TRUE(result.ok());
  ASSERT_EQ(result.claimed.size(), 1u);
  EXPECT_EQ(result.claimed[0].window, "2026-01-02");
  EXPECT_EQ(result.tasks.claimed, 1u);
  EXPECT_EQ(journal.count("2026-01-02"), 0u);
  EXPECT_EQ(journal.count("2026-01-01"), 1u);
  // This backfill's claims are gone once it is done; the other one's is untouched.
  il::TimePartitionWindow day1(day(1), day(1));
  EXPECT_FALSE(store.claim({dag.asset("a").dataset()}, &day1, {"next", il::TimePoint(day(11))},
                           clock.now()));
  EXPECT_TRUE(store.claim({dag.asset("a").dataset()}, &day2, {"next", il::TimePoint(day(11))},
                          clock.now()));
  // Once that claim lapses the partition runs.
  clock.set(il::TimePoint(day(12)));
  il::BackfillResult after = il::backfill(dag, w, options);
  EXPECT_TRUE(after.claimed.empty());
  EXPECT_EQ(journal.count("2026-01-02"), 1u);
}

TEST(Backfill, FailFastCancelsWhatHasNotStarted) {
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("a", [](il::ExecutionContext&) -> il::Table {
     throw std::runtime_error("down");
   }).partitioning(kDaily);
  il::DAG dag({s});
  il::BackfillOptions options;
  options.fail_fast = true;
  il::BackfillResult result = il::backfill(dag, il::TimePartitionWindow(day(1), day(4)), options);
  ASSERT_EQ(result.failures.size(), 1u);
  EXPECT_EQ(result.failures[0].window, "2026-01-04");
  EXPECT_EQ(result.tasks.canceled, 3u);
  options.fail_fast = false;
  EXPECT_EQ(il::backfill(dag, il::TimePartitionWindow(day(1), day(4)), options).failed(), 4u);
}

}  // namespace
