// `interloper materialize`, `jobs` and `schedule`.
#include "interloper/cli/cli_internal.hpp"

namespace interloper::cli::detail {

namespace {

int materialize_reading(const Project& project, const Args& args, const Selection& selection) {
  RunContext run;
  prepare_run(run, project, args, selection);
  if (!args.json && !args.quiet) {
    run.events.subscribe([dag = project.dag](const Event& e) {
      const std::string partition = shown_partition(*dag, e.asset, e.window);
      if (e.type == EventType::asset_completed) {
        std::cout << fmt::format("ok        {}  {}  {} rows  {:.3f}s\n", e.asset, partition, e.rows,
                                 e.seconds);
      } else if (e.type == EventType::asset_failed) {
        std::cout << fmt::format("FAILED    {}  {}  {}\n", e.asset, partition,
                                 indented_lines(e.message));
      } else if (e.type == EventType::asset_canceled) {
        std::cout << fmt::format("canceled  {}  {}\n", e.asset, partition);
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
    if (asset.status == Status::failed) ++history.failed;
    if (asset.status == Status::canceled) ++history.canceled;
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

}  // namespace

int run_materialize(const Project& project, const Args& args) {
  Selection selection = select(*project.dag, window_argument(project, args), args.assets, false);
  report_left_out(args, selection);
  if (args.dry_run) return print_dry_run("materialize", project, selection, false, args);
  return each_reading(selection, [&](const Selection& reading) {
    return materialize_reading(project, args, reading);
  });
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

Command add_materialize(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("materialize",
                                 "Run the assets once over a partition "
                                 "or window");
  add_common(sub, args, program);
  add_window_options(sub, args, true);
  sub->add_option("--workers", args.workers, "Assets run at once")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("4");
  sub->add_flag("--dry-run", args.dry_run, "Print the plan without running");
  sub->add_flag("--fail-fast", args.fail_fast,
                "After the first failure start no other asset (running ones finish)");
  add_keep_runs(sub, args);
  sub->footer(fmt::format(
      "A window is one task per asset over its own partitions overlapping the window: every\n"
      "asset with several of them must allow windows.\n"
      "Without --asset, the assets whose partitioning accepts the window run (unpartitioned\n"
      "ones only without a window); the others are named in an info line.\n\n"
      "{2}"
      "Examples:\n  {0} materialize{1} --partition 2026-11-03\n"
      "  {0} materialize{1} --window eu..us --asset region_targets\n"
      "  {0} materialize{1} --lookback 3 --offset 1 --time-zone Europe/Paris\n"
      "  {0} materialize{1}                      (unpartitioned assets)",
      program.name, program.target(), kInterruptHelp));
  return {sub, run_materialize, nullptr};
}

Command add_jobs(CLI::App& app, Args& args, const Program&) {
  auto* sub = app.add_subcommand("jobs", "List the next fires of the pipeline's jobs");
  sub->fallthrough();
  add_pipeline(sub, args);
  sub->add_option("--at", args.at, "Fires after this instant (default: now)")->type_name("INSTANT");
  sub->add_option("--count", args.count, "Fires per job")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("5");
  sub->footer(
      "INSTANT is RFC 3339 with an offset or Z. Each line names the job, the fire on the\n"
      "job's wall clock and in UTC, and the window it runs; --json prints one object per\n"
      "fire, with \"window\": null when the assets' start leaves nothing to run.\n\n"
      "Examples:\n  interloper jobs pipeline.yaml --count 3\n"
      "  interloper --json jobs pipeline.yaml --at 2026-03-28T12:00:00Z");
  return {sub, run_jobs, nullptr};
}

Command add_schedule(CLI::App& app, Args& args, const Program&) {
  auto* sub = app.add_subcommand("schedule", "Run the pipeline's jobs at their fires");
  sub->fallthrough();
  add_pipeline(sub, args);
  sub->add_option("--catch-up", args.catch_up,
                  "At start, run at most the last N fires missed since the last one")
      ->type_name("N")
      ->check(whole_number(0, "NONNEGATIVE"))
      ->default_str("0");
  auto* once = sub->add_flag("--once", args.once, "Run what is due now (or at --now) and exit");
  sub->add_option("--now", args.now, "With --once: the instant to evaluate")
      ->type_name("INSTANT")
      ->needs(once);
  sub->add_option("--concurrency", args.concurrency, "Partitions run at once")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("1");
  sub->footer(
      "Every fire is recorded in the store (table schedule_fires) before it runs, so a\n"
      "restarted scheduler, or a second one on the same store, never runs it again.\n"
      "SIGTERM stops the scheduler between fires. Exit 1 when a fire failed.\n\n"
      "Examples:\n  interloper schedule pipeline.yaml --catch-up 2\n"
      "  interloper schedule pipeline.yaml --once --now 2026-03-29T01:00:00Z");
  return {sub, run_scheduler, nullptr};
}

}  // namespace interloper::cli::detail
