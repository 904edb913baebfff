// A windowed asset (allow_window): one call fetches a whole week, stored per day.
#include <chrono>
#include <interloper/interloper.hpp>
#include <iostream>
#include <memory>

int main() {
  using namespace std::chrono;
  auto warehouse = std::make_shared<il::MemoryDestination>();

  il::Source api("api", warehouse);
  api.asset("visits",
            [](il::ExecutionContext& ctx) {
              // One request for the whole window instead of one per day.
              const il::TimePartitionWindow window = *ctx.time_window();
              ctx.logger().info("one request for " + window.to_string());
              il::Table rows;
              int visits = 100;
              for (il::TimePartition day : window) {
                rows.append({{"date", day.value().date()}, {"visits", visits += 7}});
              }
              return rows;
            })
      .partitioning(il::TimePartitionConfig("date", {.allow_window = true}));
  il::DAG dag({api});

  il::RunOptions options;
  options.logger =
      il::Logger([](il::LogLevel level, std::string_view asset, std::string_view message) {
        std::cout << "[" << il::log_level_name(level) << "] " << asset << ": " << message << "\n";
      });
  il::TimePartitionWindow week(year{2026} / 3 / 2, year{2026} / 3 / 8);
  il::RunResult result = il::SerialRunner().run(dag, week, options);
  std::cout << result.window << ": " << il::status_name(result.status) << ", "
            << result.asset("visits").rows << " rows\n";
  for (const il::PartitionCount& count :
       warehouse->partition_counts(dag.asset("visits").dataset(), week)) {
    std::cout << "  " << count.key << ": " << count.rows << " row\n";
  }
  return result.ok() ? 0 : 1;
}
