#include "interloper/cli.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <charconv>
#include <limits>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
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

namespace interloper::cli {
namespace {

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
  int claim_lease = 60;
  long keep_runs = 1000;
  long last = 20;
  std::string command_line;  // the arguments as given, for the run history
  std::string at;            // jobs --at
  long count = 5;            // jobs --count
  long catch_up = 0;
  bool once = false;
  std::string now;  // schedule --once --now
  QueueArgs queue;  // backfill --queue, worker, status --queue, cancel
};

std::string one_line(std::string text);

// JSON text; invalid UTF-8 (from names or keys) is replaced rather than fatal.
std::string dump(const json& value, int indent = -1) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

void print_error(const Args& args, const std::string& message) {
  std::string line = one_line(message);
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", args.program.c_str(), line.c_str());
}

void print_info(const Args& args, const std::string& message) {
  if (args.quiet) return;
  std::fprintf(stderr, "%s: info: %s\n", args.program.c_str(), message.c_str());
}

// Error text is capped so that a message about something huge (a 50,000-column table) stays
// readable; the cut says how much it left out.
constexpr std::size_t kMaxErrorBytes = 4096;

std::string one_line(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "; ";
    } else {
      out += c;
    }
  }
  if (out.size() > kMaxErrorBytes) {
    std::size_t cut = kMaxErrorBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    const std::size_t left_out = out.size() - cut;
    out.resize(cut);
    out += fmt::format(" ... ({} more bytes cut)", left_out);
  }
  return out;
}

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

int terminal_width() {
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::shared_ptr<MaterializationStore> open_state_store(const std::string& path, bool create) {
  // Reading commands (status) must not create state: a store that does not exist yet is empty.
  std::error_code ec;
  const bool server = path.rfind("postgresql://", 0) == 0 || path.rfind("postgres://", 0) == 0;
  if (!create && !server && !fs::exists(path, ec)) return std::make_shared<MemoryStore>();
  try {
    // Reading commands open it read-only: they work on a store they may not write.
    if (!create) return std::shared_ptr<MaterializationStore>(open_store_read_only(path));
    return std::shared_ptr<MaterializationStore>(open_store(path));
  } catch (const std::exception& e) {
    // The store's own message names it with any password redacted; the raw path may hold one.
    throw UsageError(fmt::format("the store cannot be opened{}: {}", create ? " for writing" : "",
                                 one_line(e.what())));
  }
}

// Everything a run needs besides the window and assets, wired to the output flags.
struct RunContext {
  EventBus events;
  std::shared_ptr<MaterializationStore> store;
  std::mutex output_mutex;
  RunOptions options;
};

// Before anything runs: every destination the selected assets write to, and the store, must
// be writable, so that a run never computes partitions it cannot record. Throws UsageError
// naming the first that is not.
void check_writable(const Project& project, const Selection& selection) {
  std::vector<Destination*> checked;
  for (const std::string& name : selection.assets) {
    const Asset& asset = project.dag->asset(name);
    Destination* destination = project.dag->destination_of(asset);
    if (destination == nullptr) {
      throw UsageError(fmt::format(
          "asset '{}' has no destination to write to (set one on the asset or its source)", name));
    }
    if (std::find(checked.begin(), checked.end(), destination) != checked.end()) continue;
    checked.push_back(destination);
    try {
      destination->check_writable();
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("destination {} (asset '{}') cannot be written: {}",
                                   destination->url(), name, one_line(e.what())));
    }
  }
  const fs::path store(project.store_path);
  for (const fs::path& path : {store, store.parent_path()}) {
    std::error_code ec;
    if (path.empty() || !fs::exists(path, ec) || ::access(path.c_str(), W_OK) == 0) continue;
    throw UsageError(fmt::format("store {} cannot be written: {}: {}", project.store_path,
                                 path.string(), std::strerror(errno)));
  }
}

void prepare_run(RunContext& run, const Project& project, const Args& args,
                 const Selection& selection) {
  check_writable(project, selection);
  run.store = open_state_store(project.store_path, true);
  run.options.store = run.store.get();
  run.options.events = &run.events;
  run.options.assets = selection.assets;
  if (args.json) {
    run.events.subscribe([](const Event& e) {
      std::string line = e.to_json();
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    });
  }
  std::mutex* mutex = &run.output_mutex;
  bool verbose = args.verbose;
  run.options.logger =
      Logger([mutex, verbose](LogLevel level, std::string_view asset, std::string_view message) {
        if (!verbose && level < LogLevel::warning) return;
        std::lock_guard lock(*mutex);
        std::fprintf(stderr, "[%.*s] %.*s\n", static_cast<int>(asset.size()), asset.data(),
                     static_cast<int>(message.size()), message.data());
      });
}

// ---------------------------------------------------------------------------------------
// Plans (check, --dry-run)

// The plan as JSON: per asset its share of the window as ranges and its task count, never one
// element per partition.
json plan_json(const std::string& command, const Project& project, const Selection& selection,
               bool backfill) {
  json plan;
  plan["command"] = command;
  plan["window"] = selection.window ? json(selection.window->to_string()) : json(nullptr);
  plan["partitions"] = selection.window ? selection.window->size() : 0;
  PlanOptions options;
  options.scope = backfill ? TaskScope::per_partition : TaskScope::per_asset;
  options.assets = selection.assets;
  std::optional<Plan> planned;
  try {
    if (!selection.assets.empty()) {
      planned = interloper::plan(*project.dag, selection.window.get(), options);
    }
  } catch (const PartitionError&) {
    // `check` of the whole DAG without a window: partitioned assets have no tasks to plan.
    if (selection.window) throw;
  }
  plan["tasks"] = planned ? planned->size() : 0;
  plan["order"] = backfill ? "newest first" : "upstream first";
  std::unordered_map<std::string_view, std::size_t> step_of;  // asset name -> its step
  if (planned) {
    for (std::size_t i = 0; i < planned->steps().size(); ++i) {
      step_of.emplace(planned->steps()[i].asset->name(), i);
    }
  }
  json assets = json::array();
  for (const auto& name : selection.assets) {
    const Asset& asset = project.dag->asset(name);
    json entry;
    entry["name"] = name;
    entry["source"] = asset.source_name();
    entry["deps"] = asset.deps();
    entry["partitioning"] = describe_partitioning(asset.partitioning());
    if (project.pipeline != nullptr) {
      if (const AssetDefinition* def = project.pipeline->definition(name))
        entry["body"] = def->body;
    }
    json windows = json::array();
    std::size_t tasks = 0;
    if (auto it = step_of.find(name); it != step_of.end()) {
      const Plan::Step& step = planned->steps()[it->second];
      tasks = step.tasks;
      if (step.share) windows.push_back(step.share->to_string());
    }
    entry["windows"] = windows;
    entry["tasks"] = tasks;
    assets.push_back(entry);
  }
  plan["assets"] = assets;
  json left_out = json::array();
  for (const auto& [name, reason] : selection.left_out) {
    left_out.push_back({{"asset", name}, {"reason", reason}});
  }
  plan["left_out"] = left_out;
  return plan;
}

void print_plan(const json& plan) {
  std::string window = plan["window"].is_null() ? "(none)" : plan["window"].get<std::string>();
  std::size_t partitions = plan["partitions"].get<std::size_t>();
  std::cout << "window: " << window;
  if (partitions > 0)
    std::cout << " (" << partitions << " partition" << (partitions == 1 ? "" : "s") << ")";
  std::cout << "\n";
  std::size_t tasks = plan["tasks"].get<std::size_t>();
  if (plan["command"] == "backfill") {
    std::cout << "tasks: " << tasks << ", one per asset and partition, newest first\n";
  } else {
    std::cout << "tasks: " << tasks << ", one per asset\n";
  }
  std::cout << "assets, in order:\n";
  int i = 0;
  for (const auto& a : plan["assets"]) {
    std::string deps;
    for (const auto& d : a["deps"]) deps += (deps.empty() ? "" : ", ") + d.get<std::string>();
    std::string windows;
    for (const auto& w : a["windows"]) {
      windows += (windows.empty() ? "" : ", ") + w.get<std::string>();
    }
    const std::size_t n = a["tasks"].get<std::size_t>();
    std::cout << fmt::format("  {}. {}  [{}{}]{}  {}{} task{}\n", ++i, a["name"].get<std::string>(),
                             a["partitioning"].get<std::string>(),
                             a.contains("body") ? ", " + a["body"].get<std::string>() : "",
                             deps.empty() ? "" : "  after " + deps,
                             windows.empty() ? "" : windows + "  ", n, n == 1 ? "" : "s");
  }
  for (const auto& l : plan["left_out"]) {
    std::cout << fmt::format("  left out: {} ({})\n", l["asset"].get<std::string>(),
                             l["reason"].get<std::string>());
  }
}

void report_left_out(const Args& args, const Selection& selection) {
  if (selection.left_out.empty()) return;
  std::vector<std::string> parts;
  for (const auto& [name, reason] : selection.left_out) {
    parts.push_back(fmt::format("{} ({})", name, reason));
  }
  print_info(args, fmt::format("left out: {}", fmt::join(parts, ", ")));
}

// ---------------------------------------------------------------------------------------
// Commands

std::string window_argument(const Project& project, const Args& args) {
  if (!args.partition.empty()) return args.partition;
  if (!args.window.empty()) return args.window;
  if (args.lookback > 0) {
    auto text = lookback_window(*project.dag, args.assets, args.lookback, args.offset,
                                args.time_zone, SystemClock().now());
    if (!text) throw UsageError("the lookback window lies entirely before the assets' start");
    return *text;
  }
  return "";
}

int run_check(const Project& project, const Args& args) {
  std::string window = window_argument(project, args);
  if (window.empty() && args.assets.empty()) {
    // Without a scope, check the whole DAG: every asset, in order.
    Selection all;
    for (const Asset* asset : project.dag->order()) all.assets.push_back(asset->name());
    json plan = plan_json("check", project, all, false);
    if (args.json) {
      std::cout << dump(plan) << "\n";
    } else if (!args.quiet) {
      std::cout << "ok: " << project.dag->size() << " assets\n";
      print_plan(plan);
    }
    return kOk;
  }
  Selection selection = select(*project.dag, window, args.assets, false, !args.partition.empty());
  json plan = plan_json("check", project, selection, false);
  if (args.json) {
    std::cout << dump(plan) << "\n";
  } else if (!args.quiet) {
    std::cout << "ok\n";
    print_plan(plan);
  }
  return kOk;
}

// --dry-run: the plan, as JSON or as text.
int print_dry_run(const char* command, const Project& project, const Selection& selection,
                  bool per_partition, const Args& args) {
  json plan = plan_json(command, project, selection, per_partition);
  if (args.json) {
    std::cout << dump(plan) << "\n";
  } else {
    print_plan(plan);
  }
  return kOk;
}

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

json run_json(const RunRecord& r) {
  return json{{"run_id", r.run_id},
              {"pipeline", r.pipeline},
              {"command_line", r.command_line},
              {"window", r.window.empty() ? json(nullptr) : json(r.window)},
              {"started", r.started.to_string()},
              {"finished", r.finished.to_string()},
              {"status", run_state_name(r.state)},
              {"partitions", r.partitions},
              {"succeeded", r.succeeded},
              {"failed", r.failed},
              {"skipped", r.skipped}};
}

// Records the end of the run and, with --json, prints the summary as the last event.
void finish_history(RunContext& run, const Args& args, RunRecord record, json extra = {}) {
  record.finished = SystemClock().now();
  if (record.state == RunState::running) {
    record.state = record.failed == 0 ? RunState::succeeded : RunState::failed;
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

// How long commands get between SIGTERM and SIGKILL when a run is interrupted, and how long the
// run then gets to end before the process exits anyway (a C++ asset still computing).
constexpr std::chrono::milliseconds kInterruptGrace{3000};
constexpr std::chrono::milliseconds kInterruptLinger{2000};

std::string signal_name(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

// Watches for SIGINT/SIGTERM during a run. Should the run not end after the commands were
// killed, the history records it as interrupted before the process exits.
Interrupts watch_interrupts(RunContext& run, const Args& args, const RunRecord& history) {
  MaterializationStore* store = run.store.get();
  return Interrupts(kInterruptGrace, kInterruptLinger, [&args, &history, store](int signal) {
    RunRecord record = history;
    record.state = RunState::interrupted;
    record.finished = SystemClock().now();
    try {
      store->record_run(record, static_cast<std::size_t>(args.keep_runs));
    } catch (...) {
      // Exiting anyway; the entry stays "running".
    }
    print_error(args, fmt::format("interrupted by {}: an asset is still running {}s after its "
                                  "commands were killed; exiting without waiting for it",
                                  signal_name(signal), kInterruptLinger.count() / 1000));
  });
}

int run_materialize(const Project& project, const Args& args) {
  Selection selection = select(*project.dag, window_argument(project, args), args.assets, false,
                               !args.partition.empty());
  report_left_out(args, selection);
  if (args.dry_run) return print_dry_run("materialize", project, selection, false, args);
  RunContext run;
  prepare_run(run, project, args, selection);
  if (!args.json && !args.quiet) {
    run.events.subscribe([](const Event& e) {
      if (e.type == EventType::asset_completed) {
        std::cout << fmt::format("ok        {}  {}  {} rows  {:.3f}s\n", e.asset,
                                 e.window.empty() ? "-" : e.window, e.rows, e.seconds);
      } else if (e.type == EventType::asset_failed) {
        std::cout << fmt::format("FAILED    {}  {}  {}\n", e.asset,
                                 e.window.empty() ? "-" : e.window, one_line(e.message));
      } else if (e.type == EventType::asset_canceled) {
        std::cout << fmt::format("canceled  {}  {}\n", e.asset, e.window.empty() ? "-" : e.window);
      }
      std::cout.flush();
    });
  }
  RunRecord history = start_history(run, args, selection.window.get());
  Interrupts interrupts = watch_interrupts(run, args, history);
  run.options.stop = &interrupts.stop();
  run.options.fail_fast = args.fail_fast;
  ThreadedRunner runner(args.workers);
  RunResult result = runner.run(*project.dag, selection.window.get(), run.options);
  for (const AssetResult& asset : result.assets) {
    if (asset.status == Status::succeeded) ++history.succeeded;
    if (asset.status == Status::failed || asset.status == Status::canceled) ++history.failed;
    if (asset.status == Status::skipped) ++history.skipped;
  }
  if (interrupts.signal() != 0) history.state = RunState::interrupted;
  finish_history(run, args, history);
  if (interrupts.signal() != 0) {
    std::size_t interrupted = 0, not_started = 0;
    for (const AssetResult& asset : result.assets) {
      if (asset.status == Status::failed) ++interrupted;
      if (asset.status == Status::canceled) ++not_started;
    }
    print_error(args, fmt::format("interrupted by {}: {} asset{} failed or interrupted, {} not "
                                  "started",
                                  signal_name(interrupts.signal()), interrupted,
                                  interrupted == 1 ? "" : "s", not_started));
    return interrupts.exit_code();
  }
  if (!result.ok()) {
    const std::string scope = result.window.empty() ? "run" : "run " + result.window;
    print_error(args, fmt::format("{} failed: {}", scope, one_line(result.error_summary())));
    return kRunFailed;
  }
  return kOk;
}

std::string format_seconds(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
}

// The queue commands file backfills under the pipeline file's stem, the same on every machine.
QueueProject queue_project(const Project& project, const Args& args) {
  QueueProject out;
  out.dag = project.dag;
  out.pipeline = project.pipeline;
  out.name = args.pipeline.empty() ? args.program : fs::path(args.pipeline).stem().string();
  out.json = args.json;
  out.quiet = args.quiet;
  return out;
}

int run_worker(const Project& project, const Args& args) {
  RunContext run;
  Selection all;  // every enabled asset: any of them may come from the queue
  for (const Asset* asset : project.dag->order()) {
    if (asset->enabled()) all.assets.push_back(asset->name());
  }
  prepare_run(run, project, args, all);
  run.options.run_id = new_run_id();
  return queue_worker(queue_project(project, args), run.options, args.queue);
}

int run_backfill(const Project& project, const Args& args) {
  Selection selection = select(*project.dag, window_argument(project, args), args.assets, true);
  report_left_out(args, selection);
  if (args.dry_run) return print_dry_run("backfill", project, selection, true, args);
  if (!args.queue.url.empty()) {
    auto store = open_state_store(project.store_path, false);
    return queue_backfill(queue_project(project, args), selection, args.missing, store.get(),
                          args.queue);
  }
  RunContext run;
  prepare_run(run, project, args, selection);

  // Progress: counted from task outcomes.
  struct Progress {
    std::size_t total = 0, done = 0, failed = 0;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    std::chrono::steady_clock::time_point drawn;
  };
  auto progress = std::make_shared<Progress>();
  const bool live = !args.json && !args.quiet && stdout_is_terminal();
  const bool plain = !args.json && !args.quiet && !live;

  BackfillOptions options;
  options.concurrency = args.concurrency;
  options.missing_only = args.missing;
  options.run = run.options;
  options.claim_lease = std::chrono::seconds(args.claim_lease);
  options.on_plan = [progress](std::size_t planned, std::size_t) { progress->total = planned; };
  options.on_task = [progress, live, plain](const TaskResult& task) {
    Progress& p = *progress;
    ++p.done;
    if (task.status != Status::succeeded) ++p.failed;
    if (plain) {
      const std::string window = task.window.empty() ? "-" : task.window;
      if (task.status == Status::succeeded) {
        std::cout << fmt::format("ok        {}  {}  {} rows  {:.3f}s\n", task.asset, window,
                                 task.rows, task.seconds);
      } else if (task.status == Status::failed) {
        std::cout << fmt::format("FAILED    {}  {}  {}\n", task.asset, window,
                                 one_line(task.error));
      } else if (task.status == Status::skipped) {
        std::cout << fmt::format("claimed   {}  {}  {}\n", task.asset, window, task.error);
      } else {
        std::cout << fmt::format("canceled  {}  {}\n", task.asset, window);
      }
    }
    if (live) {
      // Redraw at most ten times a second: a large backfill finishes thousands of tasks a
      // second.
      auto now = std::chrono::steady_clock::now();
      if (p.done < p.total && now - p.drawn < std::chrono::milliseconds(100)) return;
      p.drawn = now;
      double elapsed = std::chrono::duration<double>(now - p.started).count();
      std::string eta = "?";
      if (p.done > 0)
        eta = format_seconds(elapsed / static_cast<double>(p.done) *
                             static_cast<double>(p.total - p.done));
      std::cout << fmt::format("\r\033[K{}/{} tasks done  {} failed  ETA {}", p.done, p.total,
                               p.failed, eta);
    }
    std::cout.flush();
  };
  RunRecord history = start_history(run, args, selection.window.get());
  options.run.run_id = history.run_id;
  Interrupts interrupts = watch_interrupts(run, args, history);
  options.run.stop = &interrupts.stop();
  options.fail_fast = args.fail_fast;
  BackfillResult result = backfill(*project.dag, *selection.window, options);
  if (live) std::cout << "\n";
  history.succeeded = static_cast<std::int64_t>(result.succeeded());
  history.failed = static_cast<std::int64_t>(result.failed());
  history.skipped = static_cast<std::int64_t>(result.tasks.skipped + result.tasks.claimed);
  if (interrupts.signal() != 0) history.state = RunState::interrupted;
  finish_history(run, args, history, json{{"claimed", result.tasks.claimed}});
  if (!args.json && !args.quiet) {
    const std::size_t total = result.tasks.succeeded + result.tasks.failed +
                              result.tasks.canceled + result.tasks.skipped + result.tasks.claimed;
    std::cout << fmt::format(
        "backfill {}: {} task{}, {} succeeded, {} failed, {} canceled, {} skipped",
        selection.window->to_string(), total, total == 1 ? "" : "s", result.tasks.succeeded, result.tasks.failed, result.tasks.canceled, result.tasks.skipped);
    if (result.tasks.claimed > 0) {
      std::cout << fmt::format(", {} claimed by another run ({} {}{})", result.tasks.claimed,
                               result.claimed.front().asset, result.claimed.front().window,
                               result.tasks.claimed > 1 ? ", ..." : "");
    }
    std::cout << "\n";
  }
  if (interrupts.signal() != 0) {
    print_error(args, fmt::format("interrupted by {}: {} tasks failed or interrupted, {} not "
                                  "started",
                                  signal_name(interrupts.signal()), result.tasks.failed,
                                  result.tasks.canceled));
    return interrupts.exit_code();
  }
  if (!result.ok()) {
    std::string first;
    if (!result.failures.empty()) {
      const TaskResult& f = result.failures.front();
      first = fmt::format("{} {}: {}", f.asset, f.window, one_line(f.error));
    }
    print_error(args, fmt::format("{} task{} failed, {} canceled; first: {}", result.tasks.failed,
                                  result.tasks.failed == 1 ? "" : "s", result.tasks.canceled,
                                  first));
    return kRunFailed;
  }
  return kOk;
}

// "a..b" or "a" for each range, with the window's keys.
json ranges_json(const PartitionWindow& window, const std::vector<PartitionRange>& ranges) {
  json out = json::array();
  for (const auto& r : ranges) {
    std::string first = window.partition_at(r.first)->key();
    out.push_back(r.first == r.last ? first : first + ".." + window.partition_at(r.last)->key());
  }
  return out;
}

std::string strip(const PartitionWindow& window, const WindowStatus& status, int width) {
  std::size_t n = window.size();
  std::vector<char> state(n, 'm');  // m materialized, f failed, - missing
  for (const auto& r : status.failed) {
    for (std::size_t i = r.first; i <= r.last && i < n; ++i) state[i] = 'f';
  }
  for (const auto& r : status.missing) {
    for (std::size_t i = r.first; i <= r.last && i < n; ++i) state[i] = '-';
  }
  std::size_t cells = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(width, 10)));
  std::string out;
  char current = 0;
  for (std::size_t c = 0; c < cells; ++c) {
    std::size_t from = c * n / cells, to = std::max(from + 1, (c + 1) * n / cells);
    char cell = 'm';
    for (std::size_t i = from; i < to; ++i) {
      if (state[i] == 'f') cell = 'f';
      if (state[i] == '-' && cell != 'f') cell = '-';
    }
    if (cell != current) {
      out += cell == 'm' ? "\033[32m" : cell == 'f' ? "\033[31m" : "\033[2m";
      current = cell;
    }
    out += cell == 'm' ? "#" : cell == 'f' ? "x" : ".";
  }
  out += "\033[0m";
  return out;
}

// The first line of an error, cut to fit a status line.
std::string error_excerpt(const std::string& error) {
  std::string line = one_line(error);
  constexpr std::size_t kWidth = 160;
  if (line.size() > kWidth) line = line.substr(0, kWidth - 3) + "...";
  return line;
}

// The partitions of `materialized` that the destination does not hold (never written there, or
// deleted since).
std::vector<PartitionRange> gone_partitions(const DAG& dag, const Asset& asset,
                                            const PartitionWindow& window,
                                            const std::vector<PartitionRange>& materialized) {
  std::vector<PartitionRange> gone;
  if (materialized.empty()) return gone;
  Destination* destination = dag.destination_of(asset);
  if (destination == nullptr) return materialized;
  const std::vector<PartitionCount> counts = destination->partition_counts(asset.dataset(), window);
  for (const PartitionRange& range : materialized) {
    for (std::size_t i = range.first; i <= range.last && i < counts.size(); ++i) {
      if (counts[i].written) continue;
      if (!gone.empty() && gone.back().last + 1 == i) {
        gone.back().last = i;
      } else {
        gone.push_back({i, i});
      }
    }
  }
  return gone;
}

int run_status(const Project& project, const Args& args) {
  if (!args.queue.url.empty()) return queue_status(queue_project(project, args), args.queue);
  std::vector<std::string> names = args.assets;
  if (names.empty()) {
    for (const Asset* a : project.dag->order()) names.push_back(a->name());
  } else {
    for (const auto& name : names) {
      if (project.dag->find(name) == nullptr) {
        throw UsageError(fmt::format("unknown asset '{}'", name));
      }
    }
  }
  auto store = open_state_store(project.store_path, false);
  TimePoint now = SystemClock().now();
  json out = json::array();
  bool any_window_accepted = args.window.empty();
  bool any_gone = false;
  const bool terminal = !args.json && stdout_is_terminal();
  for (const auto& name : names) {
    const Asset& asset = project.dag->asset(name);
    const PartitionConfig* config = asset.partitioning();
    json entry;
    entry["asset"] = name;
    if (config == nullptr) {
      auto latest = store->latest(asset.dataset(), nullptr);
      entry["window"] = nullptr;
      entry["state"] = !latest                                                 ? "missing"
                       : latest->status == MaterializationStatus::materialized ? "materialized"
                                                                               : "failed";
      const bool failed = latest && latest->status == MaterializationStatus::failed;
      if (failed) entry["error"] = latest->error;
      out.push_back(entry);
      if (!args.json) {
        std::cout << fmt::format("{}  (unpartitioned)  {}{}\n", name,
                                 entry["state"].get<std::string>(),
                                 failed ? ": " + error_excerpt(latest->error) : "");
      }
      continue;
    }
    std::unique_ptr<PartitionWindow> window;
    if (!args.window.empty()) {
      try {
        window = own_window(*config, args.window);
      } catch (const std::exception& e) {
        if (!args.assets.empty()) {
          throw UsageError(
              fmt::format("asset '{}': bad window '{}': {}", name, args.window, e.what()));
        }
        continue;  // another kind or granularity: not this asset's window
      }
      any_window_accepted = true;
    } else {
      // From the start (or the last 30 periods) to now for time, every value for a list.
      window = config->default_window(now, 30);
      if (!window) {
        throw UsageError(
            fmt::format("asset '{}': {} partitioning has no default window; pass --window", name,
                        config->kind()));
      }
    }
    WindowStatus status = store->status(asset.dataset(), *window);
    entry["window"] = window->to_string();
    entry["partitions"] = window->size();
    entry["materialized"] = ranges_json(*window, status.materialized);
    entry["failed"] = ranges_json(*window, status.failed);
    entry["missing"] = ranges_json(*window, status.missing);
    // Failed stretches with their errors: all of them in JSON, the first ones in text.
    constexpr std::size_t kShownFailures = 5;
    const bool every_failure = args.json || args.all;
    std::vector<FailedRange> failures =
        store->failures(asset.dataset(), *window, every_failure ? SIZE_MAX : kShownFailures + 1);
    const bool more_failures = !every_failure && failures.size() > kShownFailures;
    if (more_failures) failures.resize(kShownFailures);
    json failures_json = json::array();
    for (const FailedRange& f : failures) {
      failures_json.push_back({{"partitions", ranges_json(*window, {f.range})[0]},
                               {"run_id", f.record.run_id},
                               {"finished", f.record.finished.to_string()},
                               {"error", f.record.error}});
    }
    entry["failures"] = failures_json;
    std::vector<PartitionRange> gone;
    if (args.verify) {
      gone = gone_partitions(*project.dag, asset, *window, status.materialized);
      entry["gone"] = ranges_json(*window, gone);
      any_gone = any_gone || !gone.empty();
    }
    out.push_back(entry);
    if (args.json) continue;
    // The first ranges of each state, unless --all: a long history has thousands of them.
    constexpr std::size_t kShownRanges = 5;
    auto list = [&args](const json& ranges) {
      std::string s;
      std::size_t shown = 0;
      for (const auto& r : ranges) {
        if (!args.all && shown == kShownRanges) {
          s += fmt::format(", ... {} more ranges (--all lists them)", ranges.size() - shown);
          break;
        }
        s += (s.empty() ? "" : ", ") + r.get<std::string>();
        ++shown;
      }
      return s.empty() ? std::string("-") : s;
    };
    std::cout << fmt::format("{}  {}  ({} partition{})\n", name, window->to_string(),
                             window->size(), window->size() == 1 ? "" : "s");
    std::cout << fmt::format("  materialized {:>6}  {}\n", status.count(status.materialized),
                             list(entry["materialized"]));
    std::cout << fmt::format("  failed       {:>6}  {}\n", status.count(status.failed),
                             list(entry["failed"]));
    for (const auto& f : failures_json) {
      std::cout << fmt::format("    {}  {}\n", f["partitions"].get<std::string>(),
                               error_excerpt(f["error"].get<std::string>()));
    }
    if (more_failures) std::cout << "    ... more failures (--all or --json shows every one)\n";
    std::cout << fmt::format("  missing      {:>6}  {}\n", status.count(status.missing),
                             list(entry["missing"]));
    if (args.verify) {
      std::cout << fmt::format("  gone         {:>6}  {}\n", status.count(gone),
                               list(entry["gone"]));
    }
    if (terminal) std::cout << "  " << strip(*window, status, terminal_width() - 4) << "\n";
  }
  if (!any_window_accepted) {
    throw UsageError(fmt::format("no asset accepts window '{}'", args.window));
  }
  if (args.json) std::cout << dump(out) << "\n";
  if (any_gone) {
    print_error(args, "some partitions recorded as materialized are gone from the destination");
    return kRunFailed;
  }
  return kOk;
}

int run_runs(const Project& project, const Args& args) {
  auto store = open_state_store(project.store_path, false);
  const std::vector<RunRecord> runs =
      store->runs(history_name(args), static_cast<std::size_t>(args.last));
  if (args.json) {
    json out = json::array();
    for (const RunRecord& r : runs) out.push_back(run_json(r));
    std::cout << dump(out) << "\n";
    return kOk;
  }
  if (runs.empty()) std::cout << "no runs recorded\n";
  for (const RunRecord& r : runs) {
    std::cout << fmt::format("{}  {}  {}  {}  {} partitions: {} ok, {} failed, {} skipped  ({}s)\n",
                             r.run_id, run_state_name(r.state), r.started.to_string(),
                             r.window.empty() ? "-" : r.window, r.partitions, r.succeeded, r.failed,
                             r.skipped, (r.finished.seconds() - r.started.seconds()).count());
    std::cout << "    " << r.command_line << "\n";
  }
  return kOk;
}

int run_catalog(const Project& project, const Args&) {
  if (project.pipeline != nullptr) {
    std::cout << project.pipeline->catalog(true) << "\n";
    return kOk;
  }
  json out = json::array();
  for (const Asset* asset : project.dag->order()) {
    json entry;
    entry["name"] = asset->name();
    entry["source"] = asset->source_name();
    entry["deps"] = asset->deps();
    entry["enabled"] = asset->enabled();
    entry["body"] = "code";
    entry["partitioning"] = asset->partitioning() != nullptr
                                ? json::parse(asset->partitioning()->to_definition())
                                : json(nullptr);
    Destination* destination = project.dag->destination_of(*asset);
    entry["destination"] = destination != nullptr ? json(destination->url()) : json(nullptr);
    std::optional<Schema> schema =
        destination != nullptr ? destination->schema(asset->dataset()) : std::nullopt;
    entry["schema"] = schema ? json::parse(schema_to_json(*schema)) : json(nullptr);
    out.push_back(entry);
  }
  std::cout << dump(out, 2) << "\n";
  return kOk;
}

int run_jobs(const Project& project, const Args& args) {
  return jobs_command(project.pipeline->jobs(), args.at, args.count, args.json);
}

int run_scheduler(const Project& project, const Args& args) {
  ScheduleArgs s;
  s.store_path = project.store_path;
  s.catch_up = args.catch_up;
  s.once = args.once;
  s.now = args.now;
  s.concurrency = args.concurrency;
  s.json = args.json;
  s.quiet = args.quiet;
  s.verbose = args.verbose;
  return schedule_command(*project.dag, project.pipeline->jobs(), s);
}

// ---------------------------------------------------------------------------------------
// The command-line structure

constexpr const char* kMainFooter = R"(Examples:
  interloper check pipeline.yaml
  interloper materialize pipeline.yaml --partition 2026-11-03
  interloper backfill pipeline.yaml --window 2026-11-01..2026-11-30 --concurrency 4
  interloper backfill pipeline.yaml --window 2026-11-01..2026-11-30 --missing
  interloper status pipeline.yaml --window 2026-11-01..2026-11-30
  interloper catalog pipeline.yaml
  interloper jobs pipeline.yaml --count 3
  interloper schedule pipeline.yaml --catch-up 2

Exit codes: 0 success, 1 a run failed, 2 bad input (usage, pipeline file, keys, windows),
130/143 a run stopped by SIGINT/SIGTERM.
Global flags (--json, --quiet, --verbose) may follow the command.)";

constexpr const char* kInterruptHelp =
    "--fail-fast: after the first failure nothing new starts; what already runs finishes and\n"
    "is recorded; the rest is canceled.\n"
    "Ctrl-C (SIGINT) or SIGTERM: nothing new starts, running commands get SIGTERM and, 3s\n"
    "later, SIGKILL (a second Ctrl-C: at once); their partitions are recorded as failed\n"
    "(\"interrupted\"), the summary is printed, exit 130 (SIGINT) or 143 (SIGTERM). A C++\n"
    "asset cannot be stopped: the process exits 2s after the SIGKILL if one still runs.\n\n";

// The DAG with `destination` given to every source (and loose asset) that has none.
std::unique_ptr<DAG> with_default_destination(const DAG& dag,
                                              const std::shared_ptr<Destination>& destination) {
  std::vector<Source> sources;
  for (const Source& source : dag.sources()) {
    Source copy(source.name(), source.destination() ? source.destination() : destination);
    for (const Asset& asset : source.assets()) copy.add(asset);
    sources.push_back(std::move(copy));
  }
  std::vector<Asset> loose;
  for (const Asset* asset : dag.order()) {
    bool in_source = false;
    for (const Source& source : dag.sources()) {
      for (const Asset& a : source.assets()) in_source = in_source || &a == asset;
    }
    if (in_source) continue;
    Asset copy = *asset;
    if (!copy.destination()) copy.destination(destination);
    loose.push_back(std::move(copy));
  }
  return std::make_unique<DAG>(std::move(sources), std::move(loose));
}

// A whole number of at least `min`, checked with a message a person reads ("--concurrency:
// must be a whole number of at least 1, not '0'") instead of CLI11's range text.
CLI::Validator whole_number(long long min, const std::string& name) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec == std::errc::result_out_of_range) return fmt::format("'{}' is too large", text);
        if (ec != std::errc() || ptr != end || value < min) {
          return fmt::format("must be a whole number of at least {}, not '{}'", min, text);
        }
        if (value > std::numeric_limits<int>::max()) return fmt::format("'{}' is too large", text);
        return "";
      },
      name);
}

struct Command {
  std::string name;
  std::function<int(const Project&, const Args&)> run;
};

int run_cli(int argc, char** argv, const DAG* code_dag) {
  Args args;
  const bool yaml = code_dag == nullptr;
  std::string program =
      yaml ? "interloper" : fs::path(argc > 0 ? argv[0] : "app").filename().string();
  args.program = program;
  CLI::App app(yaml ? "interloper: run data assets declared in a YAML pipeline, partition by "
                      "partition."
                    : program + ": run this program's data assets, partition by partition.",
               program);
  std::string footer = kMainFooter;
  if (!yaml) {
    std::string pattern = "interloper ";
    for (std::size_t at; (at = footer.find(" pipeline.yaml")) != std::string::npos;) {
      footer.erase(at, 14);
    }
    for (std::size_t at = 0; (at = footer.find(pattern, at)) != std::string::npos;) {
      footer.replace(at, pattern.size(), program + " ");
      at += program.size() + 1;
    }
  }
  app.footer(footer);
  app.require_subcommand(1);
  app.fallthrough();
  app.set_version_flag("--version", std::string("interloper ") + kVersion);
  app.add_flag("--json", args.json,
               "Print machine-readable output: events as JSON lines, plans "
               "and status as JSON");
  auto* quiet = app.add_flag("-q,--quiet", args.quiet, "Print only errors");
  app.add_flag("-v,--verbose", args.verbose, "Also print the assets' log lines (command stderr)")
      ->excludes(quiet);

  std::string selected;
  auto add_common = [&](CLI::App* sub) {
    sub->fallthrough();
    if (yaml) {
      sub->add_option("pipeline", args.pipeline, "The pipeline file (YAML)")
          ->required()
          ->type_name("PIPELINE");
    } else {
      sub->add_option("--store", args.store, "The materialization store (SQLite file)")
          ->default_str(".interloper/state.db")
          ->type_name("PATH");
      sub->add_option("--destination", args.destination,
                      "Destination URL for assets whose source sets none "
                      "(sqlite:///path.db, file:///dir?format=csv)")
          ->type_name("URL");
    }
    sub->add_option("--asset", args.assets,
                    "Only these assets (each must accept the window); NAME+ adds what reads it, "
                    "+NAME what it reads")
        ->type_name("NAME");
  };
  auto add_partition = [&](CLI::App* sub, bool lookback) {
    auto* partition = sub->add_option("--partition", args.partition,
                                      "One partition by key: 2026-11-03, 2026-11, eu")
                          ->type_name("KEY");
    auto* window = sub->add_option("--window", args.window,
                                   "A window of partitions, both ends inclusive: "
                                   "2026-11-01..2026-11-30 or eu..us")
                       ->type_name("A..B");
    partition->excludes(window);
    if (lookback) {
      auto* lb = sub->add_option("--lookback", args.lookback,
                                 "The last N partitions, ending --offset partitions before the "
                                 "current one")
                     ->type_name("N")
                     ->check(whole_number(1, "POSITIVE"));
      sub->add_option("--offset", args.offset, "Partitions to skip back from the current one")
          ->type_name("K")
          ->check(whole_number(0, "NONNEGATIVE"))
          ->needs(lb);
      sub->add_option("--time-zone", args.time_zone, "Calendar of --lookback (IANA name)")
          ->type_name("ZONE")
          ->default_str("UTC")
          ->needs(lb);
      lb->excludes(partition)->excludes(window);
    }
  };
  std::string target = yaml ? " PIPELINE" : "";

  auto* materialize = app.add_subcommand("materialize",
                                         "Run the assets once over a partition "
                                         "or window");
  add_common(materialize);
  add_partition(materialize, true);
  materialize->add_option("--workers", args.workers, "Assets run at once")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("4");
  materialize->add_flag("--dry-run", args.dry_run, "Print the plan without running");
  materialize->add_flag("--fail-fast", args.fail_fast,
                        "After the first failure start no other asset (running ones finish)");
  auto add_keep_runs = [&](CLI::App* sub) {
    sub->add_option("--keep-runs", args.keep_runs,
                    "Runs of this pipeline the run history keeps (oldest dropped)")
        ->type_name("N")
        ->check(whole_number(1, "POSITIVE"))
        ->default_str("1000");
  };
  add_keep_runs(materialize);
  materialize->footer(fmt::format(
      "A window is one task per asset over its own partitions overlapping the window: every\n"
      "asset with several of them must allow windows.\n"
      "Without --asset, the assets whose partitioning accepts the window run (unpartitioned\n"
      "ones only without a window); the others are named in an info line.\n\n"
      "{2}"
      "Examples:\n  {0} materialize{1} --partition 2026-11-03\n"
      "  {0} materialize{1} --window eu..us --asset region_targets\n"
      "  {0} materialize{1} --lookback 3 --offset 1 --time-zone Europe/Paris\n"
      "  {0} materialize{1}                      (unpartitioned assets)",
      program, yaml ? " pipeline.yaml" : "", kInterruptHelp));

  auto* backfill_cmd = app.add_subcommand("backfill",
                                          "Run a window asset by asset and partition "
                                          "by partition, newest first");
  add_common(backfill_cmd);
  backfill_cmd->add_option("--window", args.window, "The window: 2026-11-01..2026-11-30")
      ->type_name("A..B")
      ->required();
  backfill_cmd->add_option("--concurrency", args.concurrency, "Tasks run at once")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("1");
  backfill_cmd->add_flag("--missing", args.missing,
                         "Skip what the store records as materialized and up to date (resume)");
  backfill_cmd->add_flag("--dry-run", args.dry_run, "Print the plan without running");
  backfill_cmd->add_flag("--fail-fast", args.fail_fast,
                         "After the first failed task start no other task (running ones finish)");
  backfill_cmd
      ->add_option("--claim-lease", args.claim_lease,
                   "Seconds a claim on a running partition lasts unless renewed")
      ->type_name("SECONDS")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("60");
  add_keep_runs(backfill_cmd);
  auto* queue_url = backfill_cmd
                        ->add_option("--queue", args.queue.url,
                                     "Enqueue the tasks in this PostgreSQL queue for workers "
                                     "instead of running them")
                        ->type_name("URL");
  backfill_cmd->add_flag("--wait", args.queue.wait, "With --queue: follow it until it ends")
      ->needs(queue_url);
  backfill_cmd
      ->add_option("--max-attempts", args.queue.max_attempts,
                   "With --queue: runs of a task before it fails")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->default_str("3")
      ->needs(queue_url);
  backfill_cmd->footer(
      fmt::format("Each asset x partition is one task; each asset runs over its own partitions\n"
                  "overlapping the window (hours, days, months...). A failed task cancels only\n"
                  "the tasks reading it. --missing reruns what is absent or failed, and what\n"
                  "reads it.\n\n"
                  "Before a task runs it is claimed in the store. Tasks another backfill is\n"
                  "running are skipped, not waited for, with the tasks reading them (counted as\n"
                  "\"claimed\" in the summary); a run that dies leaves claims that lapse after\n"
                  "the lease.\n\n"
                  "{2}"
                  "Examples:\n  {0} backfill{1} --window 2026-11-01..2026-11-30 --concurrency 4\n"
                  "  {0} backfill{1} --window 2026-11-01..2026-11-30 --missing",
                  program, yaml ? " pipeline.yaml" : "", kInterruptHelp));

  auto* status = app.add_subcommand("status",
                                    "Show materialized, failed and missing "
                                    "partitions");
  add_common(status);
  status->add_option("--window", args.window, "The window to report (default: see below)")
      ->type_name("A..B");
  status->add_flag("--all", args.all,
                   "List every range of each state (the text output shows the first five)");
  status->add_flag("--verify", args.verify,
                   "Check that partitions recorded as materialized are in the destination; "
                   "exit 1 if some are gone");
  status->footer(fmt::format(
      "Without --window: time assets from their start (or the last 30 periods) to the\n"
      "current period, list assets over every value. --json prints one object per asset.\n\n"
      "Examples:\n  {0} status{1} --window 2026-11-01..2026-11-30\n  {0} --json status{1}",
      program, yaml ? " pipeline.yaml" : ""));

  auto* status_queue =
      status->add_option("--queue", args.queue.url, "Show the backfills of this queue instead")
          ->type_name("URL");
  status->add_option("--backfill", args.queue.backfill, "With --queue: only this backfill")
      ->type_name("ID")
      ->needs(status_queue);

  auto* worker = app.add_subcommand("worker", "Claim and run backfill tasks from a queue");
  add_common(worker);
  // A worker runs whatever its pipeline's backfills hold; assets are chosen when enqueueing.
  worker->remove_option(worker->get_option("--asset"));
  worker->add_option("--queue", args.queue.url, "The PostgreSQL queue")->required()->type_name("URL");
  worker->add_option("--concurrency", args.queue.concurrency, "Tasks run at once")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->default_str("1");
  worker->add_option("--lease", args.queue.lease, "How long a claim lasts unless renewed")
      ->type_name("DURATION")
      ->default_str("30s");
  worker->add_flag("--exit-when-idle", args.queue.exit_when_idle,
                   "Exit once no task of the pipeline is queued or running");
  worker->footer(
      "SIGTERM or SIGINT: claim nothing more, finish the running tasks, exit 0. A second\n"
      "signal ends the worker at once; its tasks run again once their leases expire.\n"
      "Exit 2 when the queue's backfills were enqueued from another version of the pipeline.");

  auto* cancel = app.add_subcommand("cancel", "Cancel the tasks of a queued backfill not started");
  cancel->fallthrough();
  cancel->add_option("--queue", args.queue.url, "The PostgreSQL queue")->required()->type_name("URL");
  cancel->add_option("backfill", args.queue.backfill, "The backfill's id")
      ->required()
      ->type_name("ID");

  auto* catalog = app.add_subcommand("catalog", "Print every asset's definition as JSON");
  catalog->fallthrough();
  if (yaml) {
    catalog->add_option("pipeline", args.pipeline, "The pipeline file (YAML)")
        ->required()
        ->type_name("PIPELINE");
  } else {
    catalog
        ->add_option("--destination", args.destination,
                     "Destination URL for assets whose source sets none")
        ->type_name("URL");
  }
  catalog->footer(fmt::format("Example:\n  {0} catalog{1}", program, yaml ? " pipeline.yaml" : ""));

  auto* runs_cmd = app.add_subcommand("runs", "Show the latest runs from the run history");
  runs_cmd->fallthrough();
  if (yaml) {
    runs_cmd->add_option("pipeline", args.pipeline, "The pipeline file (YAML)")
        ->required()
        ->type_name("PIPELINE");
  } else {
    runs_cmd->add_option("--store", args.store, "The materialization store (SQLite file)")
        ->default_str(".interloper/state.db")
        ->type_name("PATH");
  }
  runs_cmd->add_option("--last", args.last, "How many runs, newest first")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("20");
  runs_cmd->footer(fmt::format(
      "Every materialize and backfill is recorded when it starts and when it ends; a run\n"
      "stopped by SIGINT or SIGTERM ends as interrupted, and one still shown as running\n"
      "either runs or was killed outright. The store keeps the newest --keep-runs runs\n"
      "(1000 unless a run says otherwise).\n\n"
      "Examples:\n  {0} runs{1}\n  {0} --json runs{1} --last 5",
      program, yaml ? " pipeline.yaml" : ""));

  auto* check = app.add_subcommand("check", "Validate and print the plan without running");
  add_common(check);
  add_partition(check, false);
  check->footer(
      fmt::format("Examples:\n  {0} check{1}\n  {0} check{1} --window "
                  "2026-11-01..2026-11-30 --json",
                  program, yaml ? " pipeline.yaml" : ""));

  if (yaml) {
    auto* jobs = app.add_subcommand("jobs", "List the next fires of the pipeline's jobs");
    jobs->fallthrough();
    jobs->add_option("pipeline", args.pipeline, "The pipeline file (YAML)")
        ->required()
        ->type_name("PIPELINE");
    jobs->add_option("--at", args.at, "Fires after this instant (default: now)")
        ->type_name("INSTANT");
    jobs->add_option("--count", args.count, "Fires per job")
        ->type_name("N")
        ->check(whole_number(1, "POSITIVE"))
        ->default_str("5");
    jobs->footer(
        "INSTANT is RFC 3339 with an offset or Z. Each line names the job, the fire on the\n"
        "job's wall clock and in UTC, and the window it runs; --json prints one object per\n"
        "fire, with \"window\": null when the assets' start leaves nothing to run.\n\n"
        "Examples:\n  interloper jobs pipeline.yaml --count 3\n"
        "  interloper --json jobs pipeline.yaml --at 2026-03-28T12:00:00Z");

    auto* schedule = app.add_subcommand("schedule", "Run the pipeline's jobs at their fires");
    schedule->fallthrough();
    schedule->add_option("pipeline", args.pipeline, "The pipeline file (YAML)")
        ->required()
        ->type_name("PIPELINE");
    schedule
        ->add_option("--catch-up", args.catch_up,
                     "At start, run at most the last N fires missed since the last one")
        ->type_name("N")
        ->check(whole_number(0, "NONNEGATIVE"))
        ->default_str("0");
    auto* once =
        schedule->add_flag("--once", args.once, "Run what is due now (or at --now) and exit");
    schedule->add_option("--now", args.now, "With --once: the instant to evaluate")
        ->type_name("INSTANT")
        ->needs(once);
    schedule->add_option("--concurrency", args.concurrency, "Partitions run at once")
        ->type_name("N")
        ->check(whole_number(1, "POSITIVE"))
        ->default_str("1");
    schedule->footer(
        "Every fire is recorded in the store (table schedule_fires) before it runs, so a\n"
        "restarted scheduler, or a second one on the same store, never runs it again.\n"
        "SIGTERM stops the scheduler between fires. Exit 1 when a fire failed.\n\n"
        "Examples:\n  interloper schedule pipeline.yaml --catch-up 2\n"
        "  interloper schedule pipeline.yaml --once --now 2026-03-29T01:00:00Z");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error(args, e.what());
    return kBadInput;
  }

  for (int i = 1; i < argc; ++i) args.command_line += (i > 1 ? " " : "") + std::string(argv[i]);

  std::vector<Command> commands = {{"materialize", run_materialize},
                                   {"backfill", run_backfill},
                                   {"status", run_status},
                                   {"runs", run_runs},
                                   {"catalog", run_catalog},
                                   {"check", run_check},
                                   {"jobs", run_jobs},
                                   {"schedule", run_scheduler},
                                   {"worker", run_worker}};
  // cancel needs no pipeline: it names the backfill in the queue.
  if (app.got_subcommand("cancel")) {
    try {
      return queue_cancel(args.queue, args.quiet);
    } catch (const UsageError& e) {
      print_error(args, e.what());
      return kBadInput;
    } catch (const std::exception& e) {
      print_error(args, e.what());
      return kRunFailed;
    }
  }
  // The exit code says what went wrong. Everything the project is built from (the pipeline
  // file, --destination) is input: any failure there exits 2. Once a command runs, a failed
  // run, a destination or store that cannot be read or written, or anything unexpected exits
  // 1; only the errors that judge the command's own input (usage, keys, windows, validation)
  // exit 2.
  std::optional<Pipeline> pipeline;
  std::unique_ptr<DAG> rebuilt;
  Project project;
  try {
    if (yaml) {
      pipeline.emplace(Pipeline::load(args.pipeline));
      project.pipeline = &*pipeline;
      project.dag = &pipeline->dag();
      project.store_path = pipeline->store_path();
    } else {
      project.dag = code_dag;
      if (!args.destination.empty()) {
        rebuilt = with_default_destination(*code_dag, open_destination(args.destination));
        project.dag = rebuilt.get();
      }
      project.store_path = args.store.empty() ? ".interloper/state.db" : args.store;
    }
  } catch (const std::exception& e) {
    print_error(args, e.what());
    return kBadInput;
  }
  try {
    args.assets = expand_selectors(*project.dag, args.assets);
    for (const auto& command : commands) {
      if (app.got_subcommand(command.name)) return command.run(project, args);
    }
    return kBadInput;
  } catch (const UsageError& e) {
    print_error(args, e.what());
    return kBadInput;
  } catch (const PartitionError& e) {
    print_error(args, e.what());
    return kBadInput;
  } catch (const PipelineError& e) {
    print_error(args, e.what());
    return kBadInput;
  } catch (const DagError& e) {
    print_error(args, e.what());
    return kBadInput;
  } catch (const std::invalid_argument& e) {
    print_error(args, e.what());
    return kBadInput;
  } catch (const std::exception& e) {
    print_error(args, e.what());
    return kRunFailed;
  }
}

}  // namespace

int main(int argc, char** argv, const DAG& dag) { return run_cli(argc, argv, &dag); }

int main(int argc, char** argv) { return run_cli(argc, argv, nullptr); }

}  // namespace interloper::cli
