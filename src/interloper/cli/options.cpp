// Options several commands share, registered the same way by each.
#include "interloper/cli/cli_internal.hpp"

namespace interloper::cli::detail {

const char* const kInterruptHelp =
    "--fail-fast: after the first failure nothing new starts; what already runs finishes and\n"
    "is recorded; the rest is canceled.\n"
    "Ctrl-C (SIGINT) or SIGTERM: nothing new starts, running commands get SIGTERM and, 3s\n"
    "later, SIGKILL (a second Ctrl-C: at once); their partitions are recorded as failed\n"
    "(\"interrupted\"), the summary is printed, exit 130 (SIGINT) or 143 (SIGTERM). A C++\n"
    "asset cannot be stopped: the process exits 2s after the SIGKILL if one still runs.\n\n";

CLI::Validator whole_number(long long min, const std::string& name) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        long long value = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (ec == std::errc::result_out_of_range) return fmt::format("'{}' is too large", text);
        if (ec != std::errc() || ptr != end || value < min) {
          return fmt::format("must be a whole number of at least {}, not '{}'", min, text);
        }
        if (value > std::numeric_limits<int>::max()) return fmt::format("'{}' is too large", text);
        return "";
      },
      name);
}

void add_pipeline(CLI::App* sub, Args& args) {
  sub->add_option("pipeline", args.pipeline, "The pipeline file (YAML)")
      ->required()
      ->type_name("PIPELINE");
}

void add_store(CLI::App* sub, Args& args) {
  sub->add_option("--store", args.store, "The materialization store (SQLite file)")
      ->default_str(".interloper/state.db")
      ->type_name("PATH");
}

void add_common(CLI::App* sub, Args& args, const Program& program) {
  sub->fallthrough();
  if (program.yaml) {
    add_pipeline(sub, args);
  } else {
    add_store(sub, args);
    sub->add_option("--destination", args.destination,
                    "Destination URL for assets whose source sets none "
                    "(sqlite:///path.db, file:///dir?format=csv)")
        ->type_name("URL");
  }
  sub->add_option("--asset", args.assets,
                  "Only these assets (each must accept the window); NAME+ adds what reads it, "
                  "+NAME what it reads")
      ->type_name("NAME");
}

void add_window_options(CLI::App* sub, Args& args, bool lookback) {
  auto* partition = sub->add_option("--partition", args.partition,
                                    "One partition by key: 2026-11-03, 2026-11, eu")
                        ->type_name("KEY");
  auto* window = sub->add_option("--window", args.window,
                                 "A window of partitions, both ends inclusive: "
                                 "2026-11-01..2026-11-30 or eu..us")
                     ->type_name("A..B");
  partition->excludes(window);
  if (!lookback) return;
  auto* lb = sub->add_option("--lookback", args.lookback,
                             "The last N partitions, ending --offset partitions before the "
                             "current one")
                 ->type_name("N")
                 ->check(whole_number(1, "POSITIVE"));
  sub->add_option("--offset", args.offset, "Partitions to skip back from the current one")
      ->type_name("K")
      ->check(whole_number(0, "NONNEGATIVE"))
      ->needs(lb);
  sub->add_option("--time-zone", args.time_zone, "Calendar of --lookback (IANA name)")
      ->type_name("ZONE")
      ->default_str("UTC")
      ->needs(lb);
  lb->excludes(partition)->excludes(window);
}

void add_keep_runs(CLI::App* sub, Args& args) {
  sub->add_option("--keep-runs", args.keep_runs,
                  "Runs of this pipeline the run history keeps (oldest dropped)")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("1000");
}

}  // namespace interloper::cli::detail
