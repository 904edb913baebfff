#include "interloper/cli/schedule_commands.hpp"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "interloper/cli/selection.hpp"
#include "interloper/run/report_json.hpp"
#include "interloper/store.hpp"

namespace interloper::cli {

namespace {

using json = nlohmann::ordered_json;

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

bool digits(const std::string& s, std::size_t at, std::size_t n) {
  if (at + n > s.size()) return false;
  for (std::size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) { g_stop.store(true); }

}  // namespace

TimePoint parse_instant(const std::string& text) {
  const auto bad = [&]() -> TimePoint {
    throw UsageError(
        fmt::format("invalid instant '{}' (expected RFC 3339 with an offset or Z, such as "
                    "2026-03-29T01:00:00Z or 2026-03-29T03:00:00+02:00)",
                    text));
  };
  if (text.size() < 20 || (text[10] != 'T' && text[10] != 't' && text[10] != ' ')) return bad();
  TimePoint civil;
  try {
    civil = TimePoint::parse(text.substr(0, 10) + "T" + text.substr(11, 8));
  } catch (const std::invalid_argument&) {
    return bad();
  }
  std::size_t at = 19;
  if (text[at] == '.') {
    ++at;
    const std::size_t first = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    if (at == first) return bad();
  }
  if (at >= text.size()) return bad();
  std::int64_t offset = 0;
  if (text[at] == 'Z' || text[at] == 'z') {
    ++at;
  } else if ((text[at] == '+' || text[at] == '-') && digits(text, at + 1, 2) &&
             at + 3 < text.size() && text[at + 3] == ':' && digits(text, at + 4, 2)) {
    const int hours = std::stoi(text.substr(at + 1, 2));
    const int minutes = std::stoi(text.substr(at + 4, 2));
    if (hours > 23 || minutes > 59) return bad();
    offset = (text[at] == '-' ? -1 : 1) * (hours * 3600 + minutes * 60);
    at += 6;
  } else {
    return bad();
  }
  if (at != text.size()) return bad();
  return TimePoint::from_epoch_seconds(civil.epoch_seconds() - offset);
}

int jobs_command(const std::vector<Job>& jobs, const std::string& at, long count, bool as_json) {
  if (count < 1) throw UsageError(fmt::format("--count must be at least 1, got {}", count));
  const TimePoint after = at.empty() ? SystemClock().now() : parse_instant(at);
  for (const Job& job : jobs) {
    TimePoint t = after;
    for (long i = 0; i < count; ++i) {
      t = job.next_fire(t);
      const json fire = fire_json(job, t);
      if (as_json) {
        std::cout << dump(fire) << "\n";
      } else {
        std::cout << fmt::format("{}  {}  {}  {}\n", job.name, fire["fire"].get<std::string>(),
                                 fire["fire_utc"].get<std::string>(),
                                 fire["window"].is_null() ? "(before start: skipped)"
                                                          : fire["window"].get<std::string>());
      }
    }
  }
  return 0;
}

namespace {

// Log lines on stderr: the scheduler's own as "interloper: LEVEL: ...", an asset's as
// "[asset] ..." when verbose or a warning; only errors with --quiet.
Logger schedule_logger(std::mutex& output, bool quiet, bool verbose) {
  return Logger(
      [&output, quiet, verbose](LogLevel level, std::string_view asset, std::string_view message) {
        if (quiet && level < LogLevel::error) return;
        const std::lock_guard lock(output);
        if (asset.empty()) {
          std::fprintf(stderr, "interloper: %s: %.*s\n", std::string(log_level_name(level)).c_str(),
                       static_cast<int>(message.size()), message.data());
        } else if (verbose || level >= LogLevel::warning) {
          std::fprintf(stderr, "[%.*s] %.*s\n", static_cast<int>(asset.size()), asset.data(),
                       static_cast<int>(message.size()), message.data());
        }
        std::fflush(stderr);
      });
}

// One line per fire: JSON with --json, text unless --quiet; the fire in its job's zone.
void print_fire(const FireRecord& r, const std::vector<Job>& jobs, const ScheduleArgs& args) {
  std::string zone = "UTC";
  for (const Job& j : jobs) {
    if (j.name == r.job) zone = j.time_zone;
  }
  if (args.json) {
    json out;
    out["job"] = r.job;
    out["fire"] = to_local_text(r.fire, zone);
    out["fire_utc"] = r.fire.to_string() + "Z";
    out["window"] = r.window.empty() ? json(nullptr) : json(r.window);
    out["run_id"] = r.run_id;
    out["outcome"] = r.outcome;
    std::cout << dump(out) << "\n";
  } else if (!args.quiet) {
    std::cout << fmt::format("{:<10}{}  {}  {}  {}\n", r.outcome, r.job,
                             to_local_text(r.fire, zone), r.window.empty() ? "-" : r.window,
                             r.run_id);
  }
  std::cout.flush();
}

}  // namespace

int schedule_command(const DAG& dag, const std::vector<Job>& jobs, const ScheduleArgs& args) {
  if (jobs.empty()) throw UsageError("the pipeline declares no jobs");
  if (args.catch_up < 0) {
    throw UsageError(fmt::format("--catch-up must not be negative, got {}", args.catch_up));
  }
  if (!args.now.empty() && !args.once) throw UsageError("--now needs --once");
  const TimePoint now = args.now.empty() ? SystemClock().now() : parse_instant(args.now);

  auto store = open_store(args.store_path);
  FireLog log(args.store_path);
  std::mutex output;
  ScheduleOptions options;
  options.catch_up = static_cast<std::size_t>(args.catch_up);
  options.concurrency = args.concurrency;
  options.store = store.get();
  options.logger = schedule_logger(output, args.quiet, args.verbose);
  bool failed = false;
  options.on_fire = [&](const FireRecord& r) {
    failed = failed || r.outcome == "failed";
    const std::lock_guard lock(output);
    print_fire(r, jobs, args);
  };

  if (args.once) {
    run_due(dag, jobs, log, now, now, options);
    return failed ? 1 : 0;
  }
  g_stop.store(false);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  struct sigaction old_term {
  }, old_int{};
  sigaction(SIGTERM, &action, &old_term);
  sigaction(SIGINT, &action, &old_int);
  options.logger.info(fmt::format("scheduling {} job{}; stop with SIGTERM", jobs.size(),
                                  jobs.size() == 1 ? "" : "s"));
  run_schedule(dag, jobs, log, g_stop, options);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGINT, &old_int, nullptr);
  options.logger.info("stopped");
  return failed ? 1 : 0;
}

}  // namespace interloper::cli
