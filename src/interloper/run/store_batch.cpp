// The store calls of a run, grouped (see store_batch.hpp).
#include "interloper/run/store_batch.hpp"

#include <algorithm>
#include <exception>
#include <utility>

namespace interloper::detail {

std::string describe_exception(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception (a type not derived from std::exception)";
  }
}

StoreBatch::StoreBatch(MaterializationStore& store, std::string owner, Failed failed,
                       std::size_t max, std::chrono::milliseconds delay)
    : store_(store),
      owner_(std::move(owner)),
      failed_(std::move(failed)),
      max_(max),
      delay_(delay),
      thread_([this] { timer(); }) {}

StoreBatch::~StoreBatch() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  flush();
}

void StoreBatch::record(std::size_t task, PartitionOutcome outcome) {
  std::unique_lock lock(mutex_);
  records_.emplace_back(task, std::move(outcome));
  added(lock);
}

void StoreBatch::release(ClaimRequest request) {
  std::unique_lock lock(mutex_);
  releases_.push_back(std::move(request));
  added(lock);
}

// Requires `lock` on mutex_, which it may give up.
void StoreBatch::added(std::unique_lock<std::mutex>& lock) {
  if (records_.size() + releases_.size() == 1) {
    oldest_ = std::chrono::steady_clock::now();
    wake_.notify_one();
  }
  if (records_.size() < max_ && releases_.size() < max_) return;
  lock.unlock();
  flush();
}

void StoreBatch::flush() {
  std::lock_guard writing(write_mutex_);
  std::vector<std::pair<std::size_t, PartitionOutcome>> records;
  std::vector<ClaimRequest> releases;
  {
    std::lock_guard lock(mutex_);
    records.swap(records_);
    releases.swap(releases_);
  }
  // Batches of at most max_ (workers add while one is written), every record before any
  // release.
  for (std::size_t at = 0; at < records.size(); at += max_) {
    write_records(records, at, std::min(records.size(), at + max_));
  }
  for (std::size_t at = 0; at < releases.size(); at += max_) {
    std::vector<ClaimRequest> part(
        releases.begin() + static_cast<std::ptrdiff_t>(at),
        releases.begin() + static_cast<std::ptrdiff_t>(std::min(releases.size(), at + max_)));
    try {
      store_.release_all(part, owner_);
    } catch (...) {
      // Left to lapse with their lease.
    }
  }
}

// Writes one batch whose oldest waited its delay, until stopped.
void StoreBatch::timer() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (records_.empty() && releases_.empty()) {
      wake_.wait(lock);
      continue;
    }
    const auto due = oldest_ + delay_;
    if (wake_.wait_until(lock, due, [this] { return stop_; })) break;
    if (std::chrono::steady_clock::now() < due || (records_.empty() && releases_.empty())) {
      continue;
    }
    lock.unlock();
    flush();
    lock.lock();
  }
}

// Requires write_mutex_. Records records[first, last).
void StoreBatch::write_records(const std::vector<std::pair<std::size_t, PartitionOutcome>>& records,
                               std::size_t first, std::size_t last) {
  std::vector<PartitionOutcome> outcomes;
  outcomes.reserve(last - first);
  for (std::size_t i = first; i < last; ++i) outcomes.push_back(records[i].second);
  try {
    store_.record_all(outcomes);
  } catch (...) {
    // Nothing of the batch was recorded: one by one, so that only what fails fails.
    for (std::size_t i = first; i < last; ++i) {
      const PartitionOutcome& o = records[i].second;
      try {
        store_.record(o.dataset, o.window.get(), o.record);
      } catch (...) {
        failed_(records[i].first, describe_exception(std::current_exception()));
      }
    }
  }
}

}  // namespace interloper::detail
