// interloper/destination.hpp — where an asset's rows live.
//
// A destination stores one table per asset, cut into partitions. Every operation is scoped
// to partitions the way a database selects them: a time partition by the half-open range of
// its bounds over the partition column, a list partition by membership — never by equality on
// the key, so a monthly partition may hold daily dates.
//
//   auto destination = il::open_destination("sqlite:///tmp/warehouse.db");
//   destination->write(asset.dataset(), &window, rows);   // replaces each partition of window
//   il::Table back = destination->read(asset.dataset(), &window);
//
// Writing a window splits the rows per partition and replaces each partition of the window
// (one that received no rows ends up empty). A row that falls outside the window is an error
// and nothing is written. Storage looks the same whether a window was written at once or
// partition by partition.
//
// Thread safety: every destination is safe to use from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/dataset.hpp"
#include "interloper/partitioning.hpp"

namespace interloper {

// Keeps everything in memory; the reference implementation of the contract.
class MemoryDestination final : public Destination {
 public:
  MemoryDestination();
  ~MemoryDestination() override;
  std::string url() const override { return "memory://"; }
  std::int64_t write(const DatasetRef& dataset, const PartitionWindow* window,
                     const Table& table) override;
  Table read(const DatasetRef& dataset, const PartitionWindow* window) override;
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) override;
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::optional<Schema> schema(const DatasetRef& dataset) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Files under a root directory: ROOT/SOURCE/ASSET/COLUMN=KEY/data.jsonl (or data.csv), and
// ROOT/SOURCE/ASSET/data.jsonl for unpartitioned assets. Keys are escaped so that no value can
// leave its directory. Each partition file is replaced atomically (temporary file, fsync,
// rename).
class FileDestination final : public Destination {
 public:
  enum class Format : std::uint8_t { jsonl, csv };
  explicit FileDestination(std::string root, Format format = Format::jsonl);
  ~FileDestination() override;
  std::string url() const override;
  std::int64_t write(const DatasetRef& dataset, const PartitionWindow* window,
                     const Table& table) override;
  Table read(const DatasetRef& dataset, const PartitionWindow* window) override;
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) override;
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::optional<Schema> schema(const DatasetRef& dataset) override;

  // The directory component for a partition key: reversible, never "." or "..", no "/".
  static std::string escape_key(std::string_view key);
  static std::string unescape_key(std::string_view component);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// An embedded SQLite database: one table per asset, typed columns, a window write in one
// transaction. See docs/destinations.md for the table naming and value encoding.
class SqliteDestination final : public Destination, public QueryableDestination {
 public:
  // Opens (creating if needed) the database file. Throws DestinationError on failure.
  explicit SqliteDestination(std::string path);
  ~SqliteDestination() override;
  std::string url() const override;
  const std::string& path() const;
  std::int64_t write(const DatasetRef& dataset, const PartitionWindow* window,
                     const Table& table) override;
  Table read(const DatasetRef& dataset, const PartitionWindow* window) override;
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) override;
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::optional<Schema> schema(const DatasetRef& dataset) override;

  // Runs a read-only query with named parameters bound (":name" -> value) and returns the
  // rows; used by `sql:` assets. Throws DestinationError with SQLite's message.
  Table query(std::string_view sql,
              const std::vector<std::pair<std::string, Value>>& params) override;
  QueryableDestination* queryable() override { return this; }
  std::string table_name_of(const DatasetRef& dataset) const override {
    return table_name(dataset);
  }
  // The table name used for a dataset ("SOURCE__ASSET", or "ASSET" without a source).
  static std::string table_name(const DatasetRef& dataset);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Splits `table` into one table per partition of `window`, in window order (a partition with
// no rows gets an empty table with the same schema). Throws DestinationError naming the first
// row outside the window, or a missing partition column. Time windows are split by arithmetic
// on the partition column (date or timestamp values; ISO strings are parsed), list windows by
// key lookup, other kinds through Partition::filter.
std::vector<Table> split_by_partition(const DatasetRef& dataset, const PartitionWindow& window,
                                      const Table& table);

// Opens a destination from a URL: "memory://", "sqlite:///path.db", "file:///dir?format=csv".
// Throws DestinationError naming an unknown scheme or a malformed URL.
std::shared_ptr<Destination> open_destination(std::string_view url);

}  // namespace interloper
