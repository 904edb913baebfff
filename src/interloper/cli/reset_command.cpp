// `reset`: drops what an asset has stored, so that it can be built again from nothing.
#include "interloper/cli/cli_internal.hpp"

namespace interloper::cli::detail {

namespace {

// Asks on the terminal; true when the answer is yes. Without a terminal the caller must have
// passed --yes: nothing is dropped on an answer nobody gave.
bool confirmed(const std::string& question) {
  std::cerr << question << " [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

}  // namespace

int run_reset(const Project& project, const Args& args) {
  const std::string& name = args.reset_asset;
  const Asset* asset = project.dag->find(name);
  if (asset == nullptr) throw UsageError(fmt::format("unknown asset '{}'", name));
  Destination* destination = project.dag->destination_of(*asset);
  if (destination == nullptr) {
    throw UsageError(fmt::format("asset '{}' has no destination", name));
  }
  const PartitionConfig* config = asset->partitioning();
  std::unique_ptr<PartitionWindow> window;
  if (!args.window.empty()) {
    if (config == nullptr) {
      throw UsageError(fmt::format(
          "asset '{}' is unpartitioned: reset drops it whole, without --window", name));
    }
    try {
      window = config->select_window(args.window);
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("asset '{}': bad window '{}': {}", name, args.window, e.what()));
    }
  }
  const std::string what =
      window ? fmt::format("the partitions of asset '{}' in {}", name, window->to_string())
             : fmt::format("every row, partition and the schema of asset '{}'", name);
  if (!args.yes) {
    if (::isatty(STDIN_FILENO) != 1) {
      throw UsageError(
          fmt::format("reset drops {} from {}; pass --yes to confirm without a terminal", what,
                      destination->url()));
    }
    if (!confirmed(fmt::format("Drop {} from {}?", what, destination->url()))) {
      print_info(args, "nothing dropped");
      return kBadInput;
    }
  }
  // The store first: a reset cut short between the two leaves partitions that read as missing
  // and are rebuilt, never rows the store believes gone.
  auto store = open_state_store(project.store_path, true);
  store->forget(asset->dataset(), window.get());
  destination->drop(asset->dataset(), window.get());
  if (args.json) {
    json out;
    out["asset"] = name;
    out["window"] = window ? json(window->to_string()) : json(nullptr);
    out["destination"] = destination->url();
    out["dropped"] = true;
    std::cout << dump(out) << "\n";
  } else {
    print_info(args, fmt::format("dropped {}", what));
  }
  return kOk;
}

Command add_reset(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("reset", "Drop an asset's stored rows and records");
  add_common(sub, args, program);
  sub->remove_option(sub->get_option("--asset"));
  sub->add_option("asset", args.reset_asset, "The asset to drop")->required()->type_name("ASSET");
  sub->add_option("--window", args.window,
                  "Only the partitions of this window (default: the whole dataset)")
      ->type_name("A..B");
  sub->add_flag("--yes", args.yes, "Do not ask for confirmation");
  sub->footer(fmt::format(
      "Without --window the whole dataset goes: its rows, its partitions and its schema, so\n"
      "its next write may change column types (what a partitioned asset needs when a type\n"
      "cannot widen). With --window only those partitions go. Either way the store forgets\n"
      "them, so they read as missing and `backfill --missing` builds them again. Asks on a\n"
      "terminal; without one, --yes is required (exit 2 otherwise).\n\n"
      "Examples:\n  {0} reset{1} events --window 2026-11-01..2026-11-30\n"
      "  {0} reset{1} events --yes",
      program.name, program.target()));
  return {sub, run_reset, nullptr};
}

}  // namespace interloper::cli::detail
