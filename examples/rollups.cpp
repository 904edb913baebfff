// Three granularities in one DAG: hourly page views, a daily rollup and a monthly report.
// A backfill of November runs each asset's own partitions inside it (720 hours, 30 days, one
// month), every partition after the partitions it reads; load() returns exactly those.
#include <chrono>
#include <interloper/interloper.hpp>
#include <iostream>
#include <memory>

namespace {

// Sums the "views" column of `rows`.
std::int64_t total_views(const il::Table& rows) {
  std::int64_t total = 0;
  for (std::size_t i = 0; i < rows.num_rows(); ++i) total += rows.at(i, "views").as_int();
  return total;
}

il::TimePartitionConfig every(il::TimeGranularity granularity, const char* column) {
  return il::TimePartitionConfig(column, {.granularity = granularity});
}

}  // namespace

int main() {
  using namespace std::chrono;
  auto warehouse = std::make_shared<il::MemoryDestination>();

  il::Source web("web", warehouse);
  web.asset("pageviews",
            [](il::ExecutionContext& ctx) {
              const il::TimePoint hour = ctx.partition_start();
              const auto hour_of_day = (hour.epoch_seconds() / 3600) % 24;
              il::Table rows;
              rows.append({{"hour", hour.seconds()}, {"views", 10 + hour_of_day}});
              return rows;
            })
      .partitioning(every(il::TimeGranularity::HOUR, "hour"));
  web.asset("daily_views",
            [](il::ExecutionContext& ctx) {
              il::Table rows;  // the day's 24 hours, whatever else is stored
              rows.append({{"date", ctx.partition_date()},
                           {"views", total_views(ctx.load("pageviews"))}});
              return rows;
            })
      .partitioning(every(il::TimeGranularity::DAY, "date"))
      .deps({"pageviews"});
  web.asset("monthly_report",
            [](il::ExecutionContext& ctx) {
              const il::Table days = ctx.load("daily_views");  // the days of the month
              il::Table rows;
              rows.append({{"month", ctx.partition_start().date()},
                           {"days", static_cast<std::int64_t>(days.num_rows())},
                           {"views", total_views(days)}});
              return rows;
            })
      .partitioning(every(il::TimeGranularity::MONTH, "month"))
      .deps({"daily_views"});
  il::DAG dag({web});

  const il::TimePartitionWindow november(year{2026} / 11 / 1, year{2026} / 11 / 30);
  il::BackfillOptions options;
  options.concurrency = 2;
  il::BackfillResult result = il::backfill(dag, november, options);
  std::cout << "backfill " << november.to_string() << ": " << result.succeeded() << " tasks, "
            << result.failed() << " failed\n";

  const il::Table report = warehouse->read(dag.asset("monthly_report").dataset(), nullptr);
  std::cout << "monthly_report: " << report.at(0, "days").as_int() << " days, "
            << report.at(0, "views").as_int() << " views\n";
  return result.ok() ? 0 : 1;
}
