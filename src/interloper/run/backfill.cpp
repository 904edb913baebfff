// backfill: one run per partition of a window, newest first, on a small pool of threads.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_set>

#include "interloper/run.hpp"
#include "interloper/run/run_id.hpp"

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

// The datasets a partition run claims: those of the selected, enabled, partitioned assets.
std::vector<DatasetRef> claimed_datasets(const DAG& dag, const RunOptions& options) {
  std::unordered_set<std::string_view> chosen(options.assets.begin(), options.assets.end());
  std::vector<DatasetRef> out;
  for (const Asset* asset : dag.order()) {
    if (!asset->enabled() || asset->partitioning() == nullptr) continue;
    if (!chosen.empty() && chosen.count(asset->name()) == 0) continue;
    out.push_back(asset->dataset());
  }
  return out;
}

std::string default_owner(const Clock& clock) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}:{}", host, ::getpid(), detail::generate_run_id(clock));
}

// Renews `owner`'s claims every third of the lease until stopped.
class Heartbeat {
 public:
  Heartbeat(MaterializationStore& store, const Clock& clock, std::string owner,
            std::chrono::seconds lease)
      : thread_([this, &store, &clock, owner = std::move(owner), lease] {
          std::unique_lock lock(mutex_);
          const auto every = std::chrono::duration_cast<std::chrono::milliseconds>(lease) / 3;
          while (!wake_.wait_for(lock, every, [this] { return stop_; })) {
            try {
              store.renew(owner, TimePoint(clock.now().seconds() + lease));
            } catch (const std::exception&) {
              // A busy store misses one beat; the next one tries again.
            }
          }
        }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

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

  // Claims: taken per partition just before it runs, released when it has run.
  MaterializationStore* const store = options.run.store;
  const std::vector<DatasetRef> to_claim = options.claim && store != nullptr
                                               ? claimed_datasets(dag, options.run)
                                               : std::vector<DatasetRef>{};
  const SystemClock system_clock;
  const Clock& clock = options.run.clock != nullptr ? *options.run.clock : system_clock;
  const std::string owner = to_claim.empty()              ? std::string()
                            : options.claim_owner.empty() ? default_owner(clock)
                                                          : options.claim_owner;
  std::optional<Heartbeat> heartbeat;
  if (!to_claim.empty() && !plan.empty())
    heartbeat.emplace(*store, clock, owner, options.claim_lease);

  enum class Unrun : char { not_started, claimed_elsewhere, done_meanwhile };
  std::vector<Unrun> unrun(plan.size(), Unrun::not_started);
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
      const std::unique_ptr<PartitionWindow> one = partition->as_window();
      RunResult run;
      try {
        if (!to_claim.empty()) {
          const TimePoint now = clock.now();
          const Claim mine{owner, TimePoint(now.seconds() + options.claim_lease)};
          if (store->claim(to_claim, one.get(), mine, now)) {
            unrun[slot] = Unrun::claimed_elsewhere;
            continue;
          }
          // Another run may have finished it between the plan and the claim.
          if (options.missing_only && !materialized_everywhere(dag, *one, options.run).empty()) {
            store->release(to_claim, one.get(), owner);
            unrun[slot] = Unrun::done_meanwhile;
            continue;
          }
        }
        RunOptions run_options = options.run;
        if (!run_options.run_id.empty()) run_options.run_id += "-" + partition->key();
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
      if (!to_claim.empty()) {
        try {
          store->release(to_claim, one.get(), owner);
        } catch (const std::exception&) {
          // Left to lapse with its lease.
        }
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
  heartbeat.reset();

  for (std::size_t slot = 0; slot < plan.size(); ++slot) {
    if (runs[slot]) {
      result.runs.push_back(std::move(*runs[slot]));
    } else if (unrun[slot] == Unrun::claimed_elsewhere) {
      result.claimed.push_back(window.partition_at(plan[slot])->key());
    } else {
      result.skipped.push_back(window.partition_at(plan[slot])->key());
    }
  }
  return result;
}

}  // namespace interloper
