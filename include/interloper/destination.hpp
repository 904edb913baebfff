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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/dataset.hpp"
#include "interloper/locator.hpp"
#include "interloper/partitioning.hpp"

namespace interloper {

// Keeps everything in memory; the reference implementation of the contract.
class MemoryDestination final : public Destination {
 public:
  MemoryDestination();
  ~MemoryDestination() override;
  std::string url() const override { return "memory://"; }
  // Without a window, a partitioned dataset is replaced whole: every partition goes and the
  // rows land in theirs (a row without a partition value fails the commit).
  std::unique_ptr<WindowWriter> open_writer(const DatasetRef& dataset,
                                            const PartitionWindow* window) override;
  Table read(const DatasetRef& dataset, const PartitionWindow* window) override;
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) override;
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::optional<Schema> schema(const DatasetRef& dataset) override;
  std::vector<std::string> retired_columns(const DatasetRef& dataset) override;
  void drop(const DatasetRef& dataset, const PartitionWindow* window) override;

 private:
  struct State;
  class Writer;
  std::unique_ptr<State> state_;
};

// The format of an object destination's data objects: JSON lines or CSV.
enum class ObjectFormat : std::uint8_t { jsonl, csv };

// One table per asset as objects (files, S3 objects): SOURCE/ASSET/COLUMN=KEY/data.jsonl (or
// data.csv) per partition, SOURCE/ASSET/data.jsonl unpartitioned, beside SOURCE/ASSET/_schema.json.
// Each object is replaced whole, so a reader sees a partition's old rows or its new ones, never
// a mix. The implementation FileDestination and S3Destination share; see docs/destinations.md.
class ObjectDestination : public Destination {
 public:
  ~ObjectDestination() override;
  std::unique_ptr<WindowWriter> open_writer(const DatasetRef& dataset,
                                            const PartitionWindow* window) override;
  Table read(const DatasetRef& dataset, const PartitionWindow* window) override;
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) override;
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::vector<PartitionCheck> check_partitions(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::optional<Schema> schema(const DatasetRef& dataset) override;
  std::vector<std::string> retired_columns(const DatasetRef& dataset) override;
  void drop(const DatasetRef& dataset, const PartitionWindow* window) override;

  // The keys of the partitions stored for a partitioned dataset, in key order (one listing of
  // the asset's objects). Empty for an unpartitioned or never-written dataset.
  std::vector<std::string> partition_keys(const DatasetRef& dataset);

  struct Core;  // internal: the store, the layout and the format

 protected:
  ObjectDestination();
  void set_core(std::unique_ptr<Core> core);

 private:
  std::unique_ptr<Core> core_;
};

// Files under a root directory: ROOT/SOURCE/ASSET/COLUMN=KEY/data.jsonl (or data.csv), and
// ROOT/SOURCE/ASSET/data.jsonl for unpartitioned assets. Keys are escaped so that no value can
// leave its directory. Each partition file is replaced atomically (temporary file, fsync,
// rename).
class FileDestination final : public ObjectDestination {
 public:
  using Format = ObjectFormat;
  explicit FileDestination(std::string root, Format format = Format::jsonl);
  ~FileDestination() override;
  std::string url() const override;

  // The directory component for a partition key: reversible, never "." or "..", no "/".
  static std::string escape_key(std::string_view key);
  static std::string unescape_key(std::string_view component);

 private:
  std::string root_;
  Format format_;
};

// Objects in an S3-compatible store (AWS S3, MinIO, Ceph, R2, moto), laid out like
// FileDestination under a bucket and prefix: PREFIX/SOURCE/ASSET/COLUMN=KEY/data.jsonl (or
// data.csv), PREFIX/SOURCE/ASSET/data.jsonl unpartitioned, with the same key escaping, beside
// PREFIX/SOURCE/ASSET/_schema.json.
//
// Each partition is one object, replaced by one PUT (or one completed multipart upload for
// objects above `part_size`), so a reader sees the old or the new partition, never a mix. A
// partition written with no rows is an empty object; a partition never written has no object.
// Every object carries its row count in its metadata (x-amz-meta-rows), so counting never
// downloads data. A window write replaces its partitions one after another: when the store
// fails midway, the partitions already replaced stay replaced (writing the window again repairs
// it); a row outside the window is refused before anything is sent.
//
// Credentials come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; they
// never appear in url(), messages or logs.
//
//   S3Destination::Options options = S3Destination::parse_url(
//       "s3://lake/raw?endpoint=http://127.0.0.1:9000&region=eu-west-1&path_style=1");
//   S3Destination destination(options);
class S3Destination final : public ObjectDestination {
 public:
  struct Options {
    std::string bucket;
    std::string prefix;    // without leading or trailing '/'; "" for the bucket's root
    std::string endpoint;  // "http://host:port"; "" for AWS (https://s3.REGION.amazonaws.com)
    std::string region;    // "" for AWS_REGION, else us-east-1
    // ENDPOINT/BUCKET/KEY rather than BUCKET.HOST/KEY; unset: path style when an endpoint is
    // given, virtual-hosted style on AWS.
    std::optional<bool> path_style;
    FileDestination::Format format = FileDestination::Format::jsonl;
    std::size_t part_size = std::size_t{64} << 20;  // objects larger go up in parts this size
    int attempts = 5;                               // tries per request (5xx, timeouts)
  };

  // Reads the credentials from the environment; contacts nothing. Throws DestinationError when
  // the credentials are missing or the options are malformed (no bucket, part_size < 5 MiB).
  explicit S3Destination(Options options);
  ~S3Destination() override;

  // "s3://BUCKET[/PREFIX][?endpoint=URL&region=R&format=jsonl|csv&path_style=0|1]". Throws
  // DestinationError naming an unknown parameter or a malformed part.
  static Options parse_url(std::string_view url);

  std::string url() const override;

  // Creates the bucket unless it exists already (for set-up and tests).
  void create_bucket();

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
  std::unique_ptr<WindowWriter> open_writer(const DatasetRef& dataset,
                                            const PartitionWindow* window) override;
  Table read(const DatasetRef& dataset, const PartitionWindow* window) override;
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) override;
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::optional<Schema> schema(const DatasetRef& dataset) override;
  std::vector<std::string> retired_columns(const DatasetRef& dataset) override;
  void drop(const DatasetRef& dataset, const PartitionWindow* window) override;

  // Runs one read-only query with named parameters bound (":name" -> value) and returns the
  // rows; used by `sql:` assets. It runs on a read-only connection of its own under SQLite's
  // authorizer, which lets it read the scope's tables only and denies writes, PRAGMA,
  // ATTACH/DETACH and transactions (see QueryableDestination). Throws DestinationError naming
  // the scope's asset and what was refused, or with SQLite's message.
  Table query(std::string_view sql, const Params& params, const QueryScope& scope) override;
  Table query(std::string_view sql, const Params& params) override;
  QueryableDestination* queryable() override { return this; }
  std::string table_name_of(const DatasetRef& dataset) const override {
    return table_name(dataset);
  }
  // Time bounds are bound as the ISO text the table stores (see docs/destinations.md).
  Relation relation_of(const DatasetRef& dataset, const PartitionWindow* window,
                       std::string_view prefix) const override;
  // The table name used for a dataset ("SOURCE__ASSET", or "ASSET" without a source).
  static std::string table_name(const DatasetRef& dataset);

 private:
  struct State;
  class Writer;
  std::unique_ptr<State> state_;
};

// A PostgreSQL database: one table per asset in one schema ("SCHEMA"."SOURCE__ASSET"), typed
// columns (boolean, bigint, double precision, text, date, timestamp), and beside them the
// catalog tables _interloper_columns (declared types) and _interloper_partitions (the written
// partitions, so an empty written partition differs from a missing one). See
// docs/postgresql.md.
//
// A window write is one transaction: transaction-scoped advisory locks per (asset, partition),
// so two processes writing the same partition take turns; the window's rows deleted; the new
// rows streamed with COPY ... FROM STDIN (binary) while batches arrive; the registry updated.
// New columns are added (ALTER TABLE ... ADD COLUMN) and types widen as Schema::unify allows;
// any other type change is refused naming the column and both types, and nothing is written.
//
// The password of the URL never appears in url(), messages or logs (it reads ***).
//
//   PostgresDestination warehouse("postgresql://etl@db.internal/warehouse?schema=raw");
//
// Thread-safe: each operation borrows a connection from a small pool.
class PostgresDestination final : public Destination, public QueryableDestination {
 public:
  // "postgresql://[USER[:PASSWORD]@][HOST][:PORT]/DB[?schema=NAME&LIBPQ_PARAMETER=VALUE...]"
  // (also "postgres://"). Every parameter but `schema` (default "public") goes to libpq, and so
  // do the PG* environment variables (PGPASSWORD, PGPASSFILE, PGHOST...). Connects at once,
  // with connect_timeout=5 unless set, and creates the schema and catalog tables when missing.
  // Throws DestinationError (one line, password redacted) for a malformed URL, an unreachable
  // server, a refused login or an unknown database.
  explicit PostgresDestination(std::string_view url);
  ~PostgresDestination() override;
  // The URL with its password replaced by ***.
  std::string url() const override;
  const std::string& schema_name() const;
  std::unique_ptr<WindowWriter> open_writer(const DatasetRef& dataset,
                                            const PartitionWindow* window) override;
  Table read(const DatasetRef& dataset, const PartitionWindow* window) override;
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) override;
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window) override;
  std::optional<Schema> schema(const DatasetRef& dataset) override;
  std::vector<std::string> retired_columns(const DatasetRef& dataset) override;
  void drop(const DatasetRef& dataset, const PartitionWindow* window) override;

  // Runs `sql` in a READ ONLY transaction with the schema first on the search path; named
  // parameters (":name") become $1, $2... (never spliced; "::" casts and text inside quotes,
  // comments and dollar quotes are left alone), dates and timestamps bound as such.
  Table query(std::string_view sql, const Params& params) override;
  // The same, for `sql:` assets: errors start with the scope's asset. One statement only, run
  // with the rights of a role that may read the scope's tables and nothing else (no other
  // table or schema, no server file, no large object; see docs/postgresql.md), in a
  // transaction that is rolled back once the rows are read. The connecting user must be a
  // superuser or have CREATEROLE; otherwise DestinationError says so.
  Table query(std::string_view sql, const Params& params, const QueryScope& scope) override;
  QueryableDestination* queryable() override { return this; }
  // The table holding `dataset`: "SOURCE__ASSET" (or "ASSET") when it fits PostgreSQL's 63
  // bytes, otherwise its shortened name (see docs/postgresql.md). Found through the search
  // path inside query(). Throws DestinationError when the server cannot be asked.
  std::string table_name_of(const DatasetRef& dataset) const override;
  // The rows of `dataset`'s table under the dataset's own column names (a long name is stored
  // shortened and read back under its name as PostgreSQL spells it: its first 63 bytes).
  Relation relation_of(const DatasetRef& dataset, const PartitionWindow* window,
                       std::string_view prefix) const override;

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

// Opens a destination from a URL: "memory://", "sqlite:///path.db", "file:///dir?format=csv",
// "s3://bucket/prefix?endpoint=http://127.0.0.1:9000" (see S3Destination::parse_url),
// "postgresql://user@host/db?schema=raw" (see PostgresDestination).
// Throws DestinationError naming an unknown scheme or a malformed URL, the URL redacted.
std::shared_ptr<Destination> open_destination(const Locator& url);
// The same from text, parsed once by parse_locator.
std::shared_ptr<Destination> open_destination(std::string_view url);

}  // namespace interloper
