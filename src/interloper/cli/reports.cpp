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

namespace {

// One asset's state over its window, as `status` prints it as text or JSON. Built once, from the
// store's ranges; the renderers only format it.
struct StatusReport {
  const Asset* asset = nullptr;
  // Unpartitioned assets: one state (missing, stale, materialized or failed) and its error.
  std::string state;
  std::string error;
  // Partitioned assets: the window and the ranges of each state in it.
  std::unique_ptr<PartitionWindow> window;
  WindowStatus status;
  std::vector<PartitionRange> stale;                // materialized by an older definition
  std::vector<FailedRange> failures;                // every one, or the first ones for text
  bool more_failures = false;                       // text only: failures beyond those kept
  std::optional<std::vector<PartitionRange>> gone;  // with --verify
};

constexpr std::size_t kShownFailures = 5;
constexpr std::size_t kShownRanges = 5;

StatusReport unpartitioned_status(MaterializationStore& store, const Asset& asset) {
  StatusReport report;
  report.asset = &asset;
  const auto latest = store.latest(asset.dataset(), nullptr);
  if (!latest) {
    report.state = "missing";
  } else if (latest->status == MaterializationStatus::failed) {
    report.state = "failed";
    report.error = latest->error;
  } else if (!latest->definition.empty() && latest->definition != asset.definition_fingerprint()) {
    report.state = "stale";
  } else {
    report.state = "materialized";
  }
  return report;
}

// The window `status` reports an asset over: --window if its partitioning accepts it (nullptr if
// not and no --asset named it), else from its start (or the last 30 periods) to now for time and
// every value for a list.
std::unique_ptr<PartitionWindow> status_window(const Asset& asset, const Args& args,
                                               TimePoint now) {
  const PartitionConfig& config = *asset.partitioning();
  if (args.window.empty()) {
    auto window = config.default_window(now, 30);
    if (!window) {
      throw UsageError(
          fmt::format("asset '{}': {} partitioning has no default window; pass --window",
                      asset.name(), config.kind()));
    }
    return window;
  }
  try {
    return own_window(config, args.window);
  } catch (const std::exception& e) {
    if (!args.assets.empty()) {
      throw UsageError(
          fmt::format("asset '{}': bad window '{}': {}", asset.name(), args.window, e.what()));
    }
    return nullptr;  // another kind or granularity: not this asset's window
  }
}

StatusReport partitioned_status(MaterializationStore& store, const DAG& dag, const Asset& asset,
                                std::unique_ptr<PartitionWindow> window, const Args& args) {
  StatusReport report;
  report.asset = &asset;
  report.window = std::move(window);
  const PartitionWindow& w = *report.window;
  report.status = store.status(asset.dataset(), w);
  report.stale = report.status.stale(asset.definition_fingerprint());
  const bool every_failure = args.json || args.all;
  report.failures =
      store.failures(asset.dataset(), w, every_failure ? SIZE_MAX : kShownFailures + 1);
  if (!every_failure && report.failures.size() > kShownFailures) {
    report.more_failures = true;
    report.failures.resize(kShownFailures);
  }
  if (args.verify) report.gone = gone_partitions(dag, asset, w, report.status.materialized);
  return report;
}

json status_json(const StatusReport& r) {
  json entry;
  entry["asset"] = r.asset->name();
  if (!r.window) {
    entry["window"] = nullptr;
    entry["state"] = r.state;
    if (r.state == "failed") entry["error"] = r.error;
    return entry;
  }
  const PartitionWindow& w = *r.window;
  entry["window"] = w.to_string();
  entry["partitions"] = w.size();
  entry["materialized"] = ranges_json(w, r.status.materialized);
  entry["failed"] = ranges_json(w, r.status.failed);
  entry["missing"] = ranges_json(w, r.status.missing);
  entry["stale"] = ranges_json(w, r.stale);
  json failures = json::array();
  for (const FailedRange& f : r.failures) {
    failures.push_back({{"partitions", ranges_json(w, {f.range})[0]},
                        {"run_id", f.record.run_id},
                        {"finished", f.record.finished.to_string()},
                        {"error", f.record.error}});
  }
  entry["failures"] = failures;
  if (r.gone) entry["gone"] = ranges_json(w, *r.gone);
  return entry;
}

// The first ranges as keys, unless --all: a long history has thousands of them.
std::string ranges_text(const PartitionWindow& window, const std::vector<PartitionRange>& ranges,
                        bool all) {
  const json keys = ranges_json(window, ranges);
  std::string s;
  std::size_t shown = 0;
  for (const auto& key : keys) {
    if (!all && shown == kShownRanges) {
      s += fmt::format(", ... {} more ranges (--all lists them)", keys.size() - shown);
      break;
    }
    s += (s.empty() ? "" : ", ") + key.get<std::string>();
    ++shown;
  }
  return s.empty() ? std::string("-") : s;
}

void print_status(const StatusReport& r, const Args& args, bool terminal) {
  const std::string& name = r.asset->name();
  if (!r.window) {
    std::cout << fmt::format("{}  (unpartitioned)  {}{}\n", name, r.state,
                             r.state == "failed" ? ": " + error_excerpt(r.error) : "");
    return;
  }
  const PartitionWindow& w = *r.window;
  const WindowStatus& status = r.status;
  auto line = [&](std::string_view label, const std::vector<PartitionRange>& ranges) {
    std::cout << fmt::format("  {:<12} {:>6}  {}\n", label, status.count(ranges),
                             ranges_text(w, ranges, args.all));
  };
  std::cout << fmt::format("{}  {}  ({} partition{})\n", name, w.to_string(), w.size(),
                           w.size() == 1 ? "" : "s");
  line("materialized", status.materialized);
  if (!r.stale.empty()) {
    std::cout << fmt::format(
        "    stale      {:>6}  {}  (written by an older definition; "
        "backfill --missing runs them again)\n",
        status.count(r.stale), ranges_text(w, r.stale, args.all));
  }
  line("failed", status.failed);
  for (const FailedRange& f : r.failures) {
    std::cout << fmt::format("    {}  {}\n", ranges_json(w, {f.range})[0].get<std::string>(),
                             error_excerpt(f.record.error));
  }
  if (r.more_failures) std::cout << "    ... more failures (--all or --json shows every one)\n";
  line("missing", status.missing);
  if (r.gone) line("gone", *r.gone);
  if (terminal) std::cout << "  " << strip(w, status, terminal_width() - 4) << "\n";
}

// The assets `status` reports on: --asset's, checked, or every asset in order.
std::vector<const Asset*> status_assets(const DAG& dag, const Args& args) {
  std::vector<const Asset*> assets;
  if (args.assets.empty()) return dag.order();
  for (const auto& name : args.assets) {
    const Asset* asset = dag.find(name);
    if (asset == nullptr) throw UsageError(fmt::format("unknown asset '{}'", name));
    assets.push_back(asset);
  }
  return assets;
}

}  // namespace

int run_status(const Project& project, const Args& args) {
  if (!args.queue.url.empty()) return queue_status(queue_project(project, args), args.queue);
  const std::vector<const Asset*> assets = status_assets(*project.dag, args);
  auto store = open_state_store(project.store_path, false);
  const TimePoint now = SystemClock().now();
  const bool terminal = !args.json && stdout_is_terminal();
  json out = json::array();
  bool any_window_accepted = args.window.empty();
  bool any_gone = false;
  for (const Asset* asset : assets) {
    StatusReport report;
    if (asset->partitioning() == nullptr) {
      report = unpartitioned_status(*store, *asset);
    } else {
      auto window = status_window(*asset, args, now);
      if (!window) continue;
      any_window_accepted = true;
      report = partitioned_status(*store, *project.dag, *asset, std::move(window), args);
      any_gone = any_gone || (report.gone && !report.gone->empty());
    }
    if (args.json) {
      out.push_back(status_json(report));
    } else {
      print_status(report, args, terminal);
    }
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
