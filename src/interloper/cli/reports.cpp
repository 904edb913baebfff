// `interloper runs` and `interloper catalog`.
#include "interloper/cli/cli_internal.hpp"
#include "interloper/run/report_json.hpp"

namespace interloper::cli::detail {

int run_runs(const Project& project, const Args& args) {
  auto store = open_state_store(project.store_path, false);
  const std::vector<RunRecord> runs =
      store->runs(history_name(args), static_cast<std::size_t>(args.last));
  if (args.json) {
    json out = json::array();
    for (const RunRecord& r : runs) out.push_back(run_json(r));
    std::cout << dump(out) << "\n";
    return kOk;
  }
  if (runs.empty()) std::cout << "no runs recorded\n";
  for (const RunRecord& r : runs) {
    std::cout << fmt::format(
        "{}  {}  {}  {}  {} partition{}: {} ok, {} failed, {} canceled, {} skipped  ({}s)\n",
        r.run_id, run_state_name(r.state), r.started.to_string(), r.window.empty() ? "-" : r.window,
        r.partitions, r.partitions == 1 ? "" : "s", r.succeeded, r.failed, r.canceled, r.skipped,
        (r.finished.seconds() - r.started.seconds()).count());
    std::cout << "    " << r.command_line << "\n";
  }
  return kOk;
}

int run_catalog(const Project& project, const Args& args) {
  const std::vector<CatalogEntry> entries = catalog(*project.dag, project.pipeline, true);
  if (args.text) {
    std::cout << catalog_text(entries);
  } else {
    std::cout << catalog_json(entries) << "\n";
  }
  return kOk;
}

Command add_runs(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("runs", "Show the latest runs from the run history");
  sub->fallthrough();
  if (program.yaml) {
    add_pipeline(sub, args);
  } else {
    add_store(sub, args);
  }
  sub->add_option("--last", args.last, "How many runs, newest first")
      ->type_name("N")
      ->check(whole_number(1, "POSITIVE"))
      ->default_str("20");
  sub->footer(fmt::format(
      "Every materialize and backfill is recorded when it starts and when it ends, with\n"
      "what it ran: ok, failed, canceled (not started: an upstream failed, --fail-fast, or\n"
      "an interrupt) and skipped (up to date, or claimed by another run). A run\n"
      "stopped by SIGINT or SIGTERM ends as interrupted, and one still shown as running\n"
      "either runs or was killed outright. The store keeps the newest --keep-runs runs\n"
      "(1000 unless a run says otherwise).\n\n"
      "Examples:\n  {0} runs{1}\n  {0} --json runs{1} --last 5",
      program.name, program.target()));
  return {sub, run_runs, nullptr};
}

Command add_catalog(CLI::App& app, Args& args, const Program& program) {
  auto* sub = app.add_subcommand("catalog", "Print every asset's definition as JSON");
  sub->fallthrough();
  if (program.yaml) {
    add_pipeline(sub, args);
  } else {
    sub->add_option("--destination", args.destination,
                    "Destination URL for assets whose source sets none")
        ->type_name("URL");
  }
  sub->add_flag("--text", args.text,
                "Print for people: a few lines per asset, one per stored column");
  sub->footer(fmt::format(
      "Each asset's stored schema is read from its destination. A partitioned dataset keeps\n"
      "every column it ever stored; \"retired_columns\" (marked \"retired\" with --text) names\n"
      "those its latest write did not produce, such as a column the asset renamed.\n\n"
      "Examples:\n  {0} catalog{1}\n  {0} catalog{1} --text",
      program.name, program.target()));
  return {sub, run_catalog, nullptr};
}

}  // namespace interloper::cli::detail
