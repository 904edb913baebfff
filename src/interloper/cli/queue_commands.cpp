// The queue commands: they parse their options and call the queue layer (queue/), which enqueues,
// follows, shows and cancels backfills and runs workers.
#include "interloper/cli/queue_commands.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "interloper/cli/interrupt.hpp"
#include "interloper/plan.hpp"
#include "interloper/queue/queue.hpp"
#include "interloper/queue/queue_json.hpp"
#include "interloper/queue/worker.hpp"

namespace interloper::cli {

namespace queue_detail {

Plan plan_backfill(const DAG& dag, const PartitionWindow& window,
                   const std::vector<std::string>& assets, bool missing,
                   MaterializationStore* store) {
  PlanOptions options;
  options.scope = TaskScope::per_partition;
  options.assets = assets;
  options.missing_only = missing;
  options.store = store;
  return plan(dag, &window, options);
}

void print_line(const QueueProject& project, const std::string& line) {
  if (project.quiet || project.json) return;
  std::cout << line << "\n";
  std::cout.flush();
}

// Follows backfill `id` until none of its tasks is queued or running.
int wait_for(const QueueProject& project, queue::Queue& q, std::int64_t id) {
  const bool live = !project.json && !project.quiet && ::isatty(STDOUT_FILENO) == 1;
  std::string last;
  queue::BackfillStatus status;
  while (true) {
    std::vector<queue::BackfillStatus> found = q.status(project.name, id);
    if (found.empty()) throw RunError(fmt::format("queue '{}': no backfill {}", q.display(), id));
    status = found.front();
    const queue::Counts& c = status.counts;
    const std::string line = fmt::format("{}/{} tasks done  {} failed  {} canceled  {} running",
                                         c.succeeded + c.failed + c.canceled, c.total(), c.failed,
                                         c.canceled, c.running);
    if (line != last && !project.json && !project.quiet) {
      std::cout << (live ? "\r\033[K" + line : line + "\n");
      std::cout.flush();
      last = line;
    }
    if (c.unfinished() == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (live) std::cout << "\n";
  const queue::Counts& c = status.counts;
  print_line(project,
             fmt::format("backfill {} ({}): {} tasks, {} succeeded, {} failed, {} canceled", id,
                         status.info.spec.request.window_text(), c.total(), c.succeeded, c.failed, c.canceled));
  if (c.failed == 0 && c.canceled == 0) return kOk;
  std::string first;
  for (const queue::FailedTask& f : q.failures(id, 1)) {
    first = fmt::format("; first: {} {}: {}", f.asset, f.partition, f.error);
  }
  std::cerr << fmt::format("{} task{} failed, {} canceled{}\n", c.failed, c.failed == 1 ? "" : "s",
                           c.canceled, first);
  return kRunFailed;
}

// When a running task's lease ends: "lease 24s left", or "lease expired 3s ago" (its worker
// stopped renewing it; the next idle worker takes the task back).

}  // namespace queue_detail

namespace {

using queue_detail::kBadInput;
using queue_detail::kOk;
using queue_detail::kRunFailed;
using queue_detail::plan_backfill;
using queue_detail::print_line;
using queue_detail::wait_for;

std::string lease_text(double left) {
  if (left >= 0) return fmt::format("lease {:.0f}s left", left);
  return fmt::format("lease expired {:.0f}s ago", -left);
}

}  // namespace

std::string pipeline_hash(const DAG& dag, const Pipeline* pipeline) {
  if (pipeline != nullptr) return fingerprint(pipeline->catalog(false));
  std::string text;
  for (const Asset* asset : dag.order()) {
    text +=
        fmt::format("{}\x1f{}\x1f{}\x1f", asset->name(), asset->source_name(), asset->enabled());
    for (const std::string& dep : asset->deps()) text += dep + "\x1f";
    if (asset->partitioning() != nullptr) text += asset->partitioning()->to_definition();
    text += '\x1e';
  }
  return fingerprint(text);
}

int queue_backfill(const QueueProject& project, const Selection& selection, bool missing,
                   MaterializationStore* store, const QueueArgs& args) {
  if (args.max_attempts < 1) {
    throw UsageError(fmt::format("--max-attempts must be at least 1, got {}", args.max_attempts));
  }
  const Plan planned =
      plan_backfill(*project.dag, *selection.window, selection.assets, missing, store);
  queue::Queue q(args.url);
  queue::BackfillSpec spec;
  spec.pipeline = project.name;
  spec.pipeline_hash = pipeline_hash(*project.dag, project.pipeline);
  spec.request = queue::make_request(planned, *selection.window,
                                     {.missing = missing, .max_attempts = args.max_attempts});
  const std::int64_t id = q.enqueue(planned, spec);
  if (project.json) {
    const nlohmann::json line = {{"type", "backfill_enqueued"},
                                 {"backfill", id},
                                 {"tasks", planned.to_run()},
                                 {"skipped", planned.skipped()}};
    std::cout << line.dump() << "\n";
  } else if (!project.quiet) {
    std::cout << fmt::format("backfill {} enqueued: {} tasks ({} skipped as up to date)\n", id,
                             planned.to_run(), planned.skipped());
  }
  std::cout.flush();
  return args.wait ? wait_for(project, q, id) : kOk;
}

namespace {

std::chrono::seconds parse_lease(const std::string& text) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = text.substr(used);
  long factor = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (used == 0 || factor == 0 || value < 3) {
    throw UsageError(fmt::format(
        "--lease '{}': expected a duration of at least 3 seconds such as 30s, 2m or 1h", text));
  }
  return std::chrono::seconds(value * factor);
}

int version_mismatch(const QueueProject& project, const std::string& here,
                     const std::string& other, const queue::Queue& q) {
  std::cerr << fmt::format(
      "pipeline '{}' differs from the one its backfills were enqueued with (definition hash "
      "{} here, {} in queue '{}'): run the workers on the same pipeline version\n",
      project.name, here, other, q.display());
  return kBadInput;
}

}  // namespace

int queue_worker(const QueueProject& project, const RunOptions& run, const QueueArgs& args) {
  if (args.concurrency < 1) {
    throw UsageError(fmt::format("--concurrency must be at least 1, got {}", args.concurrency));
  }
  queue::WorkerOptions options;
  options.pipeline = project.name;
  options.pipeline_hash = pipeline_hash(*project.dag, project.pipeline);
  options.lease = parse_lease(args.lease);
  options.concurrency = args.concurrency;
  options.exit_when_idle = args.exit_when_idle;
  options.run = run;
  options.print = [&project](const std::string& line) { print_line(project, line); };
  queue::Queue q(parse_locator(args.url));
  queue::Worker worker(*project.dag, q, std::move(options));
  if (std::optional<std::string> other = worker.other_version()) {
    return version_mismatch(project, pipeline_hash(*project.dag, project.pipeline), *other, q);
  }
  // The first SIGTERM or SIGINT stops claiming and lets the running tasks finish; a second
  // one kills their commands and gives the tasks back to the queue.
  Interrupts interrupts(
      kInterruptGrace, kInterruptLinger, [&worker](int) { worker.give_up(); },
      Interrupts::FirstSignal::finish);
  const queue::Worker::Outcome outcome =
      worker.run(interrupts.stop(), [&interrupts] { return interrupts.signals(); });
  if (!outcome.other_hash.empty()) {
    return version_mismatch(project, pipeline_hash(*project.dag, project.pipeline),
                            outcome.other_hash, q);
  }
  print_line(project, worker.summary());
  return kOk;
}

int queue_status(const QueueProject& project, const QueueArgs& args) {
  queue::Queue q(args.url);
  std::optional<std::int64_t> id;
  if (args.backfill != 0) id = args.backfill;
  const std::vector<queue::BackfillStatus> found = q.status(project.name, id);
  if (id && found.empty()) {
    throw UsageError(fmt::format("queue '{}': no backfill {}", q.display(), *id));
  }
  const std::vector<queue::RunningTask> running = q.running(project.name, id);
  for (const queue::BackfillStatus& s : found) {
    const queue::Counts& c = s.counts;
    if (project.json) {
      const nlohmann::ordered_json line = queue::backfill_json(s, running);
      std::cout << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                << "\n";
      continue;
    }
    std::cout << fmt::format(
        "backfill {}  {}  {}{}: {} queued, {} running, {} succeeded, {} failed, {} canceled\n",
        s.info.id, s.info.spec.request.window_text(), s.info.created, s.info.canceled ? " (canceled)" : "",
        c.queued, c.running, c.succeeded, c.failed, c.canceled);
    for (const queue::RunningTask& t : running) {
      if (t.backfill != s.info.id) continue;
      std::cout << fmt::format("  running  {}  {}  on {}  for {:.0f}s, {}  (attempt {})\n", t.asset,
                               t.partition, t.owner, t.seconds, lease_text(t.lease_left),
                               t.attempts);
    }
  }
  return kOk;
}

int queue_cancel(const QueueArgs& args, bool quiet) {
  queue::Queue q(args.url);
  if (!q.backfill(args.backfill)) {
    throw UsageError(fmt::format("queue '{}': no backfill {}", q.display(), args.backfill));
  }
  const std::int64_t canceled = q.cancel(args.backfill);
  if (!quiet) {
    std::cout << fmt::format("backfill {}: {} queued task{} canceled; running ones finish\n",
                             args.backfill, canceled, canceled == 1 ? "" : "s");
  }
  return kOk;
}

}  // namespace interloper::cli
