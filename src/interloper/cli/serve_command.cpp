// `interloper serve`: the web page and JSON API over the store (src/interloper/serve/).
#include "interloper/cli/cli_internal.hpp"
#include "interloper/serve/server.hpp"

namespace interloper::cli::detail {

int run_serve(const Project& project, const Args& args) {
  auto store = open_state_store(project.store_path, false);
  serve::Api api(*project.dag, store, history_name(args), args.window);
  serve::run_server(api, {.host = args.host, .port = args.port});
  return kOk;
}

}  // namespace interloper::cli::detail
