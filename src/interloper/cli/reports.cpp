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
  };
  std::string command;
  const PartitionWindow* window = nullptr;  // nullptr: a run without a window
  bool backfill = false;                    // one task per asset and partition, newest first
  std::size_t tasks = 0;
  std::vector<Step> steps;  // in the order they run
  const std::vector<std::pair<std::string, std::string>>* left_out = nullptr;
};

// The plan of a selection, or of every asset of the DAG when `whole` (the selection's assets are
// then not read); none when there is nothing to plan.
std::optional<Plan> plan_of(const Project& project, const Selection& selection, bool backfill,
                            bool whole) {
  PlanOptions options;
  options.scope = backfill ? TaskScope::per_partition : TaskScope::per_asset;
  if (!whole) options.assets = selection.assets;
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
                       const Selection& selection, bool backfill, bool whole = false) {
  PlanReport report;
  report.command = command;
  report.window = selection.window.get();
  report.backfill = backfill;
  report.left_out = &selection.left_out;
  const std::optional<Plan> planned = plan_of(project, selection, backfill, whole);
  report.tasks = planned ? planned->size() : 0;
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
  plan["order"] = report.backfill ? "newest first" : "upstream first";
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

void print_plan(const PlanReport& report) {
  const std::size_t partitions = report.window ? report.window->size() : 0;
  std::cout << "window: " << (report.window ? report.window->to_string() : "(none)");
  if (partitions > 0)
    std::cout << " (" << partitions << " partition" << (partitions == 1 ? "" : "s") << ")";
  std::cout << "\n";
  if (report.backfill) {
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
        "  {}. {}  [{}{}]{}  {}{} task{}\n", ++i, step.asset->name(),
        describe_partitioning(step.asset->partitioning()),
        step.definition != nullptr ? ", " + step.definition->body : "",
        deps.empty() ? "" : "  after " + fmt::format("{}", fmt::join(deps, ", ")),
        step.windows.empty() ? "" : fmt::format("{}", fmt::join(step.windows, ", ")) + "  ", n,
        n == 1 ? "" : "s");
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
  Selection selection = select(*project.dag, window, args.assets, false);
  if (!shown) {
    plan_of(project, selection, false, false);
    return kOk;
  }
  const PlanReport report = plan_report("check", project, selection, false);
  if (!args.json) std::cout << "ok\n";
  show_plan(report, args);
  return kOk;
}

// --dry-run: the plan, as JSON or as text.
int print_dry_run(const char* command, const Project& project, const Selection& selection,
                  bool per_partition, const Args& args) {
  show_plan(plan_report(command, project, selection, per_partition), args);
  return kOk;
}
namespace {

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

}  // namespace

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
      const std::string current = asset.definition_fingerprint();
      const bool stale = latest && latest->status == MaterializationStatus::materialized &&
                         !latest->definition.empty() && latest->definition != current;
      entry["state"] = !latest                                                 ? "missing"
                       : stale                                                 ? "stale"
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
    // Materialized by an older definition of the asset (among the materialized ones).
    const std::vector<PartitionRange> stale = status.stale(asset.definition_fingerprint());
    entry["stale"] = ranges_json(*window, stale);
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
    if (!stale.empty()) {
      std::cout << fmt::format("    stale      {:>6}  {}  (written by an older definition; "
                               "backfill --missing runs them again)\n",
                               status.count(stale), list(entry["stale"]));
    }
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

int run_catalog(const Project& project, const Args& args) {
  const std::vector<CatalogEntry> entries = catalog(*project.dag, project.pipeline, true);
  if (args.text) {
    std::cout << catalog_text(entries);
  } else {
    std::cout << catalog_json(entries) << "\n";
  }
  return kOk;
}

Command add_check(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("check", "Validate and print the plan without running");
  add_common(sub, args, program);
  add_window_options(sub, args, false);
  sub->footer(
      fmt::format("Examples:\n  {0} check{1}\n  {0} check{1} --window "
                  "2026-11-01..2026-11-30 --json",
                  program.name, program.target()));
  return {sub, run_check, nullptr};
}

Command add_status(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("status",
                                 "Show materialized, failed and missing "
                                 "partitions");
  add_common(sub, args, program);
  sub->add_option("--window", args.window, "The window to report (default: see below)")
      ->type_name("A..B");
  sub->add_flag("--all", args.all,
                "List every range of each state (the text output shows the first five)");
  sub->add_flag("--verify", args.verify,
                "Check that partitions recorded as materialized are in the destination; "
                "exit 1 if some are gone");
  sub->footer(fmt::format(
      "Without --window: time assets from their start (or the last 30 periods) to the\n"
      "current period, list assets over every value. --json prints one object per asset.\n\n"
      "Examples:\n  {0} status{1} --window 2026-11-01..2026-11-30\n  {0} --json status{1}",
      program.name, program.target()));
  auto* queue =
      sub->add_option("--queue", args.queue.url, "Show the backfills of this queue instead")
          ->type_name("URL");
  sub->add_option("--backfill", args.queue.backfill, "With --queue: only this backfill")
      ->type_name("ID")
      ->needs(queue);
  return {sub, run_status, nullptr};
}

Command add_runs(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("runs", "Show the latest runs from the run history");
  sub->fallthrough();
  if (program.yaml) {
    add_pipeline(sub, args);
  } else {
    add_store(sub, args);
  }
  sub->add_option("--last", args.last, "How many runs, newest first")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("20");
  sub->footer(fmt::format(
      "Every materialize and backfill is recorded when it starts and when it ends; a run\n"
      "stopped by SIGINT or SIGTERM ends as interrupted, and one still shown as running\n"
      "either runs or was killed outright. The store keeps the newest --keep-runs runs\n"
      "(1000 unless a run says otherwise).\n\n"
      "Examples:\n  {0} runs{1}\n  {0} --json runs{1} --last 5",
      program.name, program.target()));
  return {sub, run_runs, nullptr};
}

Command add_catalog(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("catalog", "Print every asset's definition as JSON");
  sub->fallthrough();
  if (program.yaml) {
    add_pipeline(sub, args);
  } else {
    sub->add_option("--destination", args.destination,
                    "Destination URL for assets whose source sets none")
        ->type_name("URL");
  }
  sub->add_flag("--text", args.text,
                "Print for people: a few lines per asset, one per stored column");
  sub->footer(fmt::format(
      "Each asset's stored schema is read from its destination. A partitioned dataset keeps\n"
      "every column it ever stored; \"retired_columns\" (marked \"retired\" with --text) names\n"
      "those its latest write did not produce, such as a column the asset renamed.\n\n"
      "Examples:\n  {0} catalog{1}\n  {0} catalog{1} --text",
      program.name, program.target()));
  return {sub, run_catalog, nullptr};
}

}  // namespace interloper::cli::detail
