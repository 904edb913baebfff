#pragma once

// What the files of the command line share: the parsed arguments, the assets a command works on,
// output, and the commands themselves.

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unordered_map>

#include "interloper/cli/interrupt.hpp"
#include "interloper/cli/queue_commands.hpp"
#include "interloper/cli/schedule_commands.hpp"
#include "interloper/cli/selection.hpp"
#include "interloper/data.hpp"
#include "interloper/destination.hpp"
#include "interloper/pipeline.hpp"
#include "interloper/plan.hpp"
#include "interloper/run.hpp"
#include "interloper/store.hpp"

namespace interloper::cli::detail {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr const char* kVersion = "0.1.0";
constexpr int kOk = 0;
constexpr int kRunFailed = 1;
constexpr int kBadInput = 2;

// The assets a command works on: a loaded pipeline or a DAG built in code.
struct Project {
  const DAG* dag = nullptr;
  const Pipeline* pipeline = nullptr;  // nullptr for code-defined DAGs
  std::string store_path;
};

struct Args {
  std::string program = "interloper";  // names the program in messages
  bool json = false;
  bool quiet = false;
  bool verbose = false;
  std::string pipeline;
  std::string store;
  std::string destination;
  std::string partition;
  std::string window;
  long lookback = 0;
  long offset = 0;
  std::string time_zone = "UTC";
  std::vector<std::string> assets;
  int workers = 4;
  int concurrency = 1;
  bool missing = false;
  bool dry_run = false;
  bool fail_fast = false;
  bool all = false;
  bool verify = false;
  bool yes = false;         // reset --yes
  std::string reset_asset;  // reset ASSET
  int claim_lease = 60;
  long keep_runs = 1000;
  long last = 20;
  std::string command_line;  // the arguments as given, for the run history
  std::string at;            // jobs --at
  long count = 5;            // jobs --count
  long catch_up = 0;
  bool once = false;
  std::string now;                 // schedule --once --now
  QueueArgs queue;                 // backfill --queue, worker, status --queue, cancel
  std::string host = "127.0.0.1";  // serve --host
  int port = 8321;                 // serve --port
  bool allow_runs = false;         // serve --allow-runs
  bool text = false;               // catalog --text
  // serve --max-run-partitions (0: not given, the server's default)
  std::size_t max_run_partitions = 0;
};

// Everything a run needs besides the window and assets, wired to the output flags.
struct RunContext {
  EventBus events;
  std::shared_ptr<MaterializationStore> store;
  std::mutex output_mutex;
  RunOptions options;
};

// How the command line was started: `interloper` over pipeline files, or a program of the
// user's over its DAG in code (il::cli::main(argc, argv, dag)).
struct Program {
  std::string name;  // "interloper", or the program's file name
  bool yaml = true;
  // What help examples put after the command.
  const char* target() const { return yaml ? " pipeline.yaml" : ""; }
};

// A command: its subcommand of the app, with its options bound to Args, and what runs it.
struct Command {
  CLI::App* sub = nullptr;
  std::function<int(const Project&, const Args&)> run;
  std::function<int(const Args&)> run_alone;  // instead of `run`: needs no pipeline or DAG
};

// Each command registers its subcommand and options (in the file that runs it).
Command add_materialize(CLI::App& app, Args& args, const Program& program);
Command add_backfill(CLI::App& app, Args& args, const Program& program);
Command add_status(CLI::App& app, Args& args, const Program& program);
Command add_reset(CLI::App& app, Args& args, const Program& program);
Command add_worker(CLI::App& app, Args& args, const Program& program);
Command add_cancel(CLI::App& app, Args& args, const Program& program);
Command add_catalog(CLI::App& app, Args& args, const Program& program);
Command add_runs(CLI::App& app, Args& args, const Program& program);
Command add_serve(CLI::App& app, Args& args, const Program& program);
Command add_check(CLI::App& app, Args& args, const Program& program);
Command add_jobs(CLI::App& app, Args& args, const Program& program);      // pipelines only
Command add_schedule(CLI::App& app, Args& args, const Program& program);  // pipelines only

// Options the commands share (options.cpp).
extern const char* const kInterruptHelp;  // --fail-fast and signals, for help footers
// A whole number of at least `min`, checked with a message a person reads ("--concurrency:
// must be a whole number of at least 1, not '0'") instead of CLI11's range text.
CLI::Validator whole_number(long long min, const std::string& name);
void add_pipeline(CLI::App* sub, Args& args);  // the PIPELINE positional
void add_store(CLI::App* sub, Args& args);     // --store
// The pipeline (or --store and --destination for a DAG in code), and --asset.
void add_common(CLI::App* sub, Args& args, const Program& program);
// --partition and --window, and with `lookback` --lookback, --offset and --time-zone.
void add_window_options(CLI::App* sub, Args& args, bool lookback);
void add_keep_runs(CLI::App* sub, Args& args);

std::string dump(const json& value, int indent = -1);
void print_error(const Args& args, const std::string& message);
void print_info(const Args& args, const std::string& message);
std::string one_line(std::string text);
// `text` for a line of a run's progress that may continue on more lines: its first line as it
// is, every further line (a failed query as its author wrote it) indented under it, capped as
// one_line caps.
std::string indented_lines(std::string text);
bool stdout_is_terminal();
int terminal_width();
std::shared_ptr<MaterializationStore> open_state_store(const std::string& path, bool create);
void prepare_run(RunContext& run, const Project& project, const Args& args,
                 const Selection& selection);
void report_left_out(const Args& args, const Selection& selection);
// Calls `run` on the selection, then on each of its `also` readings, stopping after one whose
// exit code is neither 0 nor 1 (interrupted, bad input). Returns the first code that is not 0.
int each_reading(const Selection& selection, const std::function<int(const Selection&)>& run);
// The window --partition, --window or --lookback gives (none when empty).
WindowArgument window_argument(const Project& project, const Args& args);
int run_check(const Project& project, const Args& args);
int print_dry_run(const char* command, const Project& project, const Selection& selection,
                  bool per_partition, const Args& args);
int run_status(const Project& project, const Args& args);
int run_runs(const Project& project, const Args& args);
int run_serve(const Project& project, const Args& args);
int run_catalog(const Project& project, const Args& args);
int run_reset(const Project& project, const Args& args);
std::string history_name(const Args& args);
// "run-YYYYMMDDTHHMMSS-PID": one run per process.
std::string new_run_id();
// Records a run as started in the history, with a new run id that the run's options get too.
RunRecord start_history(RunContext& run, const Args& args, const PartitionWindow* window);
// Records the end of the run and, with --json, prints the summary (with `extra`) as the last
// event.
void finish_history(RunContext& run, const Args& args, RunRecord record, json extra = {});
std::string signal_name(int signal);
// Watches for SIGINT/SIGTERM during a run. Should the run not end after the commands were
// killed, the history records it as interrupted before the process exits.
Interrupts watch_interrupts(RunContext& run, const Args& args, const RunRecord& history);
int run_materialize(const Project& project, const Args& args);
QueueProject queue_project(const Project& project, const Args& args);
int run_worker(const Project& project, const Args& args);
int run_backfill(const Project& project, const Args& args);
int run_jobs(const Project& project, const Args& args);
int run_scheduler(const Project& project, const Args& args);

}  // namespace interloper::cli::detail
