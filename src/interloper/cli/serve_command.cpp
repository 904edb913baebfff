// `interloper serve`: the web page and JSON API over the store (src/interloper/serve/).
#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>
#include <charconv>
#include <map>
#include <mutex>

#include "interloper/cli/cli_internal.hpp"
#include "interloper/pipeline/process.hpp"
#include "interloper/queue/queue.hpp"
#include "interloper/run/asset_status.hpp"
#include "interloper/serve/server.hpp"

namespace interloper::cli::detail {
namespace {

// The backfills started from the page: each a child process of this binary (`backfill
// --missing`) that shares neither the server's store connection nor its threads, at most one per
// asset at a time. It is started with posix_spawn (pipeline::start_process), never fork(): a
// child forked from the threaded server would inherit locks other threads held (the allocator's
// among them) and could deadlock before it reached exec. Finished ones are reaped whenever
// another is asked for. Thread-safe.
class PageBackfills {
 public:
  explicit PageBackfills(std::string pipeline) : pipeline_(std::move(pipeline)) {}

  // Starts a backfill of `asset` over `window` ("" for its default); false when the one started
  // for it earlier still runs. Throws PipelineError when the binary cannot be started.
  bool start(const std::string& asset, const std::string& window) {
    std::lock_guard lock(mutex_);
    reap();
    if (running_.count(asset) != 0) return false;
    std::vector<std::string> argv = {"/proc/self/exe", "--quiet", "backfill", pipeline_,
                                     "--asset",        asset,     "--missing"};
    if (!window.empty()) {
      argv.push_back("--window");
      argv.push_back(window);
    }
    running_[asset] = pipeline::start_process(argv);
    return true;
  }

 private:
  // Forgets the backfills that have ended, reaping them.
  void reap() {
    for (auto it = running_.begin(); it != running_.end();) {
      const pid_t ended = ::waitpid(it->second, nullptr, WNOHANG);
      // ECHILD: no such child any more (reaped elsewhere); 0: still running.
      if (ended == it->second || (ended < 0 && errno == ECHILD)) {
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::string pipeline_;
  std::mutex mutex_;
  std::map<std::string, pid_t> running_;  // asset -> its backfill's pid
};

// Checks a count given on the command line (CLI::PositiveNumber's own message prints the
// largest double).
CLI::Validator whole_number_above_zero() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::size_t n = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (error == std::errc() && end == text.data() + text.size() && n > 0) return "";
        return fmt::format("must be a whole number above 0, not '{}'", text);
      },
      "POSITIVE");
}

// Refuses a --window that no asset takes, as `status` does.
void check_window(const DAG& dag, const std::string& window) {
  if (window.empty()) return;
  const TimePoint now = SystemClock().now();
  for (const Asset* asset : dag.order()) {
    if (asset->partitioning() != nullptr && status_window(*asset, window, now, false)) return;
  }
  throw UsageError(fmt::format("no asset accepts window '{}'", window));
}

}  // namespace

int run_serve(const Project& project, const Args& args) {
  check_window(*project.dag, args.window);
  auto store = open_state_store(project.store_path, false);
  serve::ApiOptions shown;
  shown.pipeline = history_name(args);
  shown.window = args.window;
  if (project.pipeline != nullptr) shown.jobs = project.pipeline->jobs();
  if (!args.queue.url.empty()) {
    // Connects now, so that a queue that cannot be reached stops the server before it starts.
    shown.queue = std::make_unique<queue::Queue>(args.queue.url);
    shown.queue_pipeline = queue_project(project, args).name;
  }
  serve::Api api(*project.dag, store, std::move(shown));
  serve::ServerOptions options;
  options.host = args.host;
  options.port = args.port;
  if (args.max_run_partitions > 0) options.max_run_partitions = args.max_run_partitions;
  if (args.allow_runs) {
    auto backfills = std::make_shared<PageBackfills>(args.pipeline);
    options.start_backfill = [backfills](const std::string& asset, const std::string& window) {
      return backfills->start(asset, window);
    };
  }
  serve::run_server(api, options);
  return kOk;
}

Command add_serve(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("serve", "Serve a web page and JSON API over the store");
  sub->fallthrough();
  if (program.yaml) {
    add_pipeline(sub, args);
  } else {
    add_store(sub, args);
  }
  sub->add_option("--host", args.host, "Address to listen on")->default_str("127.0.0.1");
  sub->add_option("--port", args.port, "Port to listen on")
      ->type_name("PORT")
      ->check(CLI::Range(1, 65535))
      ->default_str("8321");
  sub->add_option("--window", args.window,
                  "Window the pages show, each asset its own share of it (as status --window)")
      ->type_name("WINDOW");
  sub->add_option("--queue", args.queue.url, "Also show the backfills of this queue")
      ->type_name("URL");
  if (program.yaml) {
    auto* allow_runs = sub->add_flag(
        "--allow-runs", args.allow_runs,
        "Add a button per asset that backfills its missing partitions (a token-checked POST)");
    sub->add_option("--max-run-partitions", args.max_run_partitions,
                    "With --allow-runs: the most partitions one backfill started from the page "
                    "may cover")
        ->type_name("N")
        ->check(whole_number_above_zero())
        ->default_str(std::to_string(serve::kMaxRunPartitions))
        ->needs(allow_runs);
  }
  sub->footer(fmt::format(
      "Read-only unless --allow-runs. Listens on 127.0.0.1 unless --host says otherwise:\n"
      "anyone who can reach the address sees every asset, destination (passwords redacted)\n"
      "and error text. With --allow-runs, the page starts one backfill per asset at a time.\n"
      "The runs page shows each job's next fires and, with --queue, the queue's backfills and\n"
      "the tasks its workers run.\n\n"
      "Example:\n  {0} serve{1} --port 8321",
      program.name, program.target()));
  return {sub, run_serve, nullptr};
}

}  // namespace interloper::cli::detail
