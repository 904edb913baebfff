// The S3 layout's concurrent transfers: a bounded pool of requests, and objects fetched ahead
// of the one being decoded.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <exception>
#include <thread>
#include <unordered_map>

#include "interloper/data/format.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/destination/s3_layout.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"

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

void fetch_in_order(S3Client& client, const std::vector<std::string>& objects, std::size_t ahead,
                    const std::function<void(std::size_t, std::optional<std::string>&&)>& consume) {
  struct Slot {
    bool done = false;
    std::optional<std::string> body;
    std::exception_ptr error;
  };
  const std::size_t n = objects.size();
  std::vector<Slot> slots(n);
  std::mutex mutex;
  std::condition_variable changed;
  std::size_t next = 0;      // the next object to fetch
  std::size_t consumed = 0;  // bodies taken by the caller
  bool stop = false;
  auto fetch = [&] {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stop || next >= n || next < consumed + ahead; });
      if (stop || next >= n) return;
      const std::size_t i = next++;
      lock.unlock();
      Slot got;
      try {
        got.body = client.get(objects[i]);
      } catch (...) {
        got.error = std::current_exception();
      }
      lock.lock();
      got.done = true;
      slots[i] = std::move(got);
      changed.notify_all();
    }
  };
  // Stops and joins the fetchers however the caller leaves.
  struct Fetchers {
    std::mutex& mutex;
    std::condition_variable& changed;
    bool& stop;
    std::vector<std::thread> threads;
    ~Fetchers() {
      {
        std::lock_guard lock(mutex);
        stop = true;
      }
      changed.notify_all();
      for (auto& thread : threads) thread.join();
    }
  } fetchers{mutex, changed, stop, {}};
  for (std::size_t t = 0; t < std::min(n, std::max<std::size_t>(ahead, 1)); ++t) {
    fetchers.threads.emplace_back(fetch);
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::optional<std::string> body;
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return slots[i].done; });
      if (slots[i].error) std::rethrow_exception(slots[i].error);
      body = std::move(slots[i].body);
      consumed = i + 1;
    }
    changed.notify_all();
    consume(i, std::move(body));
  }
}

}  // namespace interloper::detail
