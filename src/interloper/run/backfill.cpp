// backfill: one run per partition of a window, newest first, on a small pool of threads.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "interloper/run.hpp"

namespace interloper {

namespace {

// Intersection of two sorted lists of disjoint ranges.
std::vector<PartitionRange> intersect(const std::vector<PartitionRange>& a,
                                      const std::vector<PartitionRange>& b) {
  std::vector<PartitionRange> out;
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const std::size_t lo = std::max(a[i].first, b[j].first);
    const std::size_t hi = std::min(a[i].last, b[j].last);
    if (lo <= hi) out.push_back({lo, hi});
    if (a[i].last < b[j].last) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

// The partitions (by index) materialized for every selected, enabled, partitioned asset.
std::vector<PartitionRange> materialized_everywhere(const DAG& dag, const PartitionWindow& window,
                                                    const RunOptions& options) {
  std::unordered_set<std::string_view> chosen(options.assets.begin(), options.assets.end());
  std::optional<std::vector<PartitionRange>> done;
  for (const Asset* asset : dag.order()) {
    if (!asset->enabled() || asset->partitioning() == nullptr) continue;
    if (!chosen.empty() && chosen.count(asset->name()) == 0) continue;
    WindowStatus status = options.store->status(asset->dataset(), window);
    done = done ? intersect(*done, status.materialized) : std::move(status.materialized);
    if (done->empty()) break;
  }
  return done ? *done : std::vector<PartitionRange>{};
}

// Every run of a backfill covers one partition, so allow_window does not matter; kind,
// granularity and start do. The oldest and newest partitions stand for the whole window
// (every partition has the same kind and shape, and the oldest reaches furthest back).
void validate_partitions(const DAG& dag, const PartitionWindow& window, const RunOptions& options) {
  std::unordered_set<std::string_view> chosen;
  for (const std::string& name : options.assets) chosen.insert(dag.asset(name).name());
  const std::unique_ptr<PartitionWindow> oldest = window.partition_at(0)->as_window();
  const std::unique_ptr<PartitionWindow> newest =
      window.partition_at(window.size() - 1)->as_window();
  std::string failures;
  for (const Asset* asset : dag.order()) {
    if (!asset->enabled()) continue;
    if (!chosen.empty() && chosen.count(asset->name()) == 0) continue;
    try {
      asset->check(oldest.get());
      asset->check(newest.get());
    } catch (const PartitionError& e) {
      if (!failures.empty()) failures += '\n';
      failures += e.what();
    }
  }
  if (!failures.empty()) throw PartitionError(failures);
}

}  // namespace

BackfillResult backfill(const DAG& dag, const PartitionWindow& window,
                        const BackfillOptions& options) {
  if (options.concurrency < 1) {
    throw std::invalid_argument(
        fmt::format("backfill: concurrency must be at least 1, got {}", options.concurrency));
  }
  if (options.missing_only && options.run.store == nullptr) {
    throw RunError("backfill: missing_only needs a materialization store (options.run.store)");
  }
  validate_partitions(dag, window, options.run);

  BackfillResult result;
  // Newest first, leaving out what is already materialized everywhere.
  std::vector<PartitionRange> done;
  if (options.missing_only) done = materialized_everywhere(dag, window, options.run);
  std::vector<std::size_t> plan;
  std::size_t next_done = done.size();  // walk the done ranges backwards with the indices
  for (std::size_t k = window.size(); k-- > 0;) {
    while (next_done > 0 && done[next_done - 1].first > k) --next_done;
    if (next_done > 0 && done[next_done - 1].last >= k) {
      result.skipped.push_back(window.partition_at(k)->key());
    } else {
      plan.push_back(k);
    }
  }

  if (options.on_plan) options.on_plan(plan.size(), result.skipped.size());

  std::vector<std::optional<RunResult>> runs(plan.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  const SerialRunner runner;
  auto work = [&] {
    while (true) {
      const std::size_t slot = next.fetch_add(1);
      if (slot >= plan.size()) return;
      if (options.fail_fast && stop.load()) continue;  // left unrun: reported as skipped
      const std::unique_ptr<Partition> partition = window.partition_at(plan[slot]);
      RunOptions run_options = options.run;
      if (!run_options.run_id.empty()) run_options.run_id += "-" + partition->key();
      RunResult run;
      try {
        run = runner.run(dag, *partition, run_options);
      } catch (const std::exception& e) {
        run.window = partition->key();
        run.status = Status::failed;
        AssetResult failure;
        failure.asset = "(run)";
        failure.status = Status::failed;
        failure.error = e.what();
        run.assets.push_back(std::move(failure));
      }
      if (!run.ok()) stop.store(true);
      runs[slot] = std::move(run);
    }
  };
  const std::size_t threads_wanted =
      std::min<std::size_t>(static_cast<std::size_t>(options.concurrency), plan.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < threads_wanted; ++t) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();

  for (std::size_t slot = 0; slot < plan.size(); ++slot) {
    if (runs[slot]) {
      result.runs.push_back(std::move(*runs[slot]));
    } else {
      result.skipped.push_back(window.partition_at(plan[slot])->key());
    }
  }
  return result;
}

}  // namespace interloper
