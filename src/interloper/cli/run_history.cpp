// The run history a materialize or backfill keeps in the store, and what an interrupt records.
#include "interloper/cli/cli_internal.hpp"
#include "interloper/run/report_json.hpp"

namespace interloper::cli::detail {

// ---------------------------------------------------------------------------------------
// The run history: every materialize and backfill is recorded when it starts and when it ends.

// What the history files runs under: the pipeline file (absolute), or the program's name.
std::string history_name(const Args& args) {
  if (args.pipeline.empty()) return args.program;
  std::error_code ec;
  fs::path absolute = fs::weakly_canonical(fs::absolute(args.pipeline), ec);
  return ec ? args.pipeline : absolute.string();
}

// "run-YYYYMMDDTHHMMSS-PID": one run per process.
std::string new_run_id() {
  std::string stamp;
  for (char c : SystemClock().now().to_string()) {
    if (c != '-' && c != ':') stamp += c;
  }
  return fmt::format("run-{}-{}", stamp, ::getpid());
}

RunRecord start_history(RunContext& run, const Args& args, const PartitionWindow* window) {
  RunRecord record;
  record.run_id = new_run_id();
  record.pipeline = history_name(args);
  record.command_line = args.command_line;
  record.window = window != nullptr ? window->to_string() : "";
  record.started = SystemClock().now();
  record.finished = record.started;
  record.partitions = window != nullptr ? static_cast<std::int64_t>(window->size()) : 1;
  run.options.run_id = record.run_id;
  run.store->record_run(record, static_cast<std::size_t>(args.keep_runs));
  return record;
}

// Records the end of the run and, with --json, prints the summary as the last event.
void finish_history(RunContext& run, const Args& args, RunRecord record, json extra) {
  record.finished = SystemClock().now();
  if (record.state == RunState::running) {
    const bool ok = record.failed == 0 && record.canceled == 0;
    record.state = ok ? RunState::succeeded : RunState::failed;
  }
  run.store->record_run(record, static_cast<std::size_t>(args.keep_runs));
  if (args.json) {
    json summary = run_json(record);
    summary["type"] = "run_summary";
    for (auto& [key, value] : extra.items()) summary[key] = value;
    std::cout << dump(summary) << "\n";
    std::cout.flush();
  }
}

std::string signal_name(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

// Watches for SIGINT/SIGTERM during a run. Should the run not end after the commands were
// killed, the history records it as interrupted before the process exits.
Interrupts watch_interrupts(RunContext& run, const Args& args, const RunRecord& history) {
  RunHistory* runs = run.store.get();
  return Interrupts(kInterruptGrace, kInterruptLinger, [&args, &history, runs](int signal) {
    RunRecord record = history;
    record.state = RunState::interrupted;
    record.finished = SystemClock().now();
    try {
      runs->record_run(record, static_cast<std::size_t>(args.keep_runs));
    } catch (...) {
      // Exiting anyway; the entry stays "running".
    }
    print_error(args, fmt::format("interrupted by {}: an asset is still running {}s after its "
                                  "commands were killed; exiting without waiting for it",
                                  signal_name(signal), kInterruptLinger.count() / 1000));
  });
}

}  // namespace interloper::cli::detail
