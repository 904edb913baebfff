// A daily ads_stats asset: one partition, then a backfill of a week, in memory.
#include <chrono>
#include <interloper/interloper.hpp>
#include <iostream>
#include <memory>

int main() {
  using namespace std::chrono;
  auto warehouse = std::make_shared<il::MemoryDestination>();

  il::Source ads("ads", warehouse);
  ads.asset("ads_stats",
            [](il::ExecutionContext& ctx) {
              const year_month_day date = ctx.partition_date();
              ctx.logger().info("fetching ads stats");
              il::Table rows;
              for (const char* campaign : {"spring", "summer"}) {
                rows.append({{"date", date},
                             {"campaign", campaign},
                             {"clicks", static_cast<int>(unsigned(date.day())) * 10}});
              }
              return rows;
            })
      .partitioning(il::TimePartitionConfig("date"));
  il::DAG dag({ads});

  // One partition.
  il::SerialRunner runner;
  il::RunResult one = runner.run(dag, il::TimePartition(year{2026} / 1 / 15));
  std::cout << one.run_id << " " << one.window << " " << il::status_name(one.status) << ", "
            << one.asset("ads_stats").rows << " rows\n";

  // A week, newest first, two partitions at a time, with a progress line per asset.
  il::EventBus events;
  events.subscribe([](const il::Event& event) {
    if (event.type == il::EventType::asset_completed) {
      std::cout << "  " << event.window << " " << event.asset << ": " << event.rows << " rows\n";
    }
  });
  il::MemoryStore store;
  il::BackfillOptions options;
  options.concurrency = 2;
  options.run.events = &events;
  options.run.store = &store;
  il::TimePartitionWindow week(year{2026} / 1 / 1, year{2026} / 1 / 7);
  il::BackfillResult result = il::backfill(dag, week, options);
  std::cout << "backfill " << week << ": " << result.succeeded() << " succeeded, "
            << result.failed() << " failed\n";

  const il::Asset& asset = dag.asset("ads_stats");
  for (const il::PartitionCount& count : warehouse->partition_counts(asset.dataset(), week)) {
    std::cout << "  " << count.key << ": " << count.rows << " rows\n";
  }
  std::cout << warehouse->read(asset.dataset(), &week).to_string();
  return result.ok() ? 0 : 1;
}
