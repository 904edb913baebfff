// A program whose assets are defined in C++ gets the whole `interloper` command line from one
// call. The commands are the same as the YAML tool's, without the PIPELINE argument:
//
//   ./custom_cli check
//   ./custom_cli backfill --window 2026-11-01..2026-11-07 --store custom_cli_state.db
//   ./custom_cli status --window 2026-11-01..2026-11-07 --store custom_cli_state.db
//   ./custom_cli catalog
#include <chrono>
#include <memory>

#include "interloper/cli.hpp"
#include "interloper/dag.hpp"
#include "interloper/destination.hpp"
#include "interloper/interloper.hpp"

int main(int argc, char** argv) {
  using namespace std::chrono;
  auto warehouse = std::make_shared<il::SqliteDestination>("custom_cli.db");

  il::Source shop("shop", warehouse);
  // Daily visits: a made-up count derived from the day, so reruns give the same rows.
  shop.asset(
          "visits",
          [](il::ExecutionContext& ctx) {
            year_month_day day = ctx.partition_date();
            il::Table rows;
            rows.append({{"date", day}, {"visits", std::int64_t{100} + unsigned(day.day()) * 7}});
            return rows;
          })
      .partitioning(il::TimePartitionConfig("date"));
  // Twice the visits, read back from the upstream through the context.
  shop.asset("visits_doubled",
             [](il::ExecutionContext& ctx) {
               il::Table visits = ctx.load("visits");
               il::Table rows;
               for (std::size_t i = 0; i < visits.num_rows(); ++i) {
                 rows.append({{"date", visits.at(i, "date")},
                              {"visits", visits.at(i, "visits").as_int() * 2}});
               }
               return rows;
             })
      .partitioning(il::TimePartitionConfig("date"))
      .deps({"visits"});

  return il::cli::main(argc, argv, il::DAG({shop}));
}
