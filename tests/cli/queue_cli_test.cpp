// Distributed backfills end to end: `backfill --queue` enqueues into the PostgreSQL server of
// scripts/with-postgres, real `interloper worker` processes drain it, and the destination, the
// store and the queue's own rows are checked afterwards.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "destination/storage_fixtures.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"
#include "support/background.hpp"
#include "support/cli_process.hpp"
#include "support/postgres.hpp"

namespace fs = std::filesystem;
using interloper::testing::BackgroundCli;
using interloper::testing::number_in;
using interloper::testing::Outcome;

namespace {

// An hourly command asset, a daily and a monthly SQL aggregate over it, in one SQLite file.
// The hour named by $SLOW_HOUR writes its worker's pid to slow.pid and sleeps on its first run;
// the hour named by $BAD_HOUR always fails, the one named by $FLAKY_HOUR on its first run only. With $SPANS set, each run appends "start HOUR PID"
// and "end HOUR PID" lines to spans.log around a pause of $SPAN_SECONDS, so that runs of one
// hour at the same time show as interleaved lines (appends to one file are ordered).
void write_pipeline(const fs::path& dir) {
  std::ofstream(dir / "emit.sh")
      << "#!/bin/sh\n"
         "echo \"$IL_PARTITION_KEY\" >> calls.log\n"
         "if [ -n \"$SPANS\" ]; then\n"
         "  echo \"start $IL_PARTITION_KEY $$\" >> spans.log; sleep \"${SPAN_SECONDS:-0}\"\n"
         "  echo \"end $IL_PARTITION_KEY $$\" >> spans.log\n"
         "fi\n"
         "if [ \"$IL_PARTITION_KEY\" = \"$BAD_HOUR\" ]; then echo broken >&2; exit 3; fi\n"
         "if [ \"$IL_PARTITION_KEY\" = \"$FLAKY_HOUR\" ] && [ ! -e flaky.done ]; then\n"
         "  touch flaky.done; echo flaky >&2; exit 3\n"
         "fi\n"
         "if [ \"$IL_PARTITION_KEY\" = \"$SLOW_HOUR\" ] && [ ! -e slow.pid ]; then\n"
         "  echo $PPID > slow.tmp; mv slow.tmp slow.pid; sleep \"${SLOW_SECONDS:-3}\"\n"
         "fi\n"
         "echo \"{\\\"hour\\\":\\\"$1\\\",\\\"n\\\":1}\"\n";
  fs::permissions(dir / "emit.sh", fs::perms::owner_all, fs::perm_options::add);
  std::ofstream(dir / "shop.yaml")
      << "destination: sqlite://" << (dir / "warehouse.db").string() << "\n"
      << "store: state.db\n"
         "sources:\n"
         "  - name: shop\n"
         "    assets:\n"
         "      - name: events\n"
         "        partitioning: {kind: time, column: hour, granularity: hour}\n"
         "        command: [./emit.sh, \"{bounds.start}\"]\n"
         "      - name: daily\n"
         "        deps: [events]\n"
         "        partitioning: {kind: time, column: day, granularity: day}\n"
         "        sql: SELECT date(:bounds_start) AS day, COUNT(*) AS n FROM events\n"
         "             WHERE hour >= :bounds_start AND hour < :bounds_end\n"
         "      - name: monthly\n"
         "        deps: [daily]\n"
         "        partitioning: {kind: time, column: month, granularity: month}\n"
         "        sql: SELECT date(:bounds_start) AS month, SUM(n) AS n FROM daily\n"
         "             WHERE day >= :bounds_start AND day < :bounds_end\n";
}

class QueueCli : public ::testing::Test {
 protected:
  void SetUp() override {
    IL_REQUIRE_POSTGRES(url);
    queue_ = url + "?schema=" + interloper::testing::fresh_schema("queue");
    write_pipeline(dir_.path());
  }

  std::vector<std::string> worker_args(const std::string& lease = "30s") const {
    return {"worker", "shop.yaml", "--queue", queue_, "--exit-when-idle", "--lease", lease};
  }
  Outcome enqueue(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"backfill", "shop.yaml", "--window",
                                     "2026-11-01..2026-11-12", "--queue", queue_};
    args.insert(args.end(), extra.begin(), extra.end());
    return interloper::testing::run_interloper(args, dir_.path().string());
  }
  // One query's rows against the queue's schema, columns joined by '|'.
  std::vector<std::string> sql(const std::string& query) const {
    auto url = std::make_shared<const interloper::postgres::Url>(
        interloper::postgres::parse_url(queue_, {"schema"}));
    interloper::postgres::Connection conn(url);
    return interloper::testing::schema_rows(conn, url->get("schema"), query);
  }
  std::vector<std::string> warehouse(const std::string& query) const {
    return interloper::testing::query(dir_.path() / "warehouse.db", query);
  }

  interloper::testing::TempDir dir_;
  std::string queue_;
};

TEST_F(QueueCli, AKilledWorkersTaskIsRunAgainByTheOthers) {
  if (queue_.empty()) return;
  Outcome enqueued = enqueue();
  ASSERT_EQ(enqueued.code, 0) << enqueued.err;
  // 288 hours, 12 days and one month.
  EXPECT_NE(enqueued.out.find("301 tasks"), std::string::npos) << enqueued.out;

  const std::vector<std::string> slow = {"SLOW_HOUR=2026-11-12T23", "SLOW_SECONDS=10"};
  std::vector<std::unique_ptr<BackgroundCli>> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(
        std::make_unique<BackgroundCli>(worker_args("3s"), dir_.path(), slow));
  }
  // The newest hour is claimed first; its worker is killed while the command sleeps.
  const int victim = number_in(dir_.path() / "slow.pid");
  ASSERT_GT(victim, 0);
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  int killed = 0;
  for (auto& worker : workers) {
    const bool was_victim = worker->pid() == victim;
    Outcome done = worker->join();
    if (was_victim) {
      ++killed;
      EXPECT_EQ(done.code, 128 + SIGKILL);
    } else {
      EXPECT_EQ(done.code, 0) << done.err;
    }
  }
  EXPECT_EQ(killed, 1);

  EXPECT_EQ(sql("SELECT state, count(*) FROM tasks GROUP BY state"),
            std::vector<std::string>{"succeeded|301"})
      << ::testing::PrintToString(sql("SELECT asset, partition, last_error FROM tasks WHERE "
                                      "state <> 'succeeded'"));
  EXPECT_EQ(sql("SELECT attempts, last_error IS NULL FROM tasks WHERE partition = "
                "'2026-11-12T23'"),
            std::vector<std::string>{"2|t"});
  EXPECT_EQ(sql("SELECT count(*) FROM tasks WHERE attempts <> 1"),
            std::vector<std::string>{"1"});
  // Each partition once: one row per hour, complete days, the month of all of them.
  EXPECT_EQ(warehouse("SELECT count(*), count(DISTINCT hour) FROM shop__events"),
            std::vector<std::string>{"288|288"});
  EXPECT_EQ(warehouse("SELECT count(*), min(n), max(n) FROM shop__daily"),
            std::vector<std::string>{"12|24|24"});
  EXPECT_EQ(warehouse("SELECT month, n FROM shop__monthly"),
            std::vector<std::string>{"2026-11-01|288"});
  // The store agrees: nothing is left for a resumed backfill to run.
  Outcome again = interloper::testing::run_interloper(
      {"backfill", "shop.yaml", "--window", "2026-11-01..2026-11-12", "--missing", "--dry-run"},
      dir_.path().string());
  ASSERT_EQ(again.code, 0) << again.err;
  Outcome resumed = enqueue({"--missing"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("0 tasks (301 skipped"), std::string::npos) << resumed.out;
}

// The lines of calls.log naming `partition`: how many times its command ran.
int calls_of(const fs::path& dir, const std::string& partition) {
  std::ifstream in(dir / "calls.log");
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line == partition ? 1 : 0;
  return n;
}

TEST_F(QueueCli, ATaskLongerThanItsLeaseIsRenewedAndNotRunAgain) {
  if (queue_.empty()) return;
  // One day: 24 hours, the day and the month.
  Outcome enqueued = interloper::testing::run_interloper(
      {"backfill", "shop.yaml", "--window", "2026-11-12", "--queue", queue_}, dir_.path().string());
  ASSERT_EQ(enqueued.code, 0) << enqueued.err;
  EXPECT_NE(enqueued.out.find("26 tasks"), std::string::npos) << enqueued.out;

  // Leases of 3 s. The newest hour runs for 10 s on the worker that claims it; the other runs
  // the other hours, then, idle, takes back every expired lease it finds until that hour ends.
  const std::vector<std::string> slow = {"SLOW_HOUR=2026-11-12T23", "SLOW_SECONDS=10"};
  BackgroundCli first(worker_args("3s"), dir_.path(), slow);
  BackgroundCli second(worker_args("3s"), dir_.path(), slow);
  ASSERT_GT(number_in(dir_.path() / "slow.pid"), 0);
  std::this_thread::sleep_for(std::chrono::seconds(5));
  Outcome status = interloper::testing::run_interloper({"status", "shop.yaml", "--queue", queue_},
                                                       dir_.path().string());
  ASSERT_EQ(status.code, 0) << status.err;
  // Past its first lease, the task still runs on its first attempt, its lease ahead of it.
  EXPECT_NE(status.out.find("running  events  2026-11-12T23  on "), std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("s left  (attempt 1)"), std::string::npos) << status.out;

  for (BackgroundCli* worker : {&first, &second}) {
    Outcome done = worker->join();
    EXPECT_EQ(done.code, 0) << done.err;
  }
  EXPECT_EQ(sql("SELECT state, attempts, last_error IS NULL FROM tasks"
                " WHERE partition = '2026-11-12T23'"),
            std::vector<std::string>{"succeeded|1|t"});
  EXPECT_EQ(sql("SELECT state, count(*) FROM tasks GROUP BY state"),
            std::vector<std::string>{"succeeded|26"});
  EXPECT_EQ(calls_of(dir_.path(), "2026-11-12T23"), 1);
  // The other worker was idle, sweeping, for more than a lease while the hour ran.
  EXPECT_EQ(sql("SELECT (SELECT finished FROM tasks WHERE partition = '2026-11-12T23') -"
                " (SELECT max(finished) FROM tasks WHERE asset = 'events'"
                " AND partition <> '2026-11-12T23') > interval '3 seconds'"),
            std::vector<std::string>{"t"});
}

TEST_F(QueueCli, ALeaseExpiringOnTheLastAttemptFailsTheTaskAndCancelsItsDownstream) {
  if (queue_.empty()) return;
  Outcome enqueued = interloper::testing::run_interloper(
      {"backfill", "shop.yaml", "--window", "2026-11-12", "--queue", queue_, "--max-attempts", "1"},
      dir_.path().string());
  ASSERT_EQ(enqueued.code, 0) << enqueued.err;
  const std::vector<std::string> slow = {"SLOW_HOUR=2026-11-12T23", "SLOW_SECONDS=10"};
  BackgroundCli first(worker_args("3s"), dir_.path(), slow);
  BackgroundCli second(worker_args("3s"), dir_.path(), slow);
  const int victim = number_in(dir_.path() / "slow.pid");
  ASSERT_GT(victim, 0);
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  for (BackgroundCli* worker : {&first, &second}) {
    const bool was_victim = worker->pid() == victim;
    Outcome done = worker->join();
    EXPECT_EQ(done.code, was_victim ? 128 + SIGKILL : 0) << done.err;
  }
  EXPECT_EQ(sql("SELECT state, attempts, last_error LIKE 'the lease of worker % expired%'"
                " FROM tasks WHERE partition = '2026-11-12T23'"),
            std::vector<std::string>{"failed|1|t"});
  EXPECT_EQ(sql("SELECT asset, partition, last_error FROM tasks WHERE state = 'canceled'"
                " ORDER BY asset"),
            (std::vector<std::string>{
                "daily|2026-11-12|upstream asset 'events' failed for 2026-11-12T23",
                "monthly|2026-11|upstream asset 'events' failed for 2026-11-12T23"}));
  EXPECT_EQ(sql("SELECT count(*) FROM tasks WHERE state = 'succeeded'"),
            std::vector<std::string>{"23"});
}

TEST_F(QueueCli, ATaskThatAlwaysFailsFailsAfterItsAttemptsAndCancelsItsDownstream) {
  if (queue_.empty()) return;
  BackgroundCli waiter({"backfill", "shop.yaml", "--window", "2026-11-01..2026-11-12", "--queue",
                        queue_, "--max-attempts", "2", "--wait"},
                       dir_.path());
  BackgroundCli worker({"worker", "shop.yaml", "--queue", queue_, "--concurrency", "2"},
                       dir_.path(), {"BAD_HOUR=2026-11-05T07"});
  Outcome waited = waiter.join();
  EXPECT_EQ(waited.code, 1) << waited.err;
  EXPECT_NE(waited.err.find("1 task failed, 2 canceled; first: events 2026-11-05T07"),
            std::string::npos)
      << waited.err;
  ASSERT_EQ(::kill(worker.pid(), SIGTERM), 0);
  Outcome done = worker.join();
  EXPECT_EQ(done.code, 0) << done.err;

  EXPECT_EQ(sql("SELECT state, attempts, last_error LIKE '%broken%' FROM tasks WHERE backfill = 1 "
                "AND state = 'failed'"),
            std::vector<std::string>{"failed|2|t"});
  // Its day and the month read it: canceled. Everything else ran.
  EXPECT_EQ(sql("SELECT asset, partition FROM tasks WHERE backfill = 1 AND state = 'canceled' "
                "ORDER BY asset"),
            (std::vector<std::string>{"daily|2026-11-05", "monthly|2026-11"}));
  EXPECT_EQ(sql("SELECT count(*) FROM tasks WHERE backfill = 1 AND state = 'succeeded'"),
            std::vector<std::string>{"298"});

  Outcome status = interloper::testing::run_interloper(
      {"status", "shop.yaml", "--queue", queue_, "--backfill", "1"}, dir_.path().string());
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("0 queued, 0 running, 298 succeeded, 1 failed, 2 canceled"),
            std::string::npos)
      << status.out;
}

TEST_F(QueueCli, SigtermLetsTheRunningTaskFinishAndExitsZero) {
  if (queue_.empty()) return;
  ASSERT_EQ(enqueue().code, 0);
  BackgroundCli worker({"worker", "shop.yaml", "--queue", queue_}, dir_.path(),
                       {"SLOW_HOUR=2026-11-12T23", "SLOW_SECONDS=2"});
  const int pid = number_in(dir_.path() / "slow.pid");
  ASSERT_EQ(pid, worker.pid());
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  Outcome done = worker.join();
  EXPECT_EQ(done.code, 0) << done.err;
  EXPECT_EQ(sql("SELECT state, attempts FROM tasks WHERE partition = '2026-11-12T23'"),
            std::vector<std::string>{"succeeded|1"});
  EXPECT_EQ(sql("SELECT count(*) FROM tasks WHERE state = 'running'"),
            std::vector<std::string>{"0"});
  EXPECT_EQ(warehouse("SELECT count(*) FROM shop__events WHERE hour LIKE '2026-11-12T23%'"),
            std::vector<std::string>{"1"});
}

TEST_F(QueueCli, ASecondSignalGivesTheRunningTaskBackWithoutSpendingAnAttempt) {
  if (queue_.empty()) return;
  ASSERT_EQ(enqueue().code, 0);
  BackgroundCli worker({"worker", "shop.yaml", "--queue", queue_}, dir_.path(),
                       {"SLOW_HOUR=2026-11-12T23", "SLOW_SECONDS=60"});
  const int pid = number_in(dir_.path() / "slow.pid");
  ASSERT_EQ(pid, worker.pid());
  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  Outcome done = worker.join();
  EXPECT_EQ(done.code, 0) << done.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_NE(done.out.find("released  events  2026-11-12T23"), std::string::npos) << done.out;
  EXPECT_EQ(sql("SELECT state, attempts FROM tasks WHERE partition = '2026-11-12T23'"),
            std::vector<std::string>{"queued|0"});
  EXPECT_EQ(sql("SELECT count(*) FROM tasks WHERE state = 'running'"),
            std::vector<std::string>{"0"});
}

TEST_F(QueueCli, AWorkerOfAnotherPipelineVersionRefusesToRun) {
  if (queue_.empty()) return;
  ASSERT_EQ(enqueue().code, 0);
  {
    std::ofstream(dir_.path() / "shop.yaml", std::ios::app)
        << "      - name: extra\n"
           "        deps: [daily]\n"
           "        partitioning: {kind: time, column: day, granularity: day}\n"
           "        sql: SELECT day FROM daily WHERE day >= :bounds_start AND day < :bounds_end\n";
  }
  Outcome refused =
      interloper::testing::run_interloper(worker_args(), dir_.path().string());
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("differs from the one its backfills were enqueued with"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(sql("SELECT count(*) FROM tasks WHERE state <> 'queued'"),
            std::vector<std::string>{"0"});
}

TEST_F(QueueCli, CancelStopsWhatHasNotStarted) {
  if (queue_.empty()) return;
  ASSERT_EQ(enqueue().code, 0);
  Outcome canceled = interloper::testing::run_interloper({"cancel", "--queue", queue_, "1"},
                                                         dir_.path().string());
  ASSERT_EQ(canceled.code, 0) << canceled.err;
  EXPECT_NE(canceled.out.find("301 queued tasks canceled"), std::string::npos) << canceled.out;
  Outcome missing = interloper::testing::run_interloper({"cancel", "--queue", queue_, "7"},
                                                        dir_.path().string());
  EXPECT_EQ(missing.code, 2);
  Outcome worker = interloper::testing::run_interloper(worker_args(), dir_.path().string());
  EXPECT_EQ(worker.code, 0) << worker.err;
  EXPECT_FALSE(fs::exists(dir_.path() / "calls.log"));
}

// Runs of one partition that overlapped in spans.log ("start HOUR PID" / "end HOUR PID" lines in
// the order they happened), and how many runs each partition had.
struct Spans {
  std::vector<std::string> overlaps;
  std::map<std::string, int> runs;
};

Spans read_spans(const fs::path& file) {
  Spans spans;
  std::map<std::string, int> open;
  std::ifstream in(file);
  for (std::string what, hour, pid; in >> what >> hour >> pid;) {
    if (what == "start") {
      if (open[hour] > 0) spans.overlaps.push_back(hour + " (pid " + pid + ")");
      ++open[hour];
      ++spans.runs[hour];
    } else {
      --open[hour];
    }
  }
  return spans;
}

TEST_F(QueueCli, OverlappingBackfillsNeverRunOnePartitionAtOnce) {
  if (queue_.empty()) return;
  // 8 days each, 4 of them shared: 96 hours both backfills run.
  for (const char* window : {"2026-11-01..2026-11-08", "2026-11-05..2026-11-12"}) {
    Outcome enqueued = interloper::testing::run_interloper(
        {"backfill", "shop.yaml", "--window", window, "--queue", queue_}, dir_.path().string());
    ASSERT_EQ(enqueued.code, 0) << enqueued.err;
    EXPECT_NE(enqueued.out.find("201 tasks"), std::string::npos) << enqueued.out;
  }
  std::vector<std::string> args = worker_args();
  args.insert(args.end(), {"--concurrency", "2"});
  std::vector<std::unique_ptr<BackgroundCli>> workers;
  for (int i = 0; i < 3; ++i) {
    workers.push_back(
        std::make_unique<BackgroundCli>(args, dir_.path(), std::vector<std::string>{
                                                               "SPANS=1", "SPAN_SECONDS=0.02"}));
  }
  for (auto& worker : workers) {
    Outcome done = worker->join();
    EXPECT_EQ(done.code, 0) << done.err;
  }

  const Spans spans = read_spans(dir_.path() / "spans.log");
  EXPECT_TRUE(spans.overlaps.empty()) << ::testing::PrintToString(spans.overlaps);
  ASSERT_EQ(spans.runs.size(), 288u);
  int twice = 0;
  for (const auto& [hour, runs] : spans.runs) {
    const bool shared = hour >= "2026-11-05" && hour < "2026-11-09";
    EXPECT_EQ(runs, shared ? 2 : 1) << hour;
    twice += runs == 2 ? 1 : 0;
  }
  EXPECT_EQ(twice, 96);
  // Both backfills finished, and each partition holds one run's rows.
  EXPECT_EQ(sql("SELECT backfill, state, count(*) FROM tasks GROUP BY backfill, state ORDER BY 1"),
            (std::vector<std::string>{"1|succeeded|201", "2|succeeded|201"}));
  EXPECT_EQ(warehouse("SELECT count(*), count(DISTINCT hour) FROM shop__events"),
            std::vector<std::string>{"288|288"});
  EXPECT_EQ(warehouse("SELECT count(*), count(DISTINCT day), min(n), max(n) FROM shop__daily"),
            std::vector<std::string>{"12|12|24|24"});
  EXPECT_EQ(warehouse("SELECT count(*) FROM shop__monthly"), std::vector<std::string>{"1"});
}

}  // namespace

TEST_F(QueueCli, AWorkersSummaryCountsTasksAsTheQueueDoes) {
  if (queue_.empty()) return;
  Outcome enqueued = interloper::testing::run_interloper(
      {"backfill", "shop.yaml", "--window", "2026-11-01", "--queue", queue_, "--max-attempts", "2"},
      dir_.path().string());
  ASSERT_EQ(enqueued.code, 0) << enqueued.err;
  BackgroundCli worker(worker_args(), dir_.path(), {"FLAKY_HOUR=2026-11-01T05"});
  Outcome done = worker.join();
  ASSERT_EQ(done.code, 0) << done.err;
  // 24 hours, a day and a month; the flaky hour failed once and then succeeded.
  EXPECT_EQ(sql("SELECT state, count(*) FROM tasks GROUP BY state"),
            std::vector<std::string>{"succeeded|26"});
  EXPECT_EQ(sql("SELECT attempts FROM tasks WHERE partition = '2026-11-01T05'"),
            std::vector<std::string>{"2"});
  const std::string all = done.out + done.err;
  EXPECT_NE(all.find(": 26 tasks succeeded, 0 failed (1 failed attempt retried)"),
            std::string::npos)
      << all;
}

// A list whose values look like time keys, enqueued by a range and by one value ("2026", not
// the year): the workers read each backfill's window as the list's values.
TEST_F(QueueCli, ListValuesShapedLikeTimeKeysAreQueuedAsValues) {
  if (queue_.empty()) return;
  std::ofstream(dir_.path() / "periods.yaml")
      << "destination: sqlite://" << (dir_.path() / "warehouse.db").string() << "\n"
      << "store: state.db\n"
         "sources:\n"
         "  - name: plan\n"
         "    assets:\n"
         "      - name: periods\n"
         "        partitioning: {kind: list, column: period, values: [\"2026\", emea, Q1, Q2, "
         "Q3, us]}\n"
         "        command: [/bin/sh, -c, 'echo \"{\\\"period\\\":\\\"$IL_PARTITION_KEY\\\"}\"']\n";
  for (std::vector<std::string> window : {std::vector<std::string>{"--window", "Q1..Q3"},
                                          std::vector<std::string>{"--window", "2026"}}) {
    std::vector<std::string> args = {"backfill", "periods.yaml", "--queue", queue_};
    args.insert(args.end(), window.begin(), window.end());
    Outcome enqueued = interloper::testing::run_interloper(args, dir_.path().string());
    ASSERT_EQ(enqueued.code, 0) << enqueued.err;
  }
  BackgroundCli worker({"worker", "periods.yaml", "--queue", queue_, "--exit-when-idle"},
                       dir_.path(), {});
  Outcome done = worker.join();
  ASSERT_EQ(done.code, 0) << done.err;
  EXPECT_EQ(warehouse("SELECT period FROM plan__periods ORDER BY period"),
            (std::vector<std::string>{"2026", "Q1", "Q2", "Q3"}));
}
