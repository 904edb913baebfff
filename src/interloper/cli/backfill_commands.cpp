// `interloper backfill`, `worker` and `cancel`: a window run task by task, here or through a queue.
#include "interloper/cli/cli_internal.hpp"

namespace interloper::cli::detail {

namespace {

std::string format_seconds(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
}

}  // namespace

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

namespace {

// What a backfill prints as its tasks end: a line per task when stdout is not a terminal, a
// counter redrawn in place (with an ETA) when it is, nothing with --json or --quiet.
class BackfillProgress {
 public:
  BackfillProgress(const Args& args, const DAG& dag)
      : dag_(dag),
        live_(!args.json && !args.quiet && stdout_is_terminal()),
        plain_(!args.json && !args.quiet && !live_) {}

  void planned(std::size_t tasks) { total_ = tasks; }

  void task_ended(const TaskResult& task) {
    ++done_;
    if (task.status != Status::succeeded) ++failed_;
    if (plain_) print_line(task, shown_partition(dag_, task.asset, task.window));
    if (live_) redraw();
    std::cout.flush();
  }

  // Ends the live counter's line.
  void finish() const {
    if (live_) std::cout << "\n";
  }

 private:
  static void print_line(const TaskResult& task, const std::string& window) {
    switch (task.status) {
      case Status::succeeded:
        std::cout << fmt::format("ok        {}  {}  {} rows  {:.3f}s\n", task.asset, window,
                                 task.rows, task.seconds);
        break;
      case Status::failed:
        std::cout << fmt::format("FAILED    {}  {}  {}\n", task.asset, window,
                                 indented_lines(task.error));
        break;
      case Status::skipped:
        std::cout << fmt::format("claimed   {}  {}  {}\n", task.asset, window, task.error);
        break;
      default:
        std::cout << fmt::format("canceled  {}  {}\n", task.asset, window);
    }
  }

  // At most ten times a second: a large backfill finishes thousands of tasks a second.
  void redraw() {
    const auto now = std::chrono::steady_clock::now();
    if (done_ < total_ && now - drawn_ < std::chrono::milliseconds(100)) return;
    drawn_ = now;
    const double elapsed = std::chrono::duration<double>(now - started_).count();
    const std::string eta = done_ == 0 ? "?"
                                       : format_seconds(elapsed / static_cast<double>(done_) *
                                                        static_cast<double>(total_ - done_));
    std::cout << fmt::format("\r\033[K{}/{} tasks done  {} failed  ETA {}", done_, total_, failed_,
                             eta);
  }

  const DAG& dag_;
  const bool live_, plain_;
  std::size_t total_ = 0, done_ = 0, failed_ = 0;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point drawn_;
};

void print_backfill_summary(const BackfillResult& result, const PartitionWindow& window) {
  const TaskCounts& t = result.tasks;
  const std::size_t total = t.succeeded + t.failed + t.canceled + t.skipped + t.claimed;
  std::cout << fmt::format(
      "backfill {}: {} task{}, {} succeeded, {} failed, {} canceled, {} skipped",
      window.to_string(), total, total == 1 ? "" : "s", t.succeeded, t.failed, t.canceled,
      t.skipped);
  if (t.claimed > 0) {
    std::cout << fmt::format(", {} claimed by another run ({} {}{})", t.claimed,
                             result.claimed.front().asset, result.claimed.front().window,
                             t.claimed > 1 ? ", ..." : "");
  }
  std::cout << "\n";
}

// The exit code of a finished backfill, with the error line of one that failed or was stopped.
int backfill_outcome(const BackfillResult& result, const Interrupts& interrupts, const Args& args,
                     const DAG& dag) {
  if (interrupts.signal() != 0) {
    print_error(args, fmt::format("interrupted by {}: {} tasks failed or interrupted, {} not "
                                  "started",
                                  signal_name(interrupts.signal()), result.tasks.failed,
                                  result.tasks.canceled));
    return interrupts.exit_code();
  }
  if (result.ok()) return kOk;
  std::string first;
  if (!result.failures.empty()) {
    const TaskResult& f = result.failures.front();
    first = fmt::format("{} {}: {}", f.asset, shown_partition(dag, f.asset, f.window),
                        one_line(f.error));
  }
  print_error(args, fmt::format("{} task{} failed, {} canceled; first: {}", result.tasks.failed,
                                result.tasks.failed == 1 ? "" : "s", result.tasks.canceled, first));
  return kRunFailed;
}

int backfill_reading(const Project& project, const Args& args, const Selection& selection) {
  if (!args.queue.url.empty()) {
    auto store = open_state_store(project.store_path, false);
    return queue_backfill(queue_project(project, args), selection, args.missing, store.get(),
                          args.queue);
  }
  RunContext run;
  prepare_run(run, project, args, selection);
  auto progress = std::make_shared<BackfillProgress>(args, *project.dag);
  BackfillOptions options;
  options.concurrency = args.concurrency;
  options.missing_only = args.missing;
  options.fail_fast = args.fail_fast;
  options.claim_lease = std::chrono::seconds(args.claim_lease);
  options.on_plan = [progress](std::size_t planned, std::size_t) { progress->planned(planned); };
  options.on_task = [progress](const TaskResult& task) { progress->task_ended(task); };
  RunRecord history = start_history(run, args, selection.window.get());
  options.run = run.options;
  Interrupts interrupts = watch_interrupts(run, args, history);
  options.run.stop = &interrupts.stop();
  const BackfillResult result = backfill(*project.dag, *selection.window, options);
  progress->finish();
  history.succeeded = static_cast<std::int64_t>(result.succeeded());
  history.failed = static_cast<std::int64_t>(result.failed());
  history.canceled = static_cast<std::int64_t>(result.tasks.canceled);
  history.skipped = static_cast<std::int64_t>(result.tasks.skipped + result.tasks.claimed);
  if (interrupts.signal() != 0) history.state = RunState::interrupted;
  finish_history(run, args, history, json{{"claimed", result.tasks.claimed}});
  if (!args.json && !args.quiet) print_backfill_summary(result, *selection.window);
  return backfill_outcome(result, interrupts, args, *project.dag);
}

}  // namespace

int run_backfill(const Project& project, const Args& args) {
  Selection selection = select(*project.dag, window_argument(project, args), args.assets, true);
  report_left_out(args, selection);
  if (args.dry_run) return print_dry_run("backfill", project, selection, true, args);
  return each_reading(selection, [&](const Selection& reading) {
    return backfill_reading(project, args, reading);
  });
}

namespace {

// backfill --queue and the options that go with it.
void add_queue_options(CLI::App* sub, Args& args) {
  auto* queue_url = sub->add_option("--queue", args.queue.url,
                                    "Enqueue the tasks in this PostgreSQL queue for workers "
                                    "instead of running them")
                        ->type_name("URL");
  sub->add_flag("--wait", args.queue.wait, "With --queue: follow it until it ends")
      ->needs(queue_url);
  sub->add_option("--max-attempts", args.queue.max_attempts,
                  "With --queue: runs of a task before it fails")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->default_str("3")
      ->needs(queue_url);
}

}  // namespace

Command add_backfill(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("backfill",
                                 "Run a window asset by asset and partition "
                                 "by partition, newest first");
  add_common(sub, args, program);
  sub->add_option("--window", args.window, "The window: 2026-11-01..2026-11-30")
      ->type_name("A..B")
      ->required();
  sub->add_option("--concurrency", args.concurrency, "Tasks run at once")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("1");
  sub->add_flag("--missing", args.missing,
                "Skip what the store records as materialized and up to date (resume)");
  sub->add_flag("--dry-run", args.dry_run,
                "Print the plan without running (with --missing: what would run)");
  sub->add_flag("--fail-fast", args.fail_fast,
                "After the first failed task start no other task (running ones finish)");
  sub->add_option("--claim-lease", args.claim_lease,
                  "Seconds a claim on a running partition lasts unless renewed")
      ->type_name("SECONDS")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("60");
  add_keep_runs(sub, args);
  add_queue_options(sub, args);
  sub->footer(
      fmt::format("Each asset x partition is one task; each asset runs over its own partitions\n"
                  "overlapping the window (hours, days, months...). A failed task cancels only\n"
                  "the tasks reading it. --missing reruns what is absent or failed, and what\n"
                  "reads it.\n\n"
                  "Before a task runs it is claimed in the store. Tasks another backfill is\n"
                  "running are skipped, not waited for, with the tasks reading them (counted as\n"
                  "\"claimed\" in the summary). The claims of a run that died are taken over\n"
                  "at once when the store can tell (its process on this host, or its session\n"
                  "with a PostgreSQL store, is gone); others lapse after the lease.\n\n"
                  "{2}"
                  "Examples:\n  {0} backfill{1} --window 2026-11-01..2026-11-30 --concurrency 4\n"
                  "  {0} backfill{1} --window 2026-11-01..2026-11-30 --missing",
                  program.name, program.target(), kInterruptHelp));
  return {sub, run_backfill, nullptr};
}

Command add_worker(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("worker", "Claim and run backfill tasks from a queue");
  add_common(sub, args, program);
  // A worker runs whatever its pipeline's backfills hold; assets are chosen when enqueueing.
  sub->remove_option(sub->get_option("--asset"));
  sub->add_option("--queue", args.queue.url, "The PostgreSQL queue")->required()->type_name("URL");
  sub->add_option("--concurrency", args.queue.concurrency, "Tasks run at once")
      ->type_name("N")
      ->check(CLI::PositiveNumber)
      ->default_str("1");
  sub->add_option("--lease", args.queue.lease, "How long a claim lasts unless renewed")
      ->type_name("DURATION")
      ->default_str("30s");
  sub->add_flag("--exit-when-idle", args.queue.exit_when_idle,
                "Exit once no task of the pipeline is queued or running");
  sub->footer(
      "SIGTERM or SIGINT: claim nothing more, finish the running tasks, exit 0. A second\n"
      "signal kills the running tasks' commands, gives their tasks back to the queue, where\n"
      "other workers run them at once, and exits 0.\n"
      "Exit 2 when the queue's backfills were enqueued from another version of the pipeline.");
  return {sub, run_worker, nullptr};
}

Command add_cancel(CLI::App& app, Args& args, const Program&) {
  auto* sub = app.add_subcommand("cancel", "Cancel the tasks of a queued backfill not started");
  sub->fallthrough();
  sub->add_option("--queue", args.queue.url, "The PostgreSQL queue")->required()->type_name("URL");
  sub->add_option("backfill", args.queue.backfill, "The backfill's id")
      ->required()
      ->type_name("ID");
  // It names the backfill in the queue: no pipeline needed.
  return {sub, nullptr, [](const Args& a) { return queue_cancel(a.queue, a.quiet); }};
}

}  // namespace interloper::cli::detail
