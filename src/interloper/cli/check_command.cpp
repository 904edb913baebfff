// `interloper check` and the plans that check and --dry-run print.
#include "interloper/cli/cli_internal.hpp"

namespace interloper::cli::detail {

// ---------------------------------------------------------------------------------------
// Plans (check, --dry-run)

namespace {

// A check or --dry-run's plan: per asset its share of the window and its task count, never one
// element per partition. Points into the selection and the project it was made from.
struct PlanReport {
  struct Step {
    const Asset* asset = nullptr;
    const AssetDefinition* definition = nullptr;  // nullptr for an asset built in code
    std::vector<std::string> windows;             // its share of the window, as ranges
    std::size_t tasks = 0;
    std::size_t up_to_date = 0;  // of its tasks, skipped by --missing
  };
  std::string command;
  const PartitionWindow* window = nullptr;  // nullptr: a run without a window
  bool backfill = false;                    // one task per asset and partition, newest first
  std::size_t tasks = 0;
  bool missing = false;  // --missing: tasks up to date are skipped
  std::size_t up_to_date = 0;
  std::vector<Step> steps;  // in the order they run
  const std::vector<std::pair<std::string, std::string>>* left_out = nullptr;
  std::string materialize_refuses;  // check: why materialize refuses a window backfill runs
};

// The plan of a selection, or of every asset of the DAG when `whole` (the selection's assets are
// then not read); none when there is nothing to plan. With `missing`, the tasks `missing`
// records as up to date are skipped, as backfill --missing skips them.
std::optional<Plan> plan_of(const Project& project, const Selection& selection, bool backfill,
                            bool whole, MaterializationStore* missing = nullptr) {
  PlanOptions options;
  options.scope = backfill ? TaskScope::per_partition : TaskScope::per_asset;
  if (!whole) options.assets = selection.assets;
  options.missing_only = missing != nullptr;
  options.store = missing;
  try {
    if (whole || !selection.assets.empty()) {
      return interloper::plan(*project.dag, selection.window.get(), options);
    }
  } catch (const PartitionError&) {
    // `check` of the whole DAG without a window: partitioned assets have no tasks to plan.
    if (selection.window) throw;
  }
  return std::nullopt;
}

PlanReport plan_report(const std::string& command, const Project& project,
                       const Selection& selection, bool backfill, bool whole = false,
                       MaterializationStore* missing = nullptr) {
  PlanReport report;
  report.command = command;
  report.window = selection.window.get();
  report.backfill = backfill;
  report.left_out = &selection.left_out;
  const std::optional<Plan> planned = plan_of(project, selection, backfill, whole, missing);
  report.tasks = planned ? planned->size() : 0;
  report.missing = missing != nullptr;
  report.up_to_date = planned ? planned->skipped() : 0;
  std::unordered_map<std::string_view, const Plan::Step*> step_of;  // asset name -> its step
  if (planned) {
    for (const Plan::Step& step : planned->steps()) step_of.emplace(step.asset->name(), &step);
  }
  for (const auto& name : selection.assets) {
    PlanReport::Step step;
    step.asset = &project.dag->asset(name);
    if (project.pipeline != nullptr) step.definition = project.pipeline->definition(name);
    if (auto it = step_of.find(name); it != step_of.end()) {
      step.tasks = it->second->tasks;
      for (const PartitionRange& r : it->second->skipped) step.up_to_date += r.last - r.first + 1;
      if (it->second->share) step.windows.push_back(it->second->share->to_string());
    }
    report.steps.push_back(std::move(step));
  }
  return report;
}

json plan_json(const PlanReport& report) {
  json plan;
  plan["command"] = report.command;
  plan["window"] = report.window ? json(report.window->to_string()) : json(nullptr);
  plan["partitions"] = report.window ? report.window->size() : 0;
  plan["tasks"] = report.tasks;
  if (report.missing) {
    plan["to_run"] = report.tasks - report.up_to_date;
    plan["up_to_date"] = report.up_to_date;
  }
  plan["order"] = report.backfill ? "newest first" : "upstream first";
  if (!report.materialize_refuses.empty()) plan["materialize_refuses"] = report.materialize_refuses;
  json assets = json::array();
  for (const PlanReport::Step& step : report.steps) {
    json entry;
    entry["name"] = step.asset->name();
    entry["source"] = step.asset->source_name();
    entry["deps"] = step.asset->deps();
    entry["partitioning"] = describe_partitioning(step.asset->partitioning());
    if (step.definition != nullptr) entry["body"] = step.definition->body;
    entry["windows"] = step.windows;
    entry["tasks"] = step.tasks;
    if (report.missing) entry["up_to_date"] = step.up_to_date;
    assets.push_back(entry);
  }
  plan["assets"] = assets;
  json left_out = json::array();
  for (const auto& [name, reason] : *report.left_out) {
    left_out.push_back({{"asset", name}, {"reason", reason}});
  }
  plan["left_out"] = left_out;
  return plan;
}

// Whether some selected time asset splits the time window `window` into partitions other than
// its own (a year read by daily assets), so that the window's own count would mislead.
bool read_in_other_partitions(const PlanReport& report, const PartitionWindow& window) {
  const auto time = window.as_time_window();
  if (!time) return false;
  for (const PlanReport::Step& step : report.steps) {
    const PartitionConfig* config = step.asset->partitioning();
    const std::optional<TimeAxis> axis = config != nullptr ? config->time_axis() : std::nullopt;
    if (axis && !(axis->granularity == time->granularity())) return true;
  }
  return false;
}

void print_plan(const PlanReport& report) {
  const std::size_t partitions = report.window ? report.window->size() : 0;
  std::cout << "window: " << (report.window ? report.window->to_string() : "(none)");
  if (partitions > 0 && read_in_other_partitions(report, *report.window)) {
    std::cout << " (each asset reads it in its own partitions, below)";
  } else if (partitions > 0) {
    std::cout << " (" << partitions << " partition" << (partitions == 1 ? "" : "s") << ")";
  }
  std::cout << "\n";
  if (report.missing) {
    std::cout << fmt::format("tasks: {} to run, {} of {} up to date (--missing), newest first\n",
                             report.tasks - report.up_to_date, report.up_to_date, report.tasks);
  } else if (report.backfill) {
    std::cout << "tasks: " << report.tasks << ", one per asset and partition, newest first\n";
  } else {
    std::cout << "tasks: " << report.tasks << ", one per asset\n";
  }
  std::cout << "assets, in order:\n";
  int i = 0;
  for (const PlanReport::Step& step : report.steps) {
    const std::vector<std::string>& deps = step.asset->deps();
    const std::size_t n = step.tasks;
    std::cout << fmt::format(
        "  {}. {}  [{}{}]{}  {}{} task{}{}\n", ++i, step.asset->name(),
        describe_partitioning(step.asset->partitioning()),
        step.definition != nullptr ? ", " + step.definition->body : "",
        deps.empty() ? "" : "  after " + fmt::format("{}", fmt::join(deps, ", ")),
        step.windows.empty() ? "" : fmt::format("{}", fmt::join(step.windows, ", ")) + "  ", n,
        n == 1 ? "" : "s",
        report.missing ? fmt::format(", {} up to date", step.up_to_date) : std::string());
  }
  for (const auto& [name, reason] : *report.left_out) {
    std::cout << fmt::format("  left out: {} ({})\n", name, reason);
  }
}

// The plan as JSON or as text.
void show_plan(const PlanReport& report, const Args& args) {
  if (args.json) {
    std::cout << dump(plan_json(report)) << "\n";
  } else {
    print_plan(report);
  }
}

}  // namespace

namespace {

// A word of a command line as a shell reads it: quoted when it holds anything but plain
// characters.
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::strchr("_-./:=+@%,", c) != nullptr;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The command that runs `assets` without a window, for a person to copy.
std::string refresh_command(const Args& args, const std::vector<std::string>& assets) {
  std::string line = shell_word(args.program) + " materialize";
  if (!args.pipeline.empty()) line += " " + shell_word(args.pipeline);
  if (!args.store.empty()) line += " --store " + shell_word(args.store);
  for (const auto& name : assets) line += " --asset " + shell_word(name);
  return line;
}

}  // namespace

void report_left_out(const Args& args, const Selection& selection) {
  std::vector<std::string> parts;
  for (const auto& [name, reason] : selection.left_out) {
    parts.push_back(fmt::format("{} ({})", name, reason));
  }
  if (!selection.readings.empty()) print_info(args, selection.readings);
  std::string line;
  if (!parts.empty()) line = fmt::format("left out: {}", fmt::join(parts, ", "));
  const std::vector<std::string>& refresh = selection.refresh_after;
  if (!refresh.empty()) {
    const bool one = refresh.size() == 1;
    line += fmt::format("{}{} read{} what this run writes: refresh {} afterwards with {}",
                        line.empty() ? "" : "; ", fmt::join(refresh, ", "), one ? "s" : "",
                        one ? "it" : "them", refresh_command(args, refresh));
  }
  if (!line.empty()) print_info(args, line);
}

int each_reading(const Selection& selection, const std::function<int(const Selection&)>& run) {
  int code = run(selection);
  for (const Selection& other : selection.also) {
    if (code != kOk && code != kRunFailed) break;
    const int next = run(other);
    if (code == kOk) code = next;
  }
  return code;
}

// ---------------------------------------------------------------------------------------
// Commands

WindowArgument window_argument(const Project& project, const Args& args) {
  if (!args.partition.empty()) return WindowArgument::key(args.partition);
  if (!args.window.empty()) return WindowArgument::window(args.window);
  if (args.lookback > 0) {
    std::optional<TimePartitionWindow> window = lookback_window(
        *project.dag, args.assets, args.lookback, args.offset, args.time_zone, SystemClock().now());
    if (!window) throw UsageError("the lookback window lies entirely before the assets' start");
    return WindowArgument::from(std::move(*window));
  }
  return {};
}

int run_check(const Project& project, const Args& args) {
  const WindowArgument window = window_argument(project, args);
  // A quiet check plans, for what the plan refuses, and describes nothing.
  const bool shown = args.json || !args.quiet;
  if (window.empty() && args.assets.empty()) {
    // Without a scope, check the whole DAG: every asset, in order.
    // Its plan has no window, so it refuses nothing (partitioned assets have no tasks, the
    // others one each): loading the project was the check, and a quiet check ends there.
    if (!shown) return kOk;
    Selection all;
    for (const Asset* asset : project.dag->order()) all.assets.push_back(asset->name());
    const PlanReport report = plan_report("check", project, all, false, true);
    if (!args.json) std::cout << "ok: " << project.dag->size() << " assets\n";
    show_plan(report, args);
    return kOk;
  }
  // A window is read as backfill reads it; one materialize refuses (several partitions without
  // allow_window) is then planned as backfill runs it, and the first line says so.
  const Selection selection = select(*project.dag, window, args.assets, !window.empty());
  if (!selection.readings.empty()) print_info(args, selection.readings);
  return each_reading(selection, [&](const Selection& reading) {
    std::string refused;
    try {
      plan_of(project, reading, false, false);
    } catch (const PartitionError& e) {
      refused = e.what();
    }
    if (!shown) return kOk;
    const bool backfill = !refused.empty();
    PlanReport report = plan_report(backfill ? "backfill" : "check", project, reading, backfill);
    report.materialize_refuses = refused;
    if (!args.json) {
      std::cout << (backfill ? fmt::format("ok for backfill (materialize refuses this window: "
                                           "{})\n",
                                           one_line(refused))
                             : "ok\n");
    }
    show_plan(report, args);
    return kOk;
  });
}

// --dry-run: the plan, as JSON or as text.
int print_dry_run(const char* command, const Project& project, const Selection& selection,
                  bool per_partition, const Args& args) {
  std::shared_ptr<MaterializationStore> store;
  if (args.missing) store = open_state_store(project.store_path, false);
  return each_reading(selection, [&](const Selection& reading) {
    show_plan(plan_report(command, project, reading, per_partition, false, store.get()), args);
    return kOk;
  });
}

Command add_check(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("check", "Validate and print the plan without running");
  add_common(sub, args, program);
  add_window_options(sub, args, false);
  sub->footer(
      fmt::format("A window is planned as materialize runs it, one task per asset; a window\n"
                  "materialize refuses (several partitions of an asset without allow_window)\n"
                  "is planned as backfill runs it, one task per partition, and the first line\n"
                  "says so.\n\n"
                  "Examples:\n  {0} check{1}\n  {0} check{1} --window "
                  "2026-11-01..2026-11-30 --json",
                  program.name, program.target()));
  return {sub, run_check, nullptr};
}

}  // namespace interloper::cli::detail
