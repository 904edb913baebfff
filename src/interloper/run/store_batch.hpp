// The store calls of a run, grouped: the outcomes of its tasks are recorded and their claims
// released in batches (one transaction each in the SQL stores) instead of one by one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "interloper/store.hpp"

namespace interloper::detail {

// The message of a caught exception, for a task's error (any type: user code may throw one not
// derived from std::exception).
std::string describe_exception(std::exception_ptr error);

// A batch is written when it holds `max` outcomes, when its oldest waited `delay`, and
// whatever waits when flush() is called (the end of a run, however it ends). An outcome is
// added only once the task's rows are in place, so the store never records a partition ahead
// of its rows: a record is only ever late, and a partition whose record was lost with the
// process (killed) reads as missing and runs again. A release is written after the records
// added before it.
class StoreBatch {
 public:
  // Called, outside any lock of the batch, for each task whose outcome could not be recorded.
  using Failed = std::function<void(std::size_t task, const std::string& error)>;

  StoreBatch(MaterializationStore& store, std::string owner, Failed failed, std::size_t max = 32,
             std::chrono::milliseconds delay = std::chrono::milliseconds(4));
  // Flushes what waits.
  ~StoreBatch();
  StoreBatch(const StoreBatch&) = delete;
  StoreBatch& operator=(const StoreBatch&) = delete;

  void record(std::size_t task, PartitionOutcome outcome);
  void release(ClaimRequest request);
  // Writes everything added so far before it returns.
  void flush();

 private:
  void added(std::unique_lock<std::mutex>& lock);
  void timer();
  void write_records(const std::vector<std::pair<std::size_t, PartitionOutcome>>& records,
                     std::size_t first, std::size_t last);

  MaterializationStore& store_;
  std::string owner_;
  Failed failed_;
  const std::size_t max_;
  const std::chrono::milliseconds delay_;

  std::mutex write_mutex_;  // one batch written at a time, in the order they were taken
  std::mutex mutex_;        // guards what follows
  std::condition_variable wake_;
  std::vector<std::pair<std::size_t, PartitionOutcome>> records_;
  std::vector<ClaimRequest> releases_;
  std::chrono::steady_clock::time_point oldest_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace interloper::detail
