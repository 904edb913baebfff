#pragma once

// The JSON API of `interloper serve`: answers the pages' requests from the DAG and the
// materialization store. Knows nothing of HTTP; the server (server.cpp) maps requests to it.

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "interloper/dag.hpp"
#include "interloper/store.hpp"

namespace interloper::serve {

// One answer: an HTTP status and a JSON body.
struct Response {
  int status = 200;
  std::string body;
};

// Cells of a grid answered one per partition up to this many; larger windows come in buckets.
inline constexpr std::size_t kMaxCells = 10000;

class Api {
 public:
  // `pipeline` names the run history to show (as `interloper runs` does); `window`, when not
  // empty, is the window the overview counts over instead of each asset's default one.
  Api(const DAG& dag, std::shared_ptr<MaterializationStore> store, std::string pipeline,
      std::string window);

  // Answers GET `path` (starting with /api/) with the query parameter `window` ("" when
  // absent). Unknown asset or bad window: 400 with {"error": ...}; unknown path: 404.
  // Thread-safe: requests are answered one at a time.
  Response get(const std::string& path, const std::string& window);

  // The window `text` of a partitioned asset, or its default window when `text` is empty, as
  // text; "" for an unpartitioned asset. Throws PartitionError for a bad window.
  std::string window_of(const std::string& asset, const std::string& text);

 private:
  Response overview();
  Response grid(const std::string& asset, const std::string& window);
  Response partition(const std::string& asset, const std::string& key);
  Response lineage();
  Response runs();

  const DAG& dag_;
  std::shared_ptr<MaterializationStore> store_;
  std::string pipeline_;
  std::string window_;
  std::mutex mutex_;
};

}  // namespace interloper::serve
