// Sales partitioned by a declared list of regions, plus a downstream total per region.
#include <interloper/interloper.hpp>
#include <iostream>
#include <memory>

int main() {
  auto warehouse = std::make_shared<il::MemoryDestination>();
  const il::ListPartitionConfig regions("region", {"eu", "us", "apac"});

  il::Source shop("shop", warehouse);
  shop.asset("sales",
             [](il::ExecutionContext& ctx) {
               const std::string region = ctx.partition().key();
               il::Table rows;
               for (int order = 1; order <= 3; ++order) {
                 rows.append({{"region", region}, {"order", order}, {"amount", 19.5 * order}});
               }
               return rows;
             })
      .partitioning(regions);
  shop.asset("sales_total",
             [](il::ExecutionContext& ctx) {
               il::Table sales = ctx.load("sales");
               double total = 0;
               for (const il::Value& amount : sales.column("amount")) total += amount.as_double();
               il::Table rows;
               rows.append({{"region", ctx.partition().key()}, {"total", total}});
               return rows;
             })
      .partitioning(regions)
      .deps({"sales"});
  il::DAG dag({shop});

  il::ThreadedRunner runner(2);
  for (const std::string& region : regions.values()) {
    il::RunResult result = runner.run(dag, il::ListPartition(region));
    std::cout << region << ": " << il::status_name(result.status) << "\n";
  }
  const auto all = regions.window("eu", "apac");
  std::cout << warehouse->read(dag.asset("sales_total").dataset(), &all).to_string();
  return 0;
}
