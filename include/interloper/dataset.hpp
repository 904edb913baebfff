// interloper/dataset.hpp — a stored dataset and the interface every destination implements.
//
// A dataset is one asset's table as a destination keeps it: named by the asset's source and
// name, cut into partitions by the asset's partitioning. This header is what the asset, DAG and
// run layers need to know about storage; the destinations themselves (memory, files, SQLite,
// open_destination) are declared in interloper/destination.hpp.
//
//   il::DatasetRef dataset{"ads", "ads_stats", &partitioning};
//   destination.write(dataset, &window, rows);   // replaces each partition of window
//   auto writer = destination.open_writer(dataset, &window);   // the same, batch by batch
//   il::Table back = destination.read(dataset, &window);
//
// Every operation is scoped to partitions the way a database selects them: a time partition by
// the half-open range of its bounds over the partition column, a list partition by membership —
// never by equality on the key, so a monthly partition may hold daily dates.
//
// Thread safety: every destination is safe to use from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"

namespace interloper {

// What a destination needs to know about the asset whose rows it stores.
struct DatasetRef {
  std::string source;                   // source name ("" for assets without a source)
  std::string asset;                    // asset name
  const PartitionConfig* partitioning;  // nullptr when unpartitioned; not owned
  // A destination that keeps a registry of the tables it created (SQLite, PostgreSQL) refuses
  // to write into a table of the dataset's name it did not create, with a DestinationError
  // naming the table. With `adopt` it takes such a table over instead: its columns and types
  // are recorded as the stored schema (later writes stay compatible with them) and its rows are
  // kept until a write replaces the partitions they fall in, as any stored rows are.
  bool adopt = false;
};

// Rows stored for one partition; `written` is false when the partition was never written
// (an empty written partition has written == true and rows == 0).
struct PartitionCount {
  std::string key;
  std::int64_t rows = 0;
  bool written = false;
};

// One replace of a window (or of a whole dataset) in progress: the one way rows reach storage.
// Rows arrive in batches through append(); nothing is visible to readers until commit()
// replaces every partition of the window at once. Destroying a writer that was not committed
// abandons the replace: storage is left exactly as it was, and whatever the writer staged
// (temporary files, staging tables) is removed. A writer is used by one thread at a time and
// must not outlive its destination.
//
//   auto writer = destination->open_writer(asset.dataset(), &window);
//   while (auto batch = next_batch()) writer->append(*batch);   // bounded memory per batch
//   std::int64_t rows = writer->commit();
//
// Batches may differ in their columns: the stored schema becomes the Schema::unify of the stored
// one and every batch, as if the batches had been one table.
class WindowWriter {
 public:
  virtual ~WindowWriter() = default;
  // Adds one batch of rows. Throws DestinationError when a row lies outside the window, lacks
  // the partition column, or its types clash with earlier batches or the stored schema (the
  // clash may also surface at commit); the writer is then unusable, and nothing is written.
  virtual void append(const Table& batch) = 0;
  // Makes every appended row visible, replacing each partition of the window (a partition that
  // received no rows ends up empty). Returns the rows written. Throws DestinationError when
  // storage fails; nothing is written then (S3 documents its one exception). Call at most once.
  virtual std::int64_t commit() = 0;
  // append(last) then commit(), returning and throwing as they do: for a caller that knows its
  // last batch, so that a destination may send each partition of it while it encodes the next
  // (S3 does). Call at most once, instead of commit().
  virtual std::int64_t append_and_commit(const Table& last);
};

class QueryableDestination;

// What a destination finds for one partition when checked against what it wrote (status
// --verify). `object` names the file or object that holds the partition; `reason` says, for a
// changed one, how it differs from what was written ("size 31, written 57").
struct PartitionCheck {
  enum class State : std::uint8_t { present, missing, changed };
  std::string key;
  State state = State::missing;
  std::string object;
  std::string reason;

  // Present for each written partition, missing for the others: existence only.
  static std::vector<PartitionCheck> by_existence(std::vector<PartitionCount> counts);
};

class Destination {
 public:
  virtual ~Destination() = default;

  // The destination's query capability (see QueryableDestination), or nullptr when it cannot
  // run SQL (memory, files). `sql:` assets run on destinations that return one.
  virtual QueryableDestination* queryable() { return nullptr; }

  // Starts a replace of `window` (nullptr: the whole dataset, every partition of a partitioned
  // one included). Memory stays bounded by the batch: SQLite stages batches in a table of its
  // own and swaps them in with one transaction at commit, files write batches into temporary
  // files renamed into place at commit. Throws DestinationError when storage cannot be opened.
  virtual std::unique_ptr<WindowWriter> open_writer(const DatasetRef& dataset,
                                                    const PartitionWindow* window) = 0;

  // A URL that reopens this destination (for catalogs and logs).
  virtual std::string url() const = 0;

  // Checks, before a run, that writes can succeed: a destination that opens on first use opens
  // now, and storage the process may not write is reported. Throws DestinationError saying
  // what is wrong. The default checks nothing: an open destination was opened for writing.
  virtual void check_writable() {}

  // Replaces every partition of `window` with the rows of `table` that fall inside it: one
  // open_writer, append and commit. `window` is nullptr for a whole-dataset replace. Returns
  // the number of rows written. Throws DestinationError when a row lies outside the window,
  // lacks the partition column, or storage fails; nothing is written then.
  std::int64_t write(const DatasetRef& dataset, const PartitionWindow* window, const Table& table);

  // The rows of `window` (all rows when nullptr or the dataset is unpartitioned). A dataset
  // that was never written reads as an empty table.
  virtual Table read(const DatasetRef& dataset, const PartitionWindow* window) = 0;

  // Rows in one partition (or the whole dataset when nullptr).
  virtual std::int64_t row_count(const DatasetRef& dataset, const Partition* partition) = 0;

  // One entry per partition of `window`, in window order.
  virtual std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                                       const PartitionWindow& window) = 0;

  // One entry per partition of `window`, in window order: missing when storage holds nothing
  // for it, changed when what it holds is no longer what the destination wrote (someone else
  // overwrote or truncated it), present otherwise. Files and S3 record a checksum of each
  // partition's data when they write it (files: size and FNV-1a, S3: the ETag and size the store
  // returned) and compare; a partition written before they did is checked for existence only.
  // The default, for destinations that record nothing, checks existence (partition_counts).
  // Throws DestinationError when storage cannot be read.
  virtual std::vector<PartitionCheck> check_partitions(const DatasetRef& dataset,
                                                       const PartitionWindow& window);

  // The schema last written for the dataset, if any.
  virtual std::optional<Schema> schema(const DatasetRef& dataset) = 0;

  // The columns of schema() that the latest write did not produce, in schema order. A
  // partitioned dataset keeps every column it ever stored (partitions written earlier still
  // hold them), so a column the asset renamed or stopped producing stays in its schema; this
  // names it. Empty for a dataset replaced whole, never written, or dropped whole; a write that
  // brought no columns at all (no rows and nothing declared) keeps the list it found. The
  // default, for a destination that does not keep the list, is empty. Throws DestinationError
  // when storage cannot be read.
  virtual std::vector<std::string> retired_columns(const DatasetRef& dataset) {
    (void)dataset;
    return {};
  }

  // Drops what is stored for `window`, so that its partitions read as never written (no rows,
  // `written` false). With `window` nullptr the whole dataset goes: its rows, its partitions
  // and its schema, so the next write may bring any columns and types (what a partitioned
  // dataset needs when a column's type cannot widen). A time window drops the rows inside its
  // bounds; file and object storage keep partitions per key, and drop each stored partition
  // whose bounds lie inside the window's (a monthly partition survives a drop of one of its
  // days). Dropping what was never written does nothing. Throws DestinationError when storage
  // fails; SQL destinations then leave storage as it was.
  virtual void drop(const DatasetRef& dataset, const PartitionWindow* window) = 0;
};

// Who runs a query and what it may read. `sql:` assets give their name and their declared
// dependencies, so a query reads nothing else.
struct QueryScope {
  std::string asset;                  // named in errors; "" for a query run by code directly
  std::vector<DatasetRef> datasets;   // the datasets the query may read
  bool any_dataset = false;           // true: every dataset of the destination may be read
  // More than 0: the query is stopped once it has run this many seconds, and fails with a
  // DestinationError saying it timed out after them. At most kMaxQueryTimeout.
  double timeout_seconds = 0;
};

// The longest timeout a query (or a `timeout:` of a pipeline asset) may be given, in seconds:
// about 11.6 days, which a deadline on any clock and PostgreSQL's statement_timeout hold.
inline constexpr double kMaxQueryTimeout = 1e6;

// A capability some destinations have: running one read-only SQL query over the datasets they
// store. `sql:` assets use it, never a concrete destination type. SqliteDestination offers it;
// a database destination (PostgreSQL...) offers it the same way: derive from this class too and
// return `this` from Destination::queryable().
//
//   if (QueryableDestination* db = destination.queryable()) {
//     Table rows = db->query("SELECT * FROM \"" + db->table_name_of(dataset) + "\" WHERE d = :day",
//                            {{":day", Value("2026-11-03")}}, {.asset = "report",
//                                                             .datasets = {dataset}});
//   }
//
// The query is written in the database's own dialect. Parameters are named (`:name`) whatever
// the database's native placeholders are; an implementation translates them. A query is
// isolated from everything else the destination does: it is exactly one statement, it cannot
// write, change settings (PRAGMA), attach databases or control transactions, and it reads only
// the tables of its scope. Thread safety as for the destination.
class QueryableDestination {
 public:
  using Params = std::vector<std::pair<std::string, Value>>;
  virtual ~QueryableDestination() = default;
  // The table holding `dataset` (unquoted): what a query names to read it.
  virtual std::string table_name_of(const DatasetRef& dataset) const = 0;
  // Runs `sql` with `params` bound (":name" -> value) and returns the rows. Throws
  // DestinationError naming the scope's asset and what was refused: a second statement, a
  // write, a PRAGMA, ATTACH/DETACH, a transaction, a table outside the scope; or with the
  // database's own message (a syntax error...). The default refuses every query: a destination
  // that cannot isolate one must not run it.
  virtual Table query(std::string_view sql, const Params& params, const QueryScope& scope);
  // The same with every dataset readable (a program querying its own database).
  virtual Table query(std::string_view sql, const Params& params) = 0;

  // A SELECT over the rows of `dataset` that belong to `window`'s partitions (every row when
  // `window` is null), written to be embedded in a larger query (a CTE body), with the named
  // parameters it needs. Every parameter name starts with `prefix`, so several relations can
  // share one query. The default selects from the quoted table_name_of() with the window's
  // Filter, binding time bounds as timestamp values; a database that stores partition columns
  // differently (SQLite keeps ISO text) overrides it.
  struct Relation {
    std::string sql;
    std::vector<std::pair<std::string, Value>> params;
  };
  virtual Relation relation_of(const DatasetRef& dataset, const PartitionWindow* window,
                               std::string_view prefix) const;
};

}  // namespace interloper
