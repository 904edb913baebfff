// Jobs, the fire log and the scheduler over a real DAG with a SQLite fire log.
#include "interloper/schedule.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "interloper/interloper.hpp"

namespace {

namespace fs = std::filesystem;

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }

// Remembers every window an asset computed.
struct Seen {
  std::mutex mutex;
  std::vector<std::string> windows;
  void add(std::string w) {
    std::lock_guard lock(mutex);
    windows.push_back(std::move(w));
  }
};

il::ComputeFn remember(Seen* seen) {
  return [seen](il::ExecutionContext& ctx) {
    seen->add(ctx.window().to_string());
    il::Table t;
    if (ctx.window().size() == 1) t.append({{"date", ctx.partition_date()}, {"n", 1}});
    return t;
  };
}

struct Fixture : ::testing::Test {
  Fixture() {
    dir = fs::temp_directory_path() /
          ("il_schedule_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Fixture() override { fs::remove_all(dir); }

  il::DAG dag(il::TimeGranularity g = il::TimeGranularity::DAY, bool allow_window = false,
              std::optional<il::TimePoint> start = std::nullopt) {
    il::Source s("s", std::make_shared<il::MemoryDestination>());
    s.asset("a", remember(&seen))
        .partitioning(il::TimePartitionConfig(
            "date", {.granularity = g, .allow_window = allow_window, .start = start}));
    return il::DAG({s});
  }

  il::Job nightly() {
    il::Job job("nightly", il::CronSchedule::parse("0 3 * * *"));
    job.time_zone = "Europe/Berlin";
    job.assets = {"a"};
    job.lookback = 3;
    job.offset = 1;
    return job;
  }

  std::string log_path() const { return (dir / "state.db").string(); }

  fs::path dir;
  Seen seen;
};

using Schedule = Fixture;

TEST(Job, WindowFollowsTheZonesCalendarAtEachFire) {
  il::Job job("nightly_ads", il::CronSchedule::parse("0 3 * * *"));
  job.time_zone = "Europe/Berlin";
  job.lookback = 3;
  job.offset = 1;
  const il::TimePoint fire = job.next_fire(at("2026-03-28T12:00:00"));
  EXPECT_EQ(fire, at("2026-03-29T01:00:00"));  // 03:00 CEST, the day clocks go forward
  EXPECT_EQ(job.window(fire)->to_string(), "2026-03-26..2026-03-28");
  job.start = at("2026-03-28");
  EXPECT_EQ(job.window(fire)->to_string(), "2026-03-28");
  job.start = at("2026-03-29");
  EXPECT_FALSE(job.window(fire).has_value());
}

// An hourly job covers every UTC hour of a day whose clocks go back: the repeated hour fires in
// both passes, so no hourly partition is left without a fire (US/Central, 2019-11-03).
TEST(Job, AnHourlyJobCoversEveryHourOfADayWhoseClocksGoBack) {
  il::Job job("hourly", il::CronSchedule::parse("@hourly"));
  job.time_zone = "US/Central";
  job.granularity = il::TimeGranularity::HOUR;
  job.offset = 1;
  std::vector<std::string> windows;
  for (il::TimePoint f = job.next_fire(at("2019-11-03T04:30:00")); f <= at("2019-11-03T09:00:00");
       f = job.next_fire(f)) {
    windows.push_back(job.window(f)->to_string());
  }
  EXPECT_EQ(windows, (std::vector<std::string>{"2019-11-03T04", "2019-11-03T05", "2019-11-03T06",
                                               "2019-11-03T07", "2019-11-03T08"}));
}

// Every granularity's window at a fire, in a zone whose date differs from UTC's at fire time.
TEST(Job, EveryGranularitysLookbackAtFireTime) {
  il::Job job("j", il::CronSchedule::parse("30 0 1 * *"));  // 00:30 on the 1st, Tokyo time
  job.time_zone = "Asia/Tokyo";
  job.lookback = 2;
  job.offset = 1;
  const il::TimePoint fire = job.next_fire(at("2026-06-15T00:00:00"));
  EXPECT_EQ(fire, at("2026-06-30T15:30:00"));  // still June 30 in UTC
  const std::vector<std::pair<il::TimeGranularity, std::string>> expected = {
      {il::TimeGranularity::HOUR, "2026-06-30T13..2026-06-30T14"},  // hours are UTC labels
      {il::TimeGranularity::DAY, "2026-06-29..2026-06-30"},
      {il::TimeGranularity::WEEK, "2026-W25..2026-W26"},
      {il::TimeGranularity::MONTH, "2026-05..2026-06"},
      {il::TimeGranularity::QUARTER, "2026-Q1..2026-Q2"},
      {il::TimeGranularity::YEAR, "2024..2025"},
  };
  for (const auto& [g, text] : expected) {
    job.granularity = g;
    EXPECT_EQ(job.window(fire)->to_string(), text) << g;
  }
}

TEST_F(Schedule, FireLogClaimsEachFireOnce) {
  il::FireLog log(log_path());
  il::FireRecord r{"nightly", at("2026-03-29T01:00:00"), "run-1", "2026-03-26..2026-03-28",
                   "running", at("2026-03-29T01:00:00"), {}};
  EXPECT_TRUE(log.claim(r));
  r.run_id = "run-2";
  EXPECT_FALSE(log.claim(r));
  il::FireLog other(log_path());  // a second scheduler on the same file
  EXPECT_FALSE(other.claim(r));
  log.finish("nightly", r.fire, "succeeded", at("2026-03-29T01:00:05"));
  const auto fires = other.fires("nightly");
  ASSERT_EQ(fires.size(), 1u);
  EXPECT_EQ(fires[0].run_id, "run-1");
  EXPECT_EQ(fires[0].outcome, "succeeded");
  EXPECT_EQ(fires[0].finished, at("2026-03-29T01:00:05"));
  EXPECT_EQ(other.last_fire("nightly"), r.fire);
  EXPECT_FALSE(other.last_fire("other").has_value());
}

TEST_F(Schedule, RunsTheFireDueNowOnceAcrossRestarts) {
  const il::DAG d = dag();
  const std::vector<il::Job> jobs = {nightly()};
  const il::TimePoint now = at("2026-03-29T01:00:00");
  {
    il::FireLog log(log_path());
    const auto ran = il::run_due(d, jobs, log, now, now);
    ASSERT_EQ(ran.size(), 1u);
    EXPECT_EQ(ran[0].outcome, "succeeded");
    EXPECT_EQ(ran[0].window, "2026-03-26..2026-03-28");
  }
  EXPECT_EQ(seen.windows, (std::vector<std::string>{"2026-03-28", "2026-03-27", "2026-03-26"}));
  {
    il::FireLog log(log_path());  // restarted
    EXPECT_TRUE(il::run_due(d, jobs, log, now, now).empty());
    EXPECT_EQ(log.fires("nightly").size(), 1u);
  }
  EXPECT_EQ(seen.windows.size(), 3u);
}

TEST_F(Schedule, NothingIsDueBetweenFires) {
  const il::DAG d = dag();
  il::FireLog log(log_path());
  EXPECT_TRUE(il::run_due(d, {nightly()}, log, at("2026-03-29T01:00:01"), at("2026-03-29T01:00:01"))
                  .empty());
  EXPECT_TRUE(seen.windows.empty());
}

TEST_F(Schedule, CatchUpRunsOnlyTheLatestMissedFires) {
  const il::DAG d = dag();
  il::Job job = nightly();
  job.lookback = 1;
  job.offset = 0;
  il::FireLog log(log_path());
  il::run_due(d, {job}, log, at("2026-03-29T01:00:00"), at("2026-03-29T01:00:00"));
  seen.windows.clear();
  // Down until 2026-04-03T01:00Z: the fires of 03-30 .. 04-02 were missed.
  il::ScheduleOptions options;
  options.catch_up = 2;
  const il::TimePoint now = at("2026-04-03T01:00:00");
  const auto ran = il::run_due(d, {job}, log, now, now, options);
  ASSERT_EQ(ran.size(), 3u);
  EXPECT_EQ(ran[0].fire, at("2026-04-01T01:00:00"));
  EXPECT_EQ(ran[1].fire, at("2026-04-02T01:00:00"));
  EXPECT_EQ(ran[2].fire, at("2026-04-03T01:00:00"));
  EXPECT_EQ(seen.windows, (std::vector<std::string>{"2026-04-01", "2026-04-02", "2026-04-03"}));
  // Without catch-up, missed fires stay missed.
  seen.windows.clear();
  options.catch_up = 0;
  EXPECT_EQ(
      il::run_due(d, {job}, log, at("2026-04-06T01:00:00"), at("2026-04-06T01:00:00"), options)
          .size(),
      1u);
  EXPECT_EQ(seen.windows, (std::vector<std::string>{"2026-04-06"}));
}

TEST_F(Schedule, TwoSchedulersOnOneStoreRunEachFireOnce) {
  const il::DAG d = dag();
  const std::vector<il::Job> jobs = {nightly()};
  const il::TimePoint now = at("2026-03-29T01:00:00");
  il::FireLog first(log_path());
  il::FireLog second(log_path());
  std::vector<il::FireRecord> a, b;
  std::thread t([&] { a = il::run_due(d, jobs, first, now, now); });
  b = il::run_due(d, jobs, second, now, now);
  t.join();
  EXPECT_EQ(a.size() + b.size(), 1u);
  EXPECT_EQ(seen.windows.size(), 3u);
}

TEST_F(Schedule, AWindowClampedAwayByStartIsSkippedWithOneInfoLine) {
  const il::DAG d = dag(il::TimeGranularity::DAY, false, at("2026-03-29"));
  il::Job job = nightly();
  job.start = at("2026-03-29");
  std::vector<std::string> lines;
  il::ScheduleOptions options;
  options.logger = il::Logger([&](il::LogLevel level, std::string_view, std::string_view message) {
    lines.push_back(std::string(il::log_level_name(level)) + ": " + std::string(message));
  });
  il::FireLog log(log_path());
  const auto ran =
      il::run_due(d, {job}, log, at("2026-03-29T01:00:00"), at("2026-03-29T01:00:00"), options);
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].outcome, "skipped");
  EXPECT_EQ(ran[0].window, "");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "info: job 'nightly': fire at 2026-03-29T01:00:00Z skipped: its window lies before "
            "the assets' start 2026-03-29");
  EXPECT_TRUE(seen.windows.empty());
  EXPECT_EQ(log.fires("nightly").at(0).outcome, "skipped");
}

TEST_F(Schedule, MaterializeModeRunsTheWindowOnce) {
  const il::DAG d = dag(il::TimeGranularity::DAY, /*allow_window=*/true);
  il::Job job = nightly();
  job.mode = il::Job::Mode::materialize;
  il::FireLog log(log_path());
  const auto ran = il::run_due(d, {job}, log, at("2026-03-29T01:00:00"), at("2026-03-29T01:00:00"));
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].outcome, "succeeded");
  EXPECT_EQ(seen.windows, (std::vector<std::string>{"2026-03-26..2026-03-28"}));
}

TEST_F(Schedule, AFailedRunIsRecordedAsFailed) {
  il::Source s("s", std::make_shared<il::MemoryDestination>());
  s.asset("a", [](il::ExecutionContext&) -> il::Table {
     throw std::runtime_error("boom");
   }).partitioning(il::TimePartitionConfig("date"));
  const il::DAG d({s});
  il::FireLog log(log_path());
  const auto ran =
      il::run_due(d, {nightly()}, log, at("2026-03-29T01:00:00"), at("2026-03-29T01:00:00"));
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0].outcome, "failed");
  EXPECT_EQ(log.fires("nightly").at(0).outcome, "failed");
}

}  // namespace
