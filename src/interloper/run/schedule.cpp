// Jobs on a schedule: the fire log (one SQLite table beside the store's) and the scheduler.
#include "interloper/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>

#include "interloper/run/run_id.hpp"
#include "interloper/sqlite/sqlite.hpp"

namespace interloper {

std::string_view job_mode_name(Job::Mode mode) {
  return mode == Job::Mode::materialize ? "materialize" : "backfill";
}

// ---- FireLog ----

struct FireLog::State {
  explicit State(std::string path) : db(std::move(path)) {}
  std::mutex mutex;
  sqlite::Database db;
};

namespace {

std::string log_file(const std::string& path) {
  if (path == "memory://" || path == "memory:") return ":memory:";
  std::string_view file = path;
  if (file.starts_with("sqlite:")) {
    file.remove_prefix(7);
    if (file.starts_with("//")) file.remove_prefix(2);
  }
  return std::string(file);
}

FireRecord read_record(const sqlite::Statement& s) {
  FireRecord r;
  r.job = s.column_text(0);
  r.fire = TimePoint::from_epoch_seconds(s.column_int(1));
  r.run_id = s.column_text(2);
  r.window = s.column_text(3);
  r.outcome = s.column_text(4);
  r.claimed = TimePoint::from_epoch_seconds(s.column_int(5));
  r.finished = TimePoint::from_epoch_seconds(s.column_int(6));
  return r;
}

}  // namespace

FireLog::FireLog(const std::string& path) : state_(std::make_unique<State>(log_file(path))) {
  state_->db.exec(
      "CREATE TABLE IF NOT EXISTS \"schedule_fires\" ("
      "\"job\" TEXT NOT NULL, \"fire\" INTEGER NOT NULL, \"run_id\" TEXT NOT NULL, "
      "\"window\" TEXT NOT NULL, \"outcome\" TEXT NOT NULL, \"claimed\" INTEGER NOT NULL, "
      "\"finished\" INTEGER NOT NULL, PRIMARY KEY (\"job\", \"fire\"))");
}

FireLog::~FireLog() = default;

bool FireLog::claim(const FireRecord& fire) {
  const std::lock_guard lock(state_->mutex);
  auto s = state_->db.cached(
      "INSERT INTO \"schedule_fires\" (\"job\", \"fire\", \"run_id\", \"window\", \"outcome\", "
      "\"claimed\", \"finished\") VALUES (?, ?, ?, ?, 'running', ?, 0) "
      "ON CONFLICT (\"job\", \"fire\") DO NOTHING");
  s->bind_text(1, fire.job);
  s->bind_int(2, fire.fire.epoch_seconds());
  s->bind_text(3, fire.run_id);
  s->bind_text(4, fire.window);
  s->bind_int(5, fire.claimed.epoch_seconds());
  s->step();
  return sqlite3_changes(state_->db.get()) == 1;
}

void FireLog::finish(const std::string& job, TimePoint fire, std::string_view outcome,
                     TimePoint finished) {
  const std::lock_guard lock(state_->mutex);
  auto s = state_->db.cached(
      "UPDATE \"schedule_fires\" SET \"outcome\" = ?, \"finished\" = ? "
      "WHERE \"job\" = ? AND \"fire\" = ?");
  s->bind_text(1, outcome);
  s->bind_int(2, finished.epoch_seconds());
  s->bind_text(3, job);
  s->bind_int(4, fire.epoch_seconds());
  s->step();
}

std::optional<TimePoint> FireLog::last_fire(const std::string& job) {
  const std::lock_guard lock(state_->mutex);
  auto s = state_->db.cached("SELECT MAX(\"fire\") FROM \"schedule_fires\" WHERE \"job\" = ?");
  s->bind_text(1, job);
  if (!s->step() || s->column_is_null(0)) return std::nullopt;
  return TimePoint::from_epoch_seconds(s->column_int(0));
}

std::vector<FireRecord> FireLog::fires(const std::string& job) {
  const std::lock_guard lock(state_->mutex);
  auto s = state_->db.cached(
      "SELECT \"job\", \"fire\", \"run_id\", \"window\", \"outcome\", \"claimed\", \"finished\" "
      "FROM \"schedule_fires\" WHERE \"job\" = ? ORDER BY \"fire\"");
  s->bind_text(1, job);
  std::vector<FireRecord> out;
  while (s->step()) out.push_back(read_record(*s));
  return out;
}

// ---- The scheduler ----

namespace {

struct DueFire {
  TimePoint fire;
  std::size_t job;
};

std::string utc_text(TimePoint t) { return t.to_string() + "Z"; }

// Runs one claimed fire; returns its outcome.
std::string run_fire(const DAG& dag, const Job& job, const TimePartitionWindow& window,
                     const std::string& run_id, const ScheduleOptions& options) {
  RunOptions run;
  run.assets = job.assets;
  run.store = options.store;
  run.events = options.events;
  run.clock = options.clock;
  run.logger = options.logger;
  run.run_id = run_id;
  try {
    if (job.mode == Job::Mode::backfill) {
      BackfillOptions backfill_options;
      backfill_options.concurrency = std::max(1, options.concurrency);
      backfill_options.run = run;
      const BackfillResult result = backfill(dag, window, backfill_options);
      return result.ok() ? "succeeded" : "failed";
    }
    const RunResult result = SerialRunner().run(dag, window, run);
    if (!result.ok()) options.logger.error(result.error_summary());
    return result.ok() ? "succeeded" : "failed";
  } catch (const std::exception& e) {
    options.logger.error(fmt::format("job '{}': {}", job.name, e.what()));
    return "failed";
  }
}

}  // namespace

std::vector<FireRecord> run_due(const DAG& dag, const std::vector<Job>& jobs, FireLog& log,
                                TimePoint watching_since, TimePoint now,
                                const ScheduleOptions& options) {
  const SystemClock system_clock;
  const Clock& clock = options.clock != nullptr ? *options.clock : system_clock;
  std::vector<DueFire> due;
  const TimePoint before_watch = TimePoint::from_epoch_seconds(watching_since.epoch_seconds() - 1);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    if (options.catch_up > 0) {
      if (const std::optional<TimePoint> last = log.last_fire(job.name)) {
        std::deque<TimePoint> missed;  // the latest catch_up of them
        for (TimePoint f = job.next_fire(*last); f < watching_since && f <= now;
             f = job.next_fire(f)) {
          missed.push_back(f);
          if (missed.size() > options.catch_up) missed.pop_front();
        }
        for (const TimePoint f : missed) due.push_back({f, j});
      }
    }
    for (TimePoint f = job.next_fire(before_watch); f <= now; f = job.next_fire(f)) {
      due.push_back({f, j});
    }
  }
  std::stable_sort(due.begin(), due.end(),
                   [](const DueFire& a, const DueFire& b) { return a.fire < b.fire; });

  std::vector<FireRecord> claimed;
  for (const DueFire& d : due) {
    const Job& job = jobs[d.job];
    const std::optional<TimePartitionWindow> window = job.window(d.fire);
    FireRecord record;
    record.job = job.name;
    record.fire = d.fire;
    record.run_id = detail::generate_run_id(clock);
    record.window = window ? window->to_string() : "";
    record.outcome = "running";
    record.claimed = clock.now();
    if (!log.claim(record)) continue;
    if (!window) {
      options.logger.info(fmt::format(
          "job '{}': fire at {} skipped: its window lies before the assets' start {}", job.name,
          utc_text(d.fire), job.start ? job.start->date_string() : std::string("?")));
      record.outcome = "skipped";
    } else {
      options.logger.info(fmt::format("job '{}': fire at {} runs {} ({})", job.name,
                                      utc_text(d.fire), record.window, record.run_id));
      record.outcome = run_fire(dag, job, *window, record.run_id, options);
      options.logger.info(
          fmt::format("job '{}': fire at {} {}", job.name, utc_text(d.fire), record.outcome));
    }
    record.finished = clock.now();
    log.finish(job.name, d.fire, record.outcome, record.finished);
    if (options.on_fire) options.on_fire(record);
    claimed.push_back(std::move(record));
  }
  return claimed;
}

void run_schedule(const DAG& dag, const std::vector<Job>& jobs, FireLog& log,
                  const std::atomic<bool>& stop, const ScheduleOptions& options) {
  const SystemClock system_clock;
  const Clock& clock = options.clock != nullptr ? *options.clock : system_clock;
  TimePoint evaluated = clock.now();
  run_due(dag, jobs, log, evaluated, evaluated, options);
  ScheduleOptions later = options;
  later.catch_up = 0;
  while (!stop.load()) {
    if (jobs.empty()) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    TimePoint next = jobs.front().next_fire(evaluated);
    for (const Job& job : jobs) next = std::min(next, job.next_fire(evaluated));
    while (!stop.load()) {
      const std::int64_t wait = next.epoch_seconds() - clock.now().epoch_seconds();
      if (wait <= 0) break;
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::min<std::int64_t>(wait, 1) * 1000));
    }
    if (stop.load()) break;
    const TimePoint now = clock.now();
    run_due(dag, jobs, log, TimePoint::from_epoch_seconds(evaluated.epoch_seconds() + 1), now,
            later);
    evaluated = now;
  }
}

}  // namespace interloper
