// interloper/store.hpp — a materialization store that survives the process.
//
// The store answers "which partitions of this asset are materialized?" for backfills with
// `missing_only` and for status displays. SqliteStore keeps its records in one SQLite file.
// Time partitions are stored as ranges of period ordinals (the number of periods since
// 1970-01-01 in the window's granularity), so recording or asking about a window of a million
// hours touches only the few ranges it overlaps. List partitions (and any other kind) are
// stored one row per key: their windows are as small as their declared lists.
//
//   auto store = il::open_store("/var/lib/interloper/state.db");
//   store->record(asset.dataset(), &window, {.asset = "ads_stats",
//                                             .status = il::MaterializationStatus::materialized,
//                                             .rows = 120, .run_id = "r1"});
//   il::WindowStatus status = store->status(asset.dataset(), window);
//
// A record is filed under the dataset's source and asset name, and under the kind (and, for
// time, the granularity) of its window: a day window and a month window are kept apart.
//
// Thread safety: safe to use from several threads; several processes may share a file
// (SQLite locking, WAL mode).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "interloper/run.hpp"

namespace interloper {

class SqliteStore final : public MaterializationStore {
 public:
  // Opens (creating, with its parent directories) the database file at `path`. Throws
  // DestinationError naming the path and SQLite's message on failure.
  explicit SqliteStore(std::string path);
  ~SqliteStore() override;

  const std::string& path() const;

  // Replaces the overlapped parts of earlier records (splitting ranges as needed) in one
  // transaction. Throws DestinationError when SQLite fails.
  void record(const DatasetRef& dataset, const PartitionWindow* window,
              const MaterializationRecord& record) override;
  WindowStatus status(const DatasetRef& dataset, const PartitionWindow& window) override;
  std::optional<MaterializationRecord> latest(const DatasetRef& dataset,
                                              const Partition* partition) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "memory://" gives a MemoryStore; "sqlite:///abs.db", "sqlite:rel.db" or a plain file path
// give a SqliteStore. Throws DestinationError for another scheme.
std::unique_ptr<MaterializationStore> open_store(std::string_view path);

}  // namespace interloper
