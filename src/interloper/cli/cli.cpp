#include "interloper/cli.hpp"

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "interloper/cli/cli_internal.hpp"

namespace interloper::cli {
namespace {

using namespace detail;

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

  auto* reset = app.add_subcommand("reset", "Drop an asset's stored rows and records");
  add_common(reset);
  reset->remove_option(reset->get_option("--asset"));
  reset->add_option("asset", args.reset_asset, "The asset to drop")->required()->type_name("ASSET");
  reset
      ->add_option("--window", args.window,
                   "Only the partitions of this window (default: the whole dataset)")
      ->type_name("A..B");
  reset->add_flag("--yes", args.yes, "Do not ask for confirmation");
  reset->footer(fmt::format(
      "Without --window the whole dataset goes: its rows, its partitions and its schema, so\n"
      "its next write may change column types (what a partitioned asset needs when a type\n"
      "cannot widen). With --window only those partitions go. Either way the store forgets\n"
      "them, so they read as missing and `backfill --missing` builds them again. Asks on a\n"
      "terminal; without one, --yes is required (exit 2 otherwise).\n\n"
      "Examples:\n  {0} reset{1} events --window 2026-11-01..2026-11-30\n"
      "  {0} reset{1} events --yes",
      program, yaml ? " pipeline.yaml" : ""));

  auto* worker = app.add_subcommand("worker", "Claim and run backfill tasks from a queue");
  add_common(worker);
  // A worker runs whatever its pipeline's backfills hold; assets are chosen when enqueueing.
  worker->remove_option(worker->get_option("--asset"));
  worker->add_option("--queue", args.queue.url, "The PostgreSQL queue")
      ->required()
      ->type_name("URL");
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
  cancel->add_option("--queue", args.queue.url, "The PostgreSQL queue")
      ->required()
      ->type_name("URL");
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

  auto* serve = app.add_subcommand("serve", "Serve a web page and JSON API over the store");
  serve->fallthrough();
  if (yaml) {
    serve->add_option("pipeline", args.pipeline, "The pipeline file (YAML)")
        ->required()
        ->type_name("PIPELINE");
  } else {
    serve->add_option("--store", args.store, "The materialization store (SQLite file)")
        ->default_str(".interloper/state.db")
        ->type_name("PATH");
  }
  serve->add_option("--host", args.host, "Address to listen on")->default_str("127.0.0.1");
  serve->add_option("--port", args.port, "Port to listen on")
      ->type_name("PORT")
      ->check(CLI::Range(1, 65535))
      ->default_str("8321");
  serve->add_option("--window", args.window, "Window the overview counts over")
      ->type_name("WINDOW");
  serve->add_option("--queue", args.queue.url, "Also show the backfills of this queue")
      ->type_name("URL");
  if (yaml) {
    serve->add_flag(
        "--allow-runs", args.allow_runs,
        "Add a button per asset that backfills its missing partitions (a token-checked POST)");
  }
  serve->footer(fmt::format(
      "Read-only unless --allow-runs. Listens on 127.0.0.1 unless --host says otherwise:\n"
      "anyone who can reach the address sees every asset, destination (passwords redacted)\n"
      "and error text. The runs page shows each job's next fires and, with --queue, the\n"
      "queue's backfills and the tasks its workers run.\n\n"
      "Example:\n  {0} serve{1} --port 8321",
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
                                   {"serve", run_serve},
                                   {"catalog", run_catalog},
                                   {"reset", run_reset},
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
