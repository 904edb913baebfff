#include "interloper/cli/selection.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "interloper/plan.hpp"
#include "interloper/run.hpp"
#include "interloper/run/asset_status.hpp"

namespace interloper::cli {

std::string describe_partitioning(const PartitionConfig* config) {
  if (config == nullptr) return "none";
  if (const std::optional<TimeAxis> axis = config->time_axis()) {
    return std::string(axis->granularity.name());
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
std::string window_shape(const std::string& text) { return window_text_shape(text); }

}  // namespace

std::string shown_partition(const DAG& dag, const std::string& asset, const std::string& window) {
  const Asset* found = dag.find(asset);
  if (window.empty() || (found != nullptr && found->partitioning() == nullptr)) return "-";
  return window;
}

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
    if (selector == "*") {
      for (const Asset* asset : dag.order()) add(asset->name());
      continue;
    }
    if (selector.rfind("tag:", 0) == 0) {
      throw UsageError(fmt::format(
          "--asset '{}': selecting by tag is not supported (name assets, NAME+, +NAME or '*')",
          selector));
    }
    std::string_view name(selector);
    const bool up = !name.empty() && name.front() == '+';
    if (up) name.remove_prefix(1);
    const bool down = !name.empty() && name.back() == '+';
    if (down) name.remove_suffix(1);
    const std::string base(name);
    if (dag.find(base) == nullptr) {
      throw UsageError(fmt::format("unknown asset '{}' in --asset '{}' (known: {})", base, selector,
                                   fmt::join(asset_names(dag), ", ")));
    }
    add(base);
    if (up) walk(base, false);
    if (down) walk(base, true);
  }
  return out;
}

std::unique_ptr<PartitionWindow> own_window(const PartitionConfig& config,
                                            const std::string& window_text) {
  return window_share(config, window_text);
}

namespace {

// Reads the window argument for one partitioning at a time: each partitioning reads the text
// its own way (PartitionConfig::read_window), so "2026" is a year to time assets and a value to
// a list holding it. A computed window (--lookback) is a time window, taken as it is by time
// partitionings and refused by the others.
class WindowReader {
 public:
  explicit WindowReader(const WindowArgument& window) : window_(window) {}

  // The window for `config`; throws what its reading throws when it does not take it.
  std::unique_ptr<PartitionWindow> read(const PartitionConfig& config) const {
    if (window_.computed) {
      if (config.time_axis()) return window_.computed->clone();
      throw PartitionError(fmt::format("{} partitioning does not take the time window {}",
                                       config.kind(), window_.text));
    }
    using Form = PartitionConfig::TextForm;
    return config.read_window(window_.text, window_.single_key ? Form::key : Form::window);
  }

  // What the window looks like ("day", "list", ...), to say why an asset does not take it.
  std::string shape() const {
    if (window_.computed) return std::string(window_.computed->granularity().name());
    return window_.text.empty() ? "" : window_shape(window_.text);
  }

 private:
  const WindowArgument& window_;
};

// --asset: the named assets in DAG order; the window read by the first partitioned one.
void select_named(const DAG& dag, const std::vector<std::string>& names, const WindowReader& reader,
                  const std::string& window_text, Selection& selection) {
  check_known(dag, names);
  for (const Asset* asset : dag.order()) {
    if (std::find(names.begin(), names.end(), asset->name()) != names.end()) {
      selection.assets.push_back(asset->name());
    }
  }
  if (window_text.empty()) return;
  const Asset* first = nullptr;
  for (const auto& name : selection.assets) {
    const Asset& asset = dag.asset(name);
    if (asset.partitioning() != nullptr && asset.enabled()) {
      first = &asset;
      break;
    }
  }
  if (first == nullptr) {
    throw UsageError(fmt::format(
        "window {} given, but none of the selected assets is partitioned (run them without a "
        "window)",
        window_text));
  }
  try {
    selection.window = reader.read(*first->partitioning());
  } catch (const std::exception& e) {
    throw UsageError(
        fmt::format("asset '{}': bad window '{}': {}", first->name(), window_text, e.what()));
  }
}

// Files an asset that took the window into the selection that read the same partitions: the
// first such, or one in `also` (one time window serves every granularity; assets that read the
// text as other partitions, such as a list holding the value "2026", make a reading of their
// own).
void add_reading(const Asset& asset, std::unique_ptr<PartitionWindow> window,
                 Selection& selection) {
  auto same_reading = [&](const Selection& s) { return s.window->same_partitions(*window); };
  if (!selection.window) {
    selection.window = std::move(window);
    selection.assets.push_back(asset.name());
    return;
  }
  if (same_reading(selection)) {
    selection.assets.push_back(asset.name());
    return;
  }
  for (Selection& other : selection.also) {
    if (same_reading(other)) {
      other.assets.push_back(asset.name());
      return;
    }
  }
  Selection other;
  other.window = std::move(window);
  other.assets.push_back(asset.name());
  selection.also.push_back(std::move(other));
}

// No --asset: every enabled asset that takes the window (the unpartitioned ones when there is
// none); the others are left out with the reason.
void select_accepting(const DAG& dag, const WindowReader& reader, const std::string& window_text,
                      Selection& selection) {
  std::vector<std::string> rejections;
  for (const Asset* asset : dag.order()) {
    const PartitionConfig* config = asset->partitioning();
    if (!asset->enabled()) {
      selection.left_out.emplace_back(asset->name(), "disabled");
    } else if (window_text.empty() && config == nullptr) {
      selection.assets.push_back(asset->name());
    } else if (window_text.empty()) {
      selection.left_out.emplace_back(
          asset->name(),
          fmt::format("partitioned by {}, needs a window", describe_partitioning(config)));
    } else if (config == nullptr) {
      selection.left_out.emplace_back(asset->name(), "unpartitioned, runs only without a window");
    } else {
      try {
        add_reading(*asset, reader.read(*config), selection);
      } catch (const std::exception& e) {
        selection.left_out.emplace_back(
            asset->name(), fmt::format("partitioned by {}, not {}", describe_partitioning(config),
                                       reader.shape()));
        rejections.push_back(fmt::format("{}: {}", asset->name(), e.what()));
      }
    }
  }
  if (!selection.assets.empty()) return;
  if (window_text.empty()) {
    throw UsageError("every asset is partitioned: give --partition KEY or --window A..B");
  }
  throw UsageError(
      fmt::format("no asset accepts window '{}' ({})", window_text, fmt::join(rejections, "; ")));
}

// The unpartitioned assets, not selected, downstream of a selected partitioned asset.
std::vector<std::string> unpartitioned_downstream(const DAG& dag, const Selection& selection) {
  std::unordered_set<std::string> reached;
  std::vector<std::string> pending;
  for (const auto& name : selection.assets) {
    if (dag.asset(name).partitioning() != nullptr) pending.push_back(name);
  }
  while (!pending.empty()) {
    const std::string current = std::move(pending.back());
    pending.pop_back();
    for (const Asset* next : dag.downstream(current)) {
      if (reached.insert(next->name()).second) pending.push_back(next->name());
    }
  }
  std::vector<std::string> out;
  for (const Asset* asset : dag.order()) {
    const bool selected = std::find(selection.assets.begin(), selection.assets.end(),
                                    asset->name()) != selection.assets.end();
    if (asset->partitioning() == nullptr && asset->enabled() && !selected &&
        reached.count(asset->name()) > 0) {
      out.push_back(asset->name());
    }
  }
  return out;
}

}  // namespace

namespace {

// "the year 2026", "the value 2026", "the values eu..us".
std::string reading_of(const PartitionWindow& window) {
  if (const std::optional<TimePartitionWindow> time = window.as_time_window()) {
    return fmt::format("the {} {}", time->granularity().name(), window.to_string());
  }
  return fmt::format("the value{} {}", window.size() == 1 ? "" : "s", window.to_string());
}

std::string reading_line(const DAG& dag, const Selection& s) {
  const PartitionConfig* config = dag.asset(s.assets.front()).partitioning();
  const std::string kind = config->time_axis() ? "time" : describe_partitioning(config);
  return fmt::format("{} assets as {} ({})", kind, reading_of(*s.window),
                     fmt::join(s.assets, ", "));
}

// How each reading of `selection` took the window; empty for a single reading.
std::string window_readings(const DAG& dag, const Selection& selection) {
  if (selection.also.empty() || !selection.window) return "";
  std::vector<std::string> lines{reading_line(dag, selection)};
  for (const Selection& other : selection.also) lines.push_back(reading_line(dag, other));
  return fmt::format("each kind of asset reads the window its own way: {}", fmt::join(lines, "; "));
}

}  // namespace

Selection select(const DAG& dag, const WindowArgument& window,
                 const std::vector<std::string>& explicit_assets, bool need_window) {
  if (need_window && window.empty()) throw UsageError("this command needs --window A..B");
  const WindowReader reader(window);
  Selection selection;
  if (!explicit_assets.empty()) {
    select_named(dag, explicit_assets, reader, window.text, selection);
  } else {
    select_accepting(dag, reader, window.text, selection);
  }
  // A backfill runs partition by partition (allow_window does not matter); any other run is one
  // task per asset over its share of the window.
  const TaskScope scope = need_window ? TaskScope::per_partition : TaskScope::per_asset;
  std::vector<const Selection*> readings{&selection};
  for (const Selection& other : selection.also) readings.push_back(&other);
  std::string refused;
  for (const Selection* s : readings) {
    PlanOptions plan_options;
    plan_options.assets = s->assets;
    plan_options.scope = scope;
    try {
      plan(dag, s->window.get(), plan_options);
    } catch (const PartitionError& e) {
      refused += (refused.empty() ? "" : "\n") + std::string(e.what());
    }
  }
  if (!refused.empty()) throw PartitionError(refused);
  if (selection.window) selection.refresh_after = unpartitioned_downstream(dag, selection);
  selection.readings = window_readings(dag, selection);
  return selection;
}

std::optional<TimePartitionWindow> lookback_window(const DAG& dag,
                                                   const std::vector<std::string>& explicit_assets,
                                                   long lookback, long offset,
                                                   const std::string& time_zone, TimePoint now) {
  check_known(dag, explicit_assets);
  std::optional<TimeAxis> axis;
  for (const Asset* asset : dag.order()) {
    bool chosen = explicit_assets.empty()
                      ? asset->enabled()
                      : std::find(explicit_assets.begin(), explicit_assets.end(), asset->name()) !=
                            explicit_assets.end();
    if (!chosen || asset->partitioning() == nullptr) continue;
    axis = asset->partitioning()->time_axis();
    if (axis) break;
  }
  if (!axis) throw UsageError("--lookback needs a time-partitioned asset");
  std::optional<TimePartitionWindow> window;
  try {
    window = TimePartitionWindow::lookback(now, lookback, offset, axis->granularity, axis->start,
                                           time_zone);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  return window;
}

}  // namespace interloper::cli
