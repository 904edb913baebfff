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

}  // namespace interloper::cli::detail
