#include "interloper/cli.hpp"

#include <pthread.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "interloper/cli/cli_internal.hpp"
#include "interloper/postgres/postgres.hpp"

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

// The app with the global flags and, in `program`'s words, the main help.
void configure_app(CLI::App& app, Args& args, const Program& program) {
  std::string footer = kMainFooter;
  if (!program.yaml) {
    std::string pattern = "interloper ";
    for (std::size_t at; (at = footer.find(" pipeline.yaml")) != std::string::npos;) {
      footer.erase(at, 14);
    }
    for (std::size_t at = 0; (at = footer.find(pattern, at)) != std::string::npos;) {
      footer.replace(at, pattern.size(), program.name + " ");
      at += program.name.size() + 1;
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
}

// Every command, in the order the main help lists them.
std::vector<Command> add_commands(CLI::App& app, Args& args, const Program& program) {
  using Adder = Command (*)(CLI::App&, Args&, const Program&);
  std::vector<Adder> adders = {add_materialize, add_backfill, add_status, add_reset, add_worker,
                               add_cancel,      add_catalog,  add_runs,   add_serve, add_check};
  if (program.yaml) {
    adders.push_back(add_jobs);
    adders.push_back(add_schedule);
  }
  std::vector<Command> commands;
  for (Adder add : adders) commands.push_back(add(app, args, program));
  return commands;
}

// The exception being handled as one error line and an exit code. Everything the project is
// built from (the pipeline file, --destination) is input: any failure there exits 2
// (`loading`). Once a command runs, a failed run, a destination or store that cannot be read
// or written, or anything unexpected exits 1; only the errors that judge the command's own
// input (usage, keys, windows, validation) exit 2.
int report_failure(const Args& args, bool loading) {
  try {
    throw;
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
    return loading ? kBadInput : kRunFailed;
  }
}

// The pipeline file or the DAG in code, with --destination and --store applied. Throws what
// loading throws.
Project load_project(const Args& args, const DAG* code_dag, std::optional<Pipeline>& pipeline,
                     std::unique_ptr<DAG>& rebuilt) {
  Project project;
  if (code_dag == nullptr) {
    pipeline.emplace(Pipeline::load(args.pipeline));
    project.pipeline = &*pipeline;
    project.dag = &pipeline->dag();
    project.store_path = pipeline->store_path();
    return project;
  }
  project.dag = code_dag;
  if (!args.destination.empty()) {
    rebuilt = with_default_destination(*code_dag, open_destination(args.destination));
    project.dag = rebuilt.get();
  }
  project.store_path = args.store.empty() ? ".interloper/state.db" : args.store;
  return project;
}

// The signal state a command starts from, whatever its parent left (see cli.hpp): SIGCHLD at
// its default and nothing blocked.
void reset_inherited_signals() {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(SIGCHLD, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
}

int run_cli(int argc, char** argv, const DAG* code_dag) {
  reset_inherited_signals();
  Args args;
  Program program;
  program.yaml = code_dag == nullptr;
  program.name =
      program.yaml ? "interloper" : fs::path(argc > 0 ? argv[0] : "app").filename().string();
  args.program = program.name;
  CLI::App app(program.yaml ? "interloper: run data assets declared in a YAML pipeline, "
                              "partition by partition."
                            : program.name +
                                  ": run this program's data assets, partition by "
                                  "partition.",
               program.name);
  configure_app(app, args, program);
  const std::vector<Command> commands = add_commands(app, args, program);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // The parser quotes arguments as given; a URL among them may hold a password.
    std::string message = e.what();
    for (int i = 1; i < argc; ++i) message = postgres::hide_password(std::move(message), argv[i]);
    print_error(args, message);
    return kBadInput;
  }
  for (int i = 1; i < argc; ++i) args.command_line += (i > 1 ? " " : "") + std::string(argv[i]);
  auto chosen = std::find_if(commands.begin(), commands.end(),
                             [](const Command& c) { return c.sub->parsed(); });
  if (chosen == commands.end()) return kBadInput;
  if (chosen->run_alone) {
    try {
      return chosen->run_alone(args);
    } catch (...) {
      return report_failure(args, false);
    }
  }
  std::optional<Pipeline> pipeline;
  std::unique_ptr<DAG> rebuilt;
  Project project;
  try {
    project = load_project(args, code_dag, pipeline, rebuilt);
  } catch (...) {
    return report_failure(args, true);
  }
  try {
    args.assets = expand_selectors(*project.dag, args.assets);
    return chosen->run(project, args);
  } catch (...) {
    return report_failure(args, false);
  }
}

}  // namespace

int main(int argc, char** argv, const DAG& dag) { return run_cli(argc, argv, &dag); }

int main(int argc, char** argv) { return run_cli(argc, argv, nullptr); }

}  // namespace interloper::cli
