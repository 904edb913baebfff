// interloper/schedule.hpp — jobs: cron fires in a time zone, each running a lookback window.
//
// A Job names assets, a cron expression read on the wall clock of a zone, and a window
// relative to each fire: `lookback` partitions of `granularity`, ending `offset` partitions
// before the one that holds the fire (in the zone's calendar). At each fire the scheduler runs
// that window, one run per partition (backfill mode) or one windowed run (materialize mode).
//
//   il::Job job("nightly_ads", il::CronSchedule::parse("0 3 * * *"));
//   job.time_zone = "Europe/Berlin";
//   job.assets = {"ads_stats"};
//   job.lookback = 3;
//   job.offset = 1;
//   const il::TimePoint fire = job.next_fire(il::TimePoint::parse("2026-03-28T12:00:00"));
//   job.window(fire)->to_string();   // "2026-03-26..2026-03-28" (fire: 03:00 on 03-29)
//
// Every fire a scheduler runs is first claimed in a FireLog (a table in the materialization
// store's SQLite file): the claim is one INSERT, so of several schedulers sharing a file only
// one runs a given fire, and a restarted scheduler never runs a fire again.
//
// Thread safety: Job is a value; a FireLog may be used from several threads and processes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/cron.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/run.hpp"

namespace interloper {

struct Job {
  enum class Mode : std::uint8_t {
    backfill,     // one run per partition of the window
    materialize,  // one run over the whole window (the assets must allow windows)
  };

  Job(std::string name, CronSchedule cron) : name(std::move(name)), cron(std::move(cron)) {}

  std::string name;
  CronSchedule cron;
  std::string time_zone = "UTC";    // the cron's wall clock and the windows' calendar
  std::vector<std::string> assets;  // what each fire runs (dependents already added)
  std::int64_t lookback = 1;        // partitions in the window (>= 1)
  std::int64_t offset = 0;          // partitions back from the current one (>= 0)
  TimeGranularity granularity;
  std::optional<TimePoint> start;  // no partition before the one holding this
  Mode mode = Mode::backfill;

  // The first fire strictly after the UTC instant `after`.
  TimePoint next_fire(TimePoint after) const { return cron.next_fire(after, time_zone); }
  // The window a fire at the UTC instant `fire` runs, or nullopt when `start` clamps all of it
  // away.
  std::optional<TimePartitionWindow> window(TimePoint fire) const {
    return TimePartitionWindow::lookback(fire, lookback, offset, granularity, start, time_zone);
  }
};

// "backfill" or "materialize".
std::string_view job_mode_name(Job::Mode mode);

// One fire of a job, as the FireLog keeps it.
struct FireRecord {
  std::string job;
  TimePoint fire;  // UTC instant
  std::string run_id;
  std::string window;   // the window's text, "" when clamped away
  std::string outcome;  // "running", "succeeded", "failed" or "skipped"
  TimePoint claimed;    // when a scheduler claimed it
  TimePoint finished;   // when it ended (the epoch while running)
};

class FireLog {
 public:
  // The table `schedule_fires` in the SQLite file at `path` (the store's file; created when
  // missing), or a private in-memory table for "memory://". Throws DestinationError.
  explicit FireLog(const std::string& path);
  ~FireLog();
  FireLog(const FireLog&) = delete;
  FireLog& operator=(const FireLog&) = delete;

  // Records `fire` (outcome "running") unless a record of the same job and instant exists.
  // True when this call recorded it: the caller owns the fire and must run it.
  bool claim(const FireRecord& fire);
  // Sets the outcome and end time of a claimed fire.
  void finish(const std::string& job, TimePoint fire, std::string_view outcome, TimePoint finished);
  // The latest recorded fire of `job`, if any.
  std::optional<TimePoint> last_fire(const std::string& job);
  // Every recorded fire of `job`, oldest first.
  std::vector<FireRecord> fires(const std::string& job);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct ScheduleOptions {
  // At most this many fires missed while no scheduler ran (after the job's last recorded
  // fire) are run when the scheduler starts, the latest ones, oldest first.
  std::size_t catch_up = 0;
  int concurrency = 1;                    // partitions at once, in backfill mode
  MaterializationStore* store = nullptr;  // not owned; records each asset's outcome
  EventBus* events = nullptr;             // not owned
  const Clock* clock = nullptr;           // not owned; default: the system clock
  Logger logger;                          // the scheduler's info lines and the assets' logs
  // Called after each fire this scheduler claimed has ended (or been skipped).
  std::function<void(const FireRecord&)> on_fire;
};

// Runs the fires due at `now` (a UTC instant), in order of their instants: for each job, the
// fires in [watching_since, now], plus the latest `catch_up` fires between its last recorded
// fire and `watching_since`. Each is claimed in `log` before it runs; a fire claimed already
// (by this or another scheduler) is left alone. A fire whose window `start` clamps away is
// recorded as "skipped" with one info line. Returns the fires this call claimed.
std::vector<FireRecord> run_due(const DAG& dag, const std::vector<Job>& jobs, FireLog& log,
                                TimePoint watching_since, TimePoint now,
                                const ScheduleOptions& options = {});

// Runs the scheduler until `stop` becomes true: due fires at start (with catch-up), then each
// fire at its instant. `stop` is checked at least once a second while waiting and between
// fires, never in the middle of one.
void run_schedule(const DAG& dag, const std::vector<Job>& jobs, FireLog& log,
                  const std::atomic<bool>& stop, const ScheduleOptions& options = {});

}  // namespace interloper
