// `interloper status`: each asset's materialized, failed and missing partitions.
#include "interloper/cli/cli_internal.hpp"

namespace interloper::cli::detail {

namespace {

// "a..b" or "a" for each range, with the window's keys.
json ranges_json(const PartitionWindow& window, const std::vector<PartitionRange>& ranges) {
  json out = json::array();
  for (const auto& r : ranges) {
    std::string first = window.partition_at(r.first)->key();
    out.push_back(r.first == r.last ? first : first + ".." + window.partition_at(r.last)->key());
  }
  return out;
}

std::string strip(const PartitionWindow& window, const WindowStatus& status, int width) {
  std::size_t n = window.size();
  std::vector<char> state(n, 'm');  // m materialized, f failed, - missing
  for (const auto& r : status.failed) {
    for (std::size_t i = r.first; i <= r.last && i < n; ++i) state[i] = 'f';
  }
  for (const auto& r : status.missing) {
    for (std::size_t i = r.first; i <= r.last && i < n; ++i) state[i] = '-';
  }
  std::size_t cells = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(width, 10)));
  std::string out;
  char current = 0;
  for (std::size_t c = 0; c < cells; ++c) {
    std::size_t from = c * n / cells, to = std::max(from + 1, (c + 1) * n / cells);
    char cell = 'm';
    for (std::size_t i = from; i < to; ++i) {
      if (state[i] == 'f') cell = 'f';
      if (state[i] == '-' && cell != 'f') cell = '-';
    }
    if (cell != current) {
      out += cell == 'm' ? "\033[32m" : cell == 'f' ? "\033[31m" : "\033[2m";
      current = cell;
    }
    out += cell == 'm' ? "#" : cell == 'f' ? "x" : ".";
  }
  out += "\033[0m";
  return out;
}

// The first line of an error, cut to fit a status line.
std::string error_excerpt(const std::string& error) {
  std::string line = one_line(error);
  constexpr std::size_t kWidth = 160;
  if (line.size() > kWidth) line = line.substr(0, kWidth - 3) + "...";
  return line;
}

// What --verify finds among the partitions of `materialized`: those the destination does not
// hold (never written there, or deleted since), and those whose stored data someone else
// overwrote or truncated since it was written.
struct Verified {
  std::vector<PartitionRange> gone;
  std::vector<PartitionCheck> changed;
};

Verified verify_partitions(const DAG& dag, const Asset& asset, const PartitionWindow& window,
                           const std::vector<PartitionRange>& materialized) {
  Verified out;
  if (materialized.empty()) return out;
  Destination* destination = dag.destination_of(asset);
  if (destination == nullptr) {
    out.gone = materialized;
    return out;
  }
  std::vector<PartitionCheck> checks = destination->check_partitions(asset.dataset(), window);
  for (const PartitionRange& range : materialized) {
    for (std::size_t i = range.first; i <= range.last && i < checks.size(); ++i) {
      if (checks[i].state == PartitionCheck::State::changed) {
        out.changed.push_back(std::move(checks[i]));
      } else if (checks[i].state == PartitionCheck::State::missing) {
        if (!out.gone.empty() && out.gone.back().last + 1 == i) {
          out.gone.back().last = i;
        } else {
          out.gone.push_back({i, i});
        }
      }
    }
  }
  return out;
}

}  // namespace

namespace {

// One asset's state over its window, as `status` prints it as text or JSON. Built once, from the
// store's ranges; the renderers only format it.
struct StatusReport {
  const Asset* asset = nullptr;
  // Unpartitioned assets: one state (missing, stale, materialized or failed) and its error.
  std::string state;
  std::string error;
  // Partitioned assets: the window and the ranges of each state in it.
  std::unique_ptr<PartitionWindow> window;
  WindowStatus status;
  std::vector<PartitionRange> stale;  // materialized by an older definition
  std::vector<FailedRange> failures;  // every one, or the first ones for text
  bool more_failures = false;         // text only: failures beyond those kept
  std::optional<Verified> verified;   // with --verify
};

constexpr std::size_t kShownFailures = 5;
constexpr std::size_t kShownRanges = 5;

StatusReport unpartitioned_status(MaterializationStore& store, const Asset& asset) {
  StatusReport report;
  report.asset = &asset;
  const auto latest = store.latest(asset.dataset(), nullptr);
  if (!latest) {
    report.state = "missing";
  } else if (latest->status == MaterializationStatus::failed) {
    report.state = "failed";
    report.error = latest->error;
  } else if (!latest->definition.empty() && latest->definition != asset.definition_fingerprint()) {
    report.state = "stale";
  } else {
    report.state = "materialized";
  }
  return report;
}

// The window `status` reports an asset over: --window if its partitioning accepts it (nullptr if
// not and no --asset named it), else from its start (or the last 30 periods) to now for time and
// every value for a list.
std::unique_ptr<PartitionWindow> status_window(const Asset& asset, const Args& args,
                                               TimePoint now) {
  const PartitionConfig& config = *asset.partitioning();
  if (args.window.empty()) {
    auto window = config.default_window(now, 30);
    if (!window) {
      throw UsageError(
          fmt::format("asset '{}': {} partitioning has no default window; pass --window",
                      asset.name(), config.kind()));
    }
    return window;
  }
  try {
    return own_window(config, args.window);
  } catch (const std::exception& e) {
    if (!args.assets.empty()) {
      throw UsageError(
          fmt::format("asset '{}': bad window '{}': {}", asset.name(), args.window, e.what()));
    }
    return nullptr;  // another kind or granularity: not this asset's window
  }
}

StatusReport partitioned_status(MaterializationStore& store, const DAG& dag, const Asset& asset,
                                std::unique_ptr<PartitionWindow> window, const Args& args) {
  StatusReport report;
  report.asset = &asset;
  report.window = std::move(window);
  const PartitionWindow& w = *report.window;
  report.status = store.status(asset.dataset(), w);
  report.stale = report.status.stale(asset.definition_fingerprint());
  const bool every_failure = args.json || args.all;
  report.failures =
      store.failures(asset.dataset(), w, every_failure ? SIZE_MAX : kShownFailures + 1);
  if (!every_failure && report.failures.size() > kShownFailures) {
    report.more_failures = true;
    report.failures.resize(kShownFailures);
  }
  if (args.verify) report.verified = verify_partitions(dag, asset, w, report.status.materialized);
  return report;
}

json status_json(const StatusReport& r) {
  json entry;
  entry["asset"] = r.asset->name();
  if (!r.window) {
    entry["window"] = nullptr;
    entry["state"] = r.state;
    if (r.state == "failed") entry["error"] = r.error;
    return entry;
  }
  const PartitionWindow& w = *r.window;
  entry["window"] = w.to_string();
  entry["partitions"] = w.size();
  entry["materialized"] = ranges_json(w, r.status.materialized);
  entry["failed"] = ranges_json(w, r.status.failed);
  entry["missing"] = ranges_json(w, r.status.missing);
  entry["stale"] = ranges_json(w, r.stale);
  json failures = json::array();
  for (const FailedRange& f : r.failures) {
    failures.push_back({{"partitions", ranges_json(w, {f.range})[0]},
                        {"run_id", f.record.run_id},
                        {"finished", f.record.finished.to_string()},
                        {"error", f.record.error}});
  }
  entry["failures"] = failures;
  if (r.verified) {
    entry["gone"] = ranges_json(w, r.verified->gone);
    json changed = json::array();
    for (const PartitionCheck& c : r.verified->changed) {
      changed.push_back({{"partition", c.key}, {"object", c.object}, {"reason", c.reason}});
    }
    entry["changed"] = changed;
  }
  return entry;
}

// The first ranges as keys, unless --all: a long history has thousands of them.
std::string ranges_text(const PartitionWindow& window, const std::vector<PartitionRange>& ranges,
                        bool all) {
  const json keys = ranges_json(window, ranges);
  std::string s;
  std::size_t shown = 0;
  for (const auto& key : keys) {
    if (!all && shown == kShownRanges) {
      s += fmt::format(", ... {} more ranges (--all lists them)", keys.size() - shown);
      break;
    }
    s += (s.empty() ? "" : ", ") + key.get<std::string>();
    ++shown;
  }
  return s.empty() ? std::string("-") : s;
}

// --verify's lines: the gone ranges, then each changed partition with its object and how it
// differs from what was written.
template <typename Line>
void print_verified(const Verified& verified, const Line& line) {
  line("gone", verified.gone);
  std::string keys;
  for (const PartitionCheck& c : verified.changed) keys += (keys.empty() ? "" : ", ") + c.key;
  std::cout << fmt::format("  {:<12} {:>6}  {}\n", "changed", verified.changed.size(),
                           keys.empty() ? "-" : keys);
  for (const PartitionCheck& c : verified.changed) {
    std::cout << fmt::format("    {}  {}: {}\n", c.key, c.object, c.reason);
  }
}

void print_status(const StatusReport& r, const Args& args, bool terminal) {
  const std::string& name = r.asset->name();
  if (!r.window) {
    std::cout << fmt::format("{}  (unpartitioned)  {}{}\n", name, r.state,
                             r.state == "failed" ? ": " + error_excerpt(r.error) : "");
    return;
  }
  const PartitionWindow& w = *r.window;
  const WindowStatus& status = r.status;
  auto line = [&](std::string_view label, const std::vector<PartitionRange>& ranges) {
    std::cout << fmt::format("  {:<12} {:>6}  {}\n", label, status.count(ranges),
                             ranges_text(w, ranges, args.all));
  };
  std::cout << fmt::format("{}  {}  ({} partition{})\n", name, w.to_string(), w.size(),
                           w.size() == 1 ? "" : "s");
  line("materialized", status.materialized);
  if (!r.stale.empty()) {
    std::cout << fmt::format(
        "    stale      {:>6}  {}  (written by an older definition; "
        "backfill --missing runs them again)\n",
        status.count(r.stale), ranges_text(w, r.stale, args.all));
  }
  line("failed", status.failed);
  for (const FailedRange& f : r.failures) {
    std::cout << fmt::format("    {}  {}\n", ranges_json(w, {f.range})[0].get<std::string>(),
                             error_excerpt(f.record.error));
  }
  if (r.more_failures) std::cout << "    ... more failures (--all or --json shows every one)\n";
  line("missing", status.missing);
  if (r.verified) print_verified(*r.verified, line);
  if (terminal) std::cout << "  " << strip(w, status, terminal_width() - 4) << "\n";
}

// The assets `status` reports on: --asset's, checked, or every asset in order.
std::vector<const Asset*> status_assets(const DAG& dag, const Args& args) {
  std::vector<const Asset*> assets;
  if (args.assets.empty()) return dag.order();
  for (const auto& name : args.assets) {
    const Asset* asset = dag.find(name);
    if (asset == nullptr) throw UsageError(fmt::format("unknown asset '{}'", name));
    assets.push_back(asset);
  }
  return assets;
}

}  // namespace

int run_status(const Project& project, const Args& args) {
  if (!args.queue.url.empty()) return queue_status(queue_project(project, args), args.queue);
  const std::vector<const Asset*> assets = status_assets(*project.dag, args);
  auto store = open_state_store(project.store_path, false);
  const TimePoint now = SystemClock().now();
  const bool terminal = !args.json && stdout_is_terminal();
  json out = json::array();
  bool any_window_accepted = args.window.empty();
  bool any_gone = false, any_changed = false;
  for (const Asset* asset : assets) {
    StatusReport report;
    if (asset->partitioning() == nullptr) {
      report = unpartitioned_status(*store, *asset);
    } else {
      auto window = status_window(*asset, args, now);
      if (!window) continue;
      any_window_accepted = true;
      report = partitioned_status(*store, *project.dag, *asset, std::move(window), args);
      any_gone = any_gone || (report.verified && !report.verified->gone.empty());
      any_changed = any_changed || (report.verified && !report.verified->changed.empty());
    }
    if (args.json) {
      out.push_back(status_json(report));
    } else if (!args.quiet) {
      print_status(report, args, terminal);
    }
  }
  if (!any_window_accepted) {
    throw UsageError(fmt::format("no asset accepts window '{}'", args.window));
  }
  if (args.json) std::cout << dump(out) << "\n";
  // The store still records these partitions as materialized, so --missing passes them by.
  constexpr const char* kRebuild =
      "; backfill --missing skips them, as the store records them as materialized: rebuild them "
      "with backfill --window or materialize --partition";
  if (any_gone) {
    print_error(args, fmt::format("some partitions recorded as materialized are gone from the "
                                  "destination{}",
                                  kRebuild));
  }
  if (any_changed) {
    print_error(args, fmt::format("some partitions recorded as materialized were changed in the "
                                  "destination since they were written (overwritten or truncated "
                                  "by someone else){}",
                                  kRebuild));
  }
  if (any_gone || any_changed) return kRunFailed;
  return kOk;
}

Command add_status(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("status",
                                 "Show materialized, failed and missing "
                                 "partitions");
  add_common(sub, args, program);
  sub->add_option("--window", args.window, "The window to report (default: see below)")
      ->type_name("A..B");
  sub->add_flag("--all", args.all,
                "List every range of each state (the text output shows the first five)");
  sub->add_flag("--verify", args.verify,
                "Check that partitions recorded as materialized are in the destination as "
                "they were written; exit 1 if some are gone or changed");
  sub->footer(fmt::format(
      "Without --window: time assets from their start (or the last 30 periods) to the\n"
      "current period, list assets over every value. --json prints one object per asset;\n"
      "-q prints nothing (with --verify, the exit code says whether partitions are gone).\n\n"
      "Examples:\n  {0} status{1} --window 2026-11-01..2026-11-30\n  {0} --json status{1}",
      program.name, program.target()));
  auto* queue =
      sub->add_option("--queue", args.queue.url, "Show the backfills of this queue instead")
          ->type_name("URL");
  sub->add_option("--backfill", args.queue.backfill, "With --queue: only this backfill")
      ->type_name("ID")
      ->needs(queue);
  return {sub, run_status, nullptr};
}

}  // namespace interloper::cli::detail
