// Fault injection the way SQLite's test_vfs tests a database, for object destinations: every
// call a window write (or a write that changes the schema) makes on its BlobStore is failed in
// turn by a FaultyBlobStore — and, in the torn variant, a failed put first leaves part of its
// bytes in a put that never completes — on local files, memory and S3. After each fault every
// partition of the window holds its old rows or its new rows, never a mix and never nothing;
// the counts agree with the rows; and the same write run again succeeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>

#include "destination/blob_backends.hpp"
#include "destination/fault_sweep_rows.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/blob/faulty_store.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/object_core.hpp"

namespace interloper {
namespace {

using testing::day;

const DatasetRef& kOrders = testing::kSweepOrders;
const TimePartitionWindow& kWindow = testing::kSweepWindow;
using testing::sweep_ids;
Table rows(int first, int n, bool extra = false) { return testing::sweep_rows(first, n, extra); }

std::vector<long long> ids_of(Destination& destination, unsigned d) {
  return sweep_ids(destination, d);
}

std::vector<long long> expected(int first, int n, unsigned d) {
  std::vector<long long> out;
  for (int i = 0; i < n; ++i) out.push_back(first + static_cast<int>(d - 1) * 100 + i);
  return out;
}

// An object destination writing through `faulty` (a wrapper owned by the caller).
std::unique_ptr<ObjectDestination> over(blob::BlobStore& store, ObjectFormat format,
                                        std::size_t fail_at = 0,
                                        std::optional<std::size_t> tear = std::nullopt,
                                        blob::FaultyBlobStore** faulty = nullptr) {
  auto wrapper = std::make_unique<blob::FaultyBlobStore>(store, fail_at, tear);
  if (faulty) *faulty = wrapper.get();
  return detail::object_destination(std::move(wrapper), format, "sweep://");
}

using Case = std::tuple<std::string, ObjectFormat, bool>;  // backend, format, torn puts

class BlobFaultSweep : public ::testing::TestWithParam<Case> {
 protected:
  void sweep(const Table& next, int first, int n) {
    const auto& [kind, format, torn] = GetParam();
    testing::BlobBackend backend(kind);
    if (std::string why; !backend.available(why)) {
      if (testing::under_ci()) FAIL() << why;
      GTEST_SKIP() << why;
    }
    const std::optional<std::size_t> tear = torn ? std::optional<std::size_t>(7) : std::nullopt;
    std::size_t calls = 0;
    {
      auto store = backend.fresh();
      over(*store, format)->write(kOrders, &kWindow, rows(1, 2));
      blob::FaultyBlobStore* counting = nullptr;
      // The destination owns the counting wrapper: keep it alive while its count is read.
      auto counted = over(*store, format, 0, std::nullopt, &counting);
      counted->write(kOrders, &kWindow, next);
      calls = counting->calls();
    }
    ASSERT_GT(calls, 4u);
    for (std::size_t call = 1; call <= calls; ++call) {
      SCOPED_TRACE("fault at call " + std::to_string(call) + " of " + std::to_string(calls));
      auto store = backend.fresh();
      over(*store, format)->write(kOrders, &kWindow, rows(1, 2));
      EXPECT_THROW(over(*store, format, call, tear)->write(kOrders, &kWindow, next),
                   DestinationError);
      auto plain = over(*store, format);
      std::vector<std::vector<long long>> held;
      for (unsigned d = 1; d <= 2; ++d) {
        held.push_back(ids_of(*plain, d));
        EXPECT_TRUE(held.back() == expected(1, 2, d) || held.back() == expected(first, n, d))
            << "day " << d << " holds " << ::testing::PrintToString(held.back());
      }
      for (const PartitionCount& count : plain->partition_counts(kOrders, kWindow)) {
        EXPECT_TRUE(count.written) << count.key;
        const std::size_t d = count.key == "2026-01-01" ? 0 : 1;
        EXPECT_EQ(count.rows, static_cast<std::int64_t>(held[d].size())) << count.key;
      }
      plain->write(kOrders, &kWindow, next);
      for (unsigned d = 1; d <= 2; ++d) EXPECT_EQ(ids_of(*plain, d), expected(first, n, d));
    }
  }
};

TEST_P(BlobFaultSweep, EachPartitionOfAWindowWriteIsWhollyOldOrNew) { sweep(rows(11, 3), 11, 3); }

TEST_P(BlobFaultSweep, EachPartitionOfASchemaChangeIsWhollyOldOrNew) {
  sweep(rows(21, 3, true), 21, 3);
}

INSTANTIATE_TEST_SUITE_P(Backends, BlobFaultSweep,
                         ::testing::Combine(::testing::ValuesIn(testing::blob_backends()),
                                            ::testing::Values(ObjectFormat::jsonl,
                                                              ObjectFormat::csv),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::get<0>(info.param) +
                                  (std::get<1>(info.param) == ObjectFormat::csv ? "_csv"
                                                                                : "_jsonl") +
                                  (std::get<2>(info.param) ? "_torn" : "_failed");
                         });

// The destination contract on the memory blob store (files and S3 run it as FileDestination and
// S3Destination).
}  // namespace
}  // namespace interloper

#include "destination/destination_contract.hpp"

IL_INSTANTIATE_DESTINATION_CONTRACT(MemoryBlobs, [](const std::string&) {
  return std::shared_ptr<interloper::Destination>(interloper::detail::object_destination(
      interloper::blob::memory_store(), interloper::ObjectFormat::jsonl, "memory-blobs://"));
});
