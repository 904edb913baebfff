// An object destination's concurrent transfers: a bounded pool of requests, and blobs fetched
// ahead of the one being decoded.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "interloper/destination/object_core.hpp"

namespace interloper::detail {

void parallel_for(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn) {
  threads = std::min(n, threads);
  if (threads <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::exception_ptr error;
  auto work = [&] {
    for (std::size_t i; (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

namespace {

// GETs of a list of objects by a few threads, at most `ahead` bodies past the last one taken;
// the bodies are taken in order.
class InOrderFetch {
 public:
  InOrderFetch(blob::BlobStore& store, const std::vector<std::string>& objects, std::size_t ahead)
      : store_(store), objects_(objects), ahead_(ahead), slots_(objects.size()) {
    for (std::size_t t = 0; t < std::min(objects.size(), std::max<std::size_t>(ahead, 1)); ++t) {
      threads_.emplace_back([this] { fetch(); });
    }
  }
  InOrderFetch(const InOrderFetch&) = delete;
  InOrderFetch& operator=(const InOrderFetch&) = delete;

  // Stops and joins the fetchers however the caller leaves.
  ~InOrderFetch() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& thread : threads_) thread.join();
  }

  // The body of object i (nullopt when there is none), once fetched; rethrows its failure.
  std::optional<std::string> take(std::size_t i) {
    std::optional<std::string> body;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return slots_[i].done; });
      if (slots_[i].error) std::rethrow_exception(slots_[i].error);
      body = std::move(slots_[i].body);
      consumed_ = i + 1;
    }
    changed_.notify_all();
    return body;
  }

 private:
  struct Slot {
    bool done = false;
    std::optional<std::string> body;
    std::exception_ptr error;
  };

  // One fetcher: takes the next object while the window ahead of the consumer has room.
  void fetch() {
    const std::size_t n = objects_.size();
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || next_ >= n || next_ < consumed_ + ahead_; });
      if (stop_ || next_ >= n) return;
      const std::size_t i = next_++;
      lock.unlock();
      Slot got;
      try {
        got.body = store_.get(objects_[i]);
      } catch (...) {
        got.error = std::current_exception();
      }
      lock.lock();
      got.done = true;
      slots_[i] = std::move(got);
      changed_.notify_all();
    }
  }

  blob::BlobStore& store_;
  const std::vector<std::string>& objects_;
  const std::size_t ahead_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t next_ = 0;      // the next object to fetch
  std::size_t consumed_ = 0;  // bodies taken by the caller
  bool stop_ = false;
  std::vector<std::thread> threads_;  // last: they start once everything else is in place
};

}  // namespace

void fetch_in_order(blob::BlobStore& store, const std::vector<std::string>& objects,
                    std::size_t ahead,
                    const std::function<void(std::size_t, std::optional<std::string>&&)>& consume) {
  if (ahead == 0) {
    for (std::size_t i = 0; i < objects.size(); ++i) consume(i, store.get(objects[i]));
    return;
  }
  InOrderFetch fetches(store, objects, ahead);
  for (std::size_t i = 0; i < objects.size(); ++i) consume(i, fetches.take(i));
}

}  // namespace interloper::detail
