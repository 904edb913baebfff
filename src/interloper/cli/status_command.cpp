// `interloper status`: each asset's materialized, failed and missing partitions.
#include "interloper/cli/cli_internal.hpp"
#include "interloper/run/asset_status.hpp"

namespace interloper::cli::detail {

namespace {

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

constexpr std::size_t kShownFailures = 5;
constexpr std::size_t kShownRanges = 5;

// The first ranges as keys, unless --all: a long history has thousands of them.
std::string ranges_text(const PartitionWindow& window, const std::vector<PartitionRange>& ranges,
                        bool all) {
  const json keys = status_ranges_json(window, ranges);
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
void print_verified(const VerifiedPartitions& verified, const Line& line) {
  line("gone", verified.gone);
  std::string keys;
  for (const PartitionCheck& c : verified.changed) keys += (keys.empty() ? "" : ", ") + c.key;
  std::cout << fmt::format("  {:<12} {:>6}  {}\n", "changed", verified.changed.size(),
                           keys.empty() ? "-" : keys);
  for (const PartitionCheck& c : verified.changed) {
    std::cout << fmt::format("    {}  {}: {}\n", c.key, c.object, c.reason);
  }
}

void print_status(const AssetStatus& r, const Args& args, bool terminal) {
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
    std::cout << fmt::format("    {}  {}\n", status_ranges_json(w, {f.range})[0].get<std::string>(),
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
  StatusOptions options;
  if (!args.json && !args.all) options.max_failures = kShownFailures;
  options.verify = args.verify;
  std::vector<AssetStatus> reports;
  try {
    reports = status_report(*store, *project.dag,
                            args.assets.empty() ? std::vector<const Asset*>() : assets, args.window,
                            now, options);
  } catch (const PartitionError& e) {
    throw UsageError(e.what());  // a window the assets do not take
  }
  json out = json::array();
  bool any_gone = false, any_changed = false;
  for (const AssetStatus& report : reports) {
    any_gone = any_gone || (report.verified && !report.verified->gone.empty());
    any_changed = any_changed || (report.verified && !report.verified->changed.empty());
    if (args.json) {
      out.push_back(status_json(report));
    } else if (!args.quiet) {
      print_status(report, args, terminal);
    }
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
