// backfill: one task per (asset, partition) of a window, run newest first.
#include <fmt/format.h>

#include <stdexcept>

#include "interloper/plan.hpp"
#include "interloper/run.hpp"

namespace interloper {

BackfillResult backfill(const DAG& dag, const PartitionWindow& window,
                        const BackfillOptions& options) {
  if (options.concurrency < 1) {
    throw std::invalid_argument(
        fmt::format("backfill: concurrency must be at least 1, got {}", options.concurrency));
  }
  if (options.missing_only && options.run.store == nullptr) {
    throw RunError("backfill: missing_only needs a materialization store (options.run.store)");
  }
  PlanOptions plan_options;
  plan_options.scope = TaskScope::per_partition;
  plan_options.assets = options.run.assets;
  plan_options.missing_only = options.missing_only;
  plan_options.store = options.run.store;
  const Plan planned = plan(dag, &window, plan_options);
  if (options.on_plan) options.on_plan(planned.to_run(), planned.skipped());

  ExecuteOptions execute_options;
  execute_options.concurrency = options.concurrency;
  execute_options.fail_fast = options.fail_fast;
  execute_options.run = options.run;
  execute_options.on_task = options.on_task;
  execute_options.claim = options.claim;
  execute_options.claim_lease = options.claim_lease;
  execute_options.claim_owner = options.claim_owner;
  execute_options.missing_only = options.missing_only;
  return execute(dag, planned, execute_options);
}

}  // namespace interloper
