// `interloper serve`: the web page and JSON API over the store (src/interloper/serve/).
#include <sys/types.h>
#include <unistd.h>

#include "interloper/cli/cli_internal.hpp"
#include "interloper/run/queue.hpp"
#include "interloper/serve/server.hpp"

namespace interloper::cli::detail {

int run_serve(const Project& project, const Args& args) {
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
  if (args.allow_runs) {
    // Each backfill is a child process of this binary (`backfill --missing`), reaped by the
    // kernel: the server neither waits for it nor shares its store connection.
    std::signal(SIGCHLD, SIG_IGN);
    const std::string pipeline = args.pipeline;
    options.start_backfill = [pipeline](const std::string& asset, const std::string& window) {
      std::vector<std::string> argv = {"/proc/self/exe", "--quiet", "backfill", pipeline,
                                       "--asset",        asset,     "--missing"};
      if (!window.empty()) {
        argv.push_back("--window");
        argv.push_back(window);
      }
      const pid_t pid = ::fork();
      if (pid == 0) {
        std::vector<char*> raw;
        for (auto& a : argv) raw.push_back(a.data());
        raw.push_back(nullptr);
        ::execv(raw[0], raw.data());
        ::_exit(127);
      }
      if (pid < 0) throw RunError("serve: cannot start a backfill: fork failed");
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
  sub->add_option("--window", args.window, "Window the overview counts over")->type_name("WINDOW");
  sub->add_option("--queue", args.queue.url, "Also show the backfills of this queue")
      ->type_name("URL");
  if (program.yaml) {
    sub->add_flag(
        "--allow-runs", args.allow_runs,
        "Add a button per asset that backfills its missing partitions (a token-checked POST)");
  }
  sub->footer(fmt::format(
      "Read-only unless --allow-runs. Listens on 127.0.0.1 unless --host says otherwise:\n"
      "anyone who can reach the address sees every asset, destination (passwords redacted)\n"
      "and error text. The runs page shows each job's next fires and, with --queue, the\n"
      "queue's backfills and the tasks its workers run.\n\n"
      "Example:\n  {0} serve{1} --port 8321",
      program.name, program.target()));
  return {sub, run_serve, nullptr};
}

}  // namespace interloper::cli::detail
