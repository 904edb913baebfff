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
      window = own_window(*config, args.window);
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

}  // namespace interloper::cli::detail
