#pragma once

// The JSON API of `interloper serve`: answers the pages' requests from the DAG and the
// materialization store, the pipeline's jobs and, when given, the backfill queue. Knows nothing
// of HTTP; the server (server.cpp) maps requests to it.

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "interloper/dag.hpp"
#include "interloper/schedule.hpp"
#include "interloper/store.hpp"

namespace interloper::queue {
class Queue;
}

namespace interloper::serve {

// One answer: an HTTP status and a JSON body.
struct Response {
  int status = 200;
  std::string body;
};

// Cells of a grid answered one per partition up to this many; larger windows come in buckets.
inline constexpr std::size_t kMaxCells = 10000;
// Next fires shown per job.
inline constexpr std::size_t kShownFires = 3;
// The most partitions a run started from the page may cover, unless the server says otherwise
// (serve --max-run-partitions).
inline constexpr std::size_t kMaxRunPartitions = 100000;

// Starts a backfill of the missing partitions of `asset` over `window` (as text; "" for an
// unpartitioned asset). Returns false, starting nothing, when the backfill it started earlier
// for the same asset still runs; throws when it cannot start one.
using StartBackfill = std::function<bool(const std::string& asset, const std::string& window)>;

// What the API reads besides the DAG and the store.
struct ApiOptions {
  ApiOptions();
  ~ApiOptions();  // out of line: queue::Queue is incomplete here
  ApiOptions(ApiOptions&&) noexcept;
  ApiOptions& operator=(ApiOptions&&) noexcept;

  // The name the run history files the pipeline's runs under (as `interloper runs` reads it).
  std::string pipeline;
  // The window every asset is shown over by default, each asset its own share of it as
  // `status --window` gives it (an asset whose partitioning does not take it: its default
  // window); "" for each asset's default window (as `status` has it).
  std::string window;
  // The pipeline's jobs: /api/runs gives each one's next fires.
  std::vector<Job> jobs;
  // The queue whose backfills /api/runs shows (nullptr: none), and the name the pipeline's
  // backfills are filed under in it.
  std::unique_ptr<queue::Queue> queue;
  std::string queue_pipeline;
  // Where "now" comes from (default windows, next fires); nullptr: the system clock. Not owned.
  const Clock* clock = nullptr;
};

class Api {
 public:
  Api(const DAG& dag, std::shared_ptr<MaterializationStore> store, ApiOptions options);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Answers GET `path` (starting with /api/) with the query parameter `window` ("" when
  // absent). /api/status answers exactly what `status --json --window W` prints (W: the
  // parameter, else the server's window). Unknown asset or bad window: 400 with {"error": ...};
  // unknown path: 404; a store that fails: 500 with {"error": ...} (a queue that fails shows in
  // /api/runs as its "error"). Thread-safe: requests are answered one at a time.
  Response get(const std::string& path, const std::string& window);

  // Checks a request to backfill the missing partitions of `asset` over the window `text` (its
  // default window when empty) and, when it is good, calls `start(asset, window)` with the
  // window as text ("" for an unpartitioned asset) and answers {"asset", "window", "started"}.
  // Unknown asset or bad window: 400; a window of more than `max_partitions` partitions: 422;
  // in those cases `start` is not called. `start` says the asset's earlier backfill still runs:
  // 409. What `start` throws: 500. Every refusal's {"error"} says why.
  Response backfill(const std::string& asset, const std::string& text, const StartBackfill& start,
                    std::size_t max_partitions = kMaxRunPartitions);

 private:
  Response overview();
  Response status(const std::string& window);
  nlohmann::ordered_json overview_entry(const Asset& asset, TimePoint at);
  // The window `asset` is shown over: its share of `text`, or, when `text` is empty, of the
  // server's window (when its partitioning takes that), or its default window.
  std::unique_ptr<PartitionWindow> window_of(const Asset& asset, const std::string& text,
                                             TimePoint at) const;
  Response grid(const std::string& asset, const std::string& window);
  Response partition(const std::string& asset, const std::string& key);
  Response lineage();
  Response runs();
  TimePoint now() const;
  // The description of the asset's source; "" when it has none.
  const std::string& source_description(const Asset& asset) const;

  const DAG& dag_;
  std::unordered_map<std::string, std::string> source_descriptions_;  // by source name
  std::shared_ptr<MaterializationStore> store_;
  ApiOptions options_;
  std::mutex mutex_;
};

}  // namespace interloper::serve
