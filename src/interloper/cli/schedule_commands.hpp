// The `jobs` and `schedule` commands: a pipeline's cron jobs, listed or run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "interloper/dag.hpp"
#include "interloper/schedule.hpp"

namespace interloper::cli {

// An RFC 3339 instant with an offset or Z ("2026-03-29T03:00:00+02:00", fractions of a second
// dropped), as a UTC TimePoint. Throws UsageError naming the text otherwise.
TimePoint parse_instant(const std::string& text);

// Prints each job's next `count` fires after `at` (text: "" means now) and the window each
// would run; with `json`, one object per line. Returns the exit code.
int jobs_command(const std::vector<Job>& jobs, const std::string& at, long count, bool json);

struct ScheduleArgs {
  std::string store_path;
  long catch_up = 0;
  bool once = false;
  std::string now;  // with once: the instant to evaluate ("" means the clock's now)
  int concurrency = 1;
  bool json = false;
  bool quiet = false;
  bool verbose = false;
};

// Runs what is due once (`once`), or schedules until SIGTERM or SIGINT. Returns the exit code:
// 1 when a fire it ran failed.
int schedule_command(const DAG& dag, const std::vector<Job>& jobs, const ScheduleArgs& args);

}  // namespace interloper::cli
