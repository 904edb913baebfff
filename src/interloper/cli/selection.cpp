#include "interloper/cli/selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "interloper/plan.hpp"
#include "interloper/run.hpp"

namespace interloper::cli {

std::string describe_partitioning(const PartitionConfig* config) {
  if (config == nullptr) return "none";
  if (const auto* time = dynamic_cast<const TimePartitionConfig*>(config)) {
    return std::string(time->granularity().name());
  }
  return fmt::format("{}({})", config->kind(), config->column());
}

namespace {

std::vector<std::string> asset_names(const DAG& dag) {
  std::vector<std::string> names;
  for (const Asset* a : dag.order()) names.push_back(a->name());
  return names;
}

void check_known(const DAG& dag, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (dag.find(name) == nullptr) {
      throw UsageError(
          fmt::format("unknown asset '{}' (known: {})", name, fmt::join(asset_names(dag), ", ")));
    }
  }
}

// What kind of window the text looks like, for messages: a granularity name or "list".
std::string window_shape(const std::string& text) {
  std::string first = text.substr(0, text.find(".."));
  if (auto g = TimeGranularity::infer(first)) return std::string(g->name());
  return "list";
}

}  // namespace

std::vector<std::string> expand_selectors(const DAG& dag, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::unordered_set<std::string> chosen;
  auto add = [&](const std::string& name) {
    if (chosen.insert(name).second) out.push_back(name);
  };
  // Walks upstream or downstream from `name` without recursion (a long chain is deep).
  auto walk = [&](const std::string& name, bool downstream) {
    std::vector<std::string> pending{name};
    std::unordered_set<std::string> seen{name};
    while (!pending.empty()) {
      const std::string current = std::move(pending.back());
      pending.pop_back();
      for (const Asset* next : downstream ? dag.downstream(current) : dag.upstream(current)) {
        if (!seen.insert(next->name()).second) continue;
        add(next->name());
        pending.push_back(next->name());
      }
    }
  };
  for (const auto& selector : names) {
    std::string_view name(selector);
    const bool up = !name.empty() && name.front() == '+';
    if (up) name.remove_prefix(1);
    const bool down = !name.empty() && name.back() == '+';
    if (down) name.remove_suffix(1);
    const std::string base(name);
    if (dag.find(base) == nullptr) {
      throw UsageError(fmt::format("unknown asset '{}' in --asset '{}' (known: {})", base,
                                   selector, fmt::join(asset_names(dag), ", ")));
    }
    add(base);
    if (up) walk(base, false);
    if (down) walk(base, true);
  }
  return out;
}

std::unique_ptr<PartitionWindow> own_window(const PartitionConfig& config,
                                            const std::string& window_text) {
  if (config.kind() != "time" || window_shape(window_text) == "list") {
    return config.parse_window(window_text);
  }
  const TimePartitionWindow requested = TimePartitionWindow::parse(window_text);
  std::unique_ptr<PartitionWindow> own = overlapping_window(config, requested);
  if (own == nullptr) {
    throw PartitionError(
        fmt::format("window {} lies before the partitioning's start", requested.to_string()));
  }
  return own;
}

Selection select(const DAG& dag, const WindowArgument& window,
                 const std::vector<std::string>& explicit_assets, bool need_window) {
  const std::string& window_text = window.text;
  const bool single_key = window.single_key;
  // A time window is read in the granularity its keys have; every time-partitioned asset then
  // runs over its own partitions overlapping its bounds.
  std::unique_ptr<PartitionWindow> time_window;
  if (window.computed) {
    time_window = window.computed->clone();
  } else if (!window_text.empty() && window_shape(window_text) != "list") {
    try {
      time_window = single_key ? TimePartition::from_key(window_text).as_window()
                               : TimePartitionWindow::parse(window_text).clone();
    } catch (const std::invalid_argument&) {
      // Malformed: each asset's own parse below names the problem.
    }
  }
  auto parse = [&](const PartitionConfig& config) {
    if (time_window && config.kind() == "time") return time_window->clone();
    if (window.computed) {
      throw PartitionError(fmt::format("{} partitioning does not take the time window {}",
                                       config.kind(), window_text));
    }
    return single_key ? config.partition(window_text)->as_window()
                      : config.parse_window(window_text);
  };
  Selection selection;
  if (need_window && window.empty()) throw UsageError("this command needs --window A..B");
  if (!explicit_assets.empty()) {
    check_known(dag, explicit_assets);
    for (const Asset* asset : dag.order()) {
      for (const auto& name : explicit_assets) {
        if (name == asset->name()) {
          selection.assets.push_back(name);
          break;
        }
      }
    }
    if (!window_text.empty()) {
      const Asset* first = nullptr;
      for (const auto& name : selection.assets) {
        const Asset& asset = dag.asset(name);
        if (asset.partitioning() != nullptr && asset.enabled()) {
          first = &asset;
          break;
        }
      }
      if (first == nullptr) {
        throw UsageError(
            fmt::format("window {} given, but none of the selected assets is "
                        "partitioned (run them without a window)",
                        window_text));
      }
      try {
        selection.window = parse(*first->partitioning());
      } catch (const std::exception& e) {
        throw UsageError(
            fmt::format("asset '{}': bad window '{}': {}", first->name(), window_text, e.what()));
      }
    }
  } else {
    const std::string shape = window.computed ? std::string(window.computed->granularity().name())
                              : window_text.empty() ? ""
                                                    : window_shape(window_text);
    std::vector<std::string> rejections;
    for (const Asset* asset : dag.order()) {
      const PartitionConfig* config = asset->partitioning();
      if (!asset->enabled()) {
        selection.left_out.emplace_back(asset->name(), "disabled");
        continue;
      }
      if (window_text.empty()) {
        if (config == nullptr) {
          selection.assets.push_back(asset->name());
        } else {
          selection.left_out.emplace_back(
              asset->name(),
              fmt::format("partitioned by {}, needs a window", describe_partitioning(config)));
        }
        continue;
      }
      if (config == nullptr) {
        selection.left_out.emplace_back(asset->name(), "unpartitioned, runs only without a window");
        continue;
      }
      try {
        auto parsed = parse(*config);
        if (!selection.window) selection.window = std::move(parsed);
        selection.assets.push_back(asset->name());
      } catch (const std::exception& e) {
        selection.left_out.emplace_back(
            asset->name(),
            fmt::format("partitioned by {}, not {}", describe_partitioning(config), shape));
        rejections.push_back(fmt::format("{}: {}", asset->name(), e.what()));
      }
    }
    if (selection.assets.empty()) {
      if (window_text.empty()) {
        throw UsageError("every asset is partitioned: give --partition KEY or --window A..B");
      }
      throw UsageError(fmt::format("no asset accepts window '{}' ({})", window_text,
                                   fmt::join(rejections, "; ")));
    }
  }
  PlanOptions plan_options;
  plan_options.assets = selection.assets;
  // A backfill runs partition by partition (allow_window does not matter); any other run is one
  // task per asset over its share of the window.
  plan_options.scope = need_window ? TaskScope::per_partition : TaskScope::per_asset;
  plan(dag, selection.window.get(), plan_options);
  return selection;
}

std::optional<TimePartitionWindow> lookback_window(const DAG& dag,
                                                   const std::vector<std::string>& explicit_assets,
                                                   long lookback, long offset,
                                                   const std::string& time_zone, TimePoint now) {
  check_known(dag, explicit_assets);
  const TimePartitionConfig* config = nullptr;
  for (const Asset* asset : dag.order()) {
    bool chosen = explicit_assets.empty()
                      ? asset->enabled()
                      : std::find(explicit_assets.begin(), explicit_assets.end(), asset->name()) !=
                            explicit_assets.end();
    if (!chosen) continue;
    config = dynamic_cast<const TimePartitionConfig*>(asset->partitioning());
    if (config != nullptr) break;
  }
  if (config == nullptr) throw UsageError("--lookback needs a time-partitioned asset");
  std::optional<TimePartitionWindow> window;
  try {
    window = TimePartitionWindow::lookback(now, lookback, offset, config->granularity(),
                                           config->start(), time_zone);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return window;
}

}  // namespace interloper::cli
