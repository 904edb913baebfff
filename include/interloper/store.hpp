// interloper/store.hpp — the materialization store: which partition of which asset is
// materialized, and why the failed ones failed; who is running which partitions; which runs ran.
//
// Three roles, each a small interface of its own: PartitionStates (the state of every
// partition), PartitionClaims (partitions a run is working on, so that another run sharing the
// store leaves them alone) and RunHistory (one record a run). A MaterializationStore is all
// three kept in one place, as open_store() gives it for a URL; code that needs one role takes
// that interface.
//
// Runners record into the store after the destination has committed; backfills with
// `missing_only` and `status` displays ask it. What it keeps per partition is its *state*:
// materialized, or failed with the failure's details (run id, times, error). Adjacent
// partitions in the same state share one stored range, so the store grows with the number of
// state changes, not with history: a million hours recorded one at a time, all materialized,
// are one range, and `status` over any window costs in the ranges it overlaps.
//
//   auto store = il::open_store("/var/lib/interloper/state.db");
//   store->record(asset.dataset(), &window, {.asset = "ads_stats",
//                                             .status = il::MaterializationStatus::materialized,
//                                             .rows = 120, .run_id = "r1"});
//   il::WindowStatus status = store->status(asset.dataset(), window);
//
// A record is filed under the dataset's source and asset name, and under the kind (and, for
// time, the granularity) of its window: a day window and a month window are kept apart. Ranges
// are ranges of partition ordinals (PartitionConfig::ordinal): the SQLite and PostgreSQL stores
// keep time windows (PartitionWindow::as_time_window) as ranges and every other kind, list
// included, partition by partition under its keys; the memory store keeps every kind that has
// ordinals (time and list) as ranges and the others by key.
//
// Implementations (MemoryStore, and SqlStore over SQLite or PostgreSQL) keep the same semantics,
// which the store tests pin down:
//   * record() of a window replaces the state of every partition of it, atomically;
//   * materialized partitions keep no per-partition details (no run id, rows or times): the
//     run that wrote them is in the run history, not in the partition state;
//   * a failed partition keeps the record of the run that failed it; the partitions of one
//     failed record share that record, and a later record of some of them splits it;
//   * adjacent ranges in the same state are merged (failed ones only when they share their
//     failure), so the stored ranges are as few as the state changes;
//   * error text is kept bounded (bound_error); the run history keeps a bounded number of runs;
//   * a claim holds partitions for one owner until it expires; claims never overlap across
//     owners, and taking one is all or nothing.
//
// Thread safety: safe to use from several threads; several processes may share a SQLite file
// (SQLite locking, WAL mode) or a PostgreSQL schema.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/dataset.hpp"
#include "interloper/locator.hpp"
#include "interloper/mapping.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/time.hpp"

namespace interloper {

enum class MaterializationStatus : std::uint8_t { materialized, failed };

// The outcome of one asset over one window, as a run reports it to the store.
struct MaterializationRecord {
  std::string asset;
  MaterializationStatus status;
  std::int64_t rows = 0;  // rows written by the run that recorded this
  std::string run_id;
  TimePoint started;
  TimePoint finished;
  std::string error;  // empty unless failed
  // The fingerprint of the asset's definition that wrote a materialized partition
  // (Asset::definition_fingerprint); "" when unknown. Kept with the partition's state, so
  // partitions written by an older definition show as stale.
  std::string definition;
};

// PartitionRange (a run of consecutive partitions by index) is in mapping.hpp.

// Materialized partitions written by one definition of their asset.
struct DefinedRange {
  PartitionRange range;
  std::string definition;  // "" when the store does not know it
  friend bool operator==(const DefinedRange&, const DefinedRange&) = default;
};

// The state of every partition of a window for one asset, as compact ranges.
struct WindowStatus {
  std::vector<PartitionRange> materialized;
  std::vector<PartitionRange> failed;
  std::vector<PartitionRange> missing;
  // The materialized partitions again, split by the definition that wrote them.
  std::vector<DefinedRange> definitions;
  std::size_t count(const std::vector<PartitionRange>& ranges) const;
  // The materialized partitions that a definition other than `current` wrote: stale. None when
  // `current` is empty, and partitions of an unknown definition are never stale.
  std::vector<PartitionRange> stale(std::string_view current) const;
  // The materialized partitions that are not stale.
  std::vector<PartitionRange> fresh(std::string_view current) const;
};

// A stretch of failed partitions of a window that share one failure.
struct FailedRange {
  PartitionRange range;          // by index in the window, as in WindowStatus
  MaterializationRecord record;  // the failing run: run id, times, error
};

// Error text is stored bounded: at most kMaxStoredError bytes, its beginning and its end (where
// a failing command's stderr tail is) kept and the middle replaced by "[... N bytes cut ...]".
// Every store applies bound_error() to the error of what it records.
inline constexpr std::size_t kMaxStoredError = 4096;
std::string bound_error(std::string_view error, std::size_t max = kMaxStoredError);

// One run (a `materialize` or a `backfill`) in the run history.
// `interrupted`: stopped by a signal (SIGINT, SIGTERM) before it finished.
enum class RunState : std::uint8_t { running, succeeded, failed, interrupted };
std::string_view run_state_name(RunState state);
// The state a name from run_state_name() stands for; an unknown name is `running`.
RunState run_state_from(std::string_view name);

struct RunRecord {
  std::string run_id;
  std::string pipeline;      // what it ran: the pipeline file, or the program's name
  std::string command_line;  // the arguments, space-separated
  std::string window;        // "" when none
  TimePoint started;
  TimePoint finished;  // equal to started while running
  RunState state = RunState::running;
  std::int64_t partitions = 0;  // partitions of the window (1 for a run without one)
  std::int64_t succeeded = 0;   // partition runs (backfill) or assets (materialize)
  std::int64_t failed = 0;
  std::int64_t canceled = 0;  // not run: an upstream failed, --fail-fast, or an interrupt
  std::int64_t skipped = 0;   // already materialized, claimed by another run, or not started
  friend bool operator==(const RunRecord&, const RunRecord&) = default;
};

// A claim on partitions: `owner` is running them, until `expires` unless renewed.
struct Claim {
  std::string owner;  // who runs them, e.g. "host:pid:run id"
  TimePoint expires;
  // In a claim that claim() found in the way: why its owner counts as running, for messages
  // ("its process 12 on host h is running", "its claim lapses at ..."). Empty otherwise.
  std::string holder = {};
  friend bool operator==(const Claim&, const Claim&) = default;
};

// One outcome among several recorded together (PartitionStates::record_all).
struct PartitionOutcome {
  DatasetRef dataset;
  std::shared_ptr<const PartitionWindow> window;  // nullptr: the unpartitioned asset
  MaterializationRecord record;
};

// One window of several datasets among several claimed or released together (claim_all,
// release_all).
struct ClaimRequest {
  std::vector<DatasetRef> datasets;
  std::shared_ptr<const PartitionWindow> window;  // nullptr: the unpartitioned datasets
};

// The state of every partition: what record() filed, as status() and failures() read it. The
// role `status`, `backfill --missing`, `reset` and the runners use.
class PartitionStates {
 public:
  virtual ~PartitionStates() = default;
  // Records the outcome of `record.asset` for every partition of `window` (nullptr for an
  // unpartitioned asset). A later record for the same partition replaces the earlier one.
  virtual void record(const DatasetRef& dataset, const PartitionWindow* window,
                      const MaterializationRecord& record) = 0;
  // Records every outcome as record() would, in order. The SQL stores write them all or none, in
  // one transaction (a run's records of many partitions cost one commit); this default calls
  // record() for each.
  virtual void record_all(const std::vector<PartitionOutcome>& outcomes);
  // Forgets what was recorded for the partitions of `window`, so they read as missing again
  // (nullptr: everything recorded for the dataset, in every kind and granularity). Failure
  // details no partition refers to any more go too; claims and the run history stay.
  virtual void forget(const DatasetRef& dataset, const PartitionWindow* window) = 0;
  // The state of every partition of `window`, by arithmetic over stored ranges (a window of
  // 10^6 partitions answers without listing keys; the cost grows with the state changes
  // inside the window).
  virtual WindowStatus status(const DatasetRef& dataset, const PartitionWindow& window) = 0;
  // The state of one partition (nullptr partition: the unpartitioned asset), or nullopt when
  // nothing was recorded. A failed partition gives the failing record whole; a materialized
  // one gives only `asset` and `status` (rows 0, run id and error empty, times at the epoch).
  virtual std::optional<MaterializationRecord> latest(const DatasetRef& dataset,
                                                      const Partition* partition) = 0;
  // The last record given for the dataset, of any partition: what its last run did (run id,
  // status, rows, times and error). nullopt when none, or once forget() dropped the whole
  // dataset. One record a dataset is kept, whatever the history.
  virtual std::optional<MaterializationRecord> last_record(const DatasetRef& dataset) = 0;
  // The failed stretches of `window`, oldest first, at most `limit` of them.
  virtual std::vector<FailedRange> failures(const DatasetRef& dataset,
                                            const PartitionWindow& window, std::size_t limit) = 0;
};

// Claims: a process about to run partitions claims them first, so that another process
// sharing the store does not start them too. The role of backfills and their heartbeat.
class PartitionClaims {
 public:
  virtual ~PartitionClaims() = default;
  // Claims the partitions of `window` (nullptr: the unpartitioned dataset) of every dataset in
  // `datasets` for `claim.owner` until `claim.expires`: all or nothing, atomically. Returns
  // nullopt when claimed; otherwise the claim that holds one of them (another owner's, expiring
  // after `now`), and nothing is claimed. A claim that expired counts for nothing, and so does
  // a claim whose owner the store can tell is dead (its process, or its session with the
  // store's server, is gone): such claims are taken over at once, and the claims of an owner
  // it cannot check lapse with their lease. The owner's own claims are extended.
  virtual std::optional<Claim> claim(const std::vector<DatasetRef>& datasets,
                                     const PartitionWindow* window, const Claim& claim,
                                     TimePoint now) = 0;
  // claim() of each request in order for one claim, at once (one transaction in the SQL
  // stores): each request is all or nothing on its own. Answers, per request, nullopt when
  // claimed or the claim in its way. This default calls claim() for each.
  virtual std::vector<std::optional<Claim>> claim_all(const std::vector<ClaimRequest>& requests,
                                                      const Claim& claim, TimePoint now);
  // Gives up `owner`'s claims on the partitions of `window` of every dataset in `datasets`.
  virtual void release(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
                       std::string_view owner) = 0;
  // release() of each request, at once (one transaction in the SQL stores). This default calls
  // release() for each.
  virtual void release_all(const std::vector<ClaimRequest>& requests, std::string_view owner);
  // Moves the expiry of every claim `owner` holds to `expires` (the heartbeat of a long run).
  virtual void renew(std::string_view owner, TimePoint expires) = 0;
};

// The run history: one RunRecord a run, the newest kept. The role of `runs` and of the CLI
// recording its runs.
class RunHistory {
 public:
  virtual ~RunHistory() = default;
  // Adds `run`, or replaces the run with its run id (a run is recorded when it starts and
  // again when it ends), then keeps only the newest `keep` runs of its pipeline (keep >= 1).
  virtual void record_run(const RunRecord& run, std::size_t keep) = 0;
  // The newest `last` runs of `pipeline` (every pipeline when empty), newest first.
  virtual std::vector<RunRecord> runs(std::string_view pipeline, std::size_t last) = 0;
};

// The three roles kept in one place (one store URL): what open_store gives. Code that needs
// one role takes that interface; a MaterializationStore is each of them.
class MaterializationStore : public PartitionStates, public PartitionClaims, public RunHistory {
 public:
  // Whether record_all, claim_all and release_all cost less than the same calls one by one
  // (each call a transaction or a round trip to a server): a run then groups its records,
  // claims and releases. False by default: a store whose calls are cheap (in memory) is called
  // one by one, with nothing held back.
  virtual bool groups_calls() const { return false; }
};

// Keeps records in memory (tests, one-off runs).
class MemoryStore final : public MaterializationStore {
 public:
  MemoryStore();
  ~MemoryStore() override;
  void record(const DatasetRef& dataset, const PartitionWindow* window,
              const MaterializationRecord& record) override;
  void forget(const DatasetRef& dataset, const PartitionWindow* window) override;
  WindowStatus status(const DatasetRef& dataset, const PartitionWindow& window) override;
  std::optional<MaterializationRecord> latest(const DatasetRef& dataset,
                                              const Partition* partition) override;
  std::optional<MaterializationRecord> last_record(const DatasetRef& dataset) override;
  std::vector<FailedRange> failures(const DatasetRef& dataset, const PartitionWindow& window,
                                    std::size_t limit) override;
  std::optional<Claim> claim(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
                             const Claim& claim, TimePoint now) override;
  void release(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
               std::string_view owner) override;
  void renew(std::string_view owner, TimePoint expires) override;
  void record_run(const RunRecord& run, std::size_t keep) override;
  std::vector<RunRecord> runs(std::string_view pipeline, std::size_t last) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

namespace detail {
struct SqlStoreState;
}

// Keeps records in the tables of a SQL database, the same tables and range arithmetic whatever
// the database: SqliteStore and PostgresStore below open one. Time partitions are stored as
// ranges of period ordinals (the number of periods since 1970-01-01 in the window's
// granularity); list partitions (and any other kind) one row per key, their windows being as
// small as their declared lists. Failure details live in a table of their own, referenced by
// the failed ranges and keys. Every change is one transaction (holding, where the database has
// them, an advisory lock on what it rewrites: one dataset scope's ranges, the claims as a whole,
// one pipeline's run history), so concurrent writers take turns instead of merging ranges from
// stale reads. Throws DestinationError when the database fails; the store is then as it was
// before the call.
class SqlStore : public MaterializationStore {
 public:
  ~SqlStore() override;
  bool groups_calls() const override { return true; }
  void record(const DatasetRef& dataset, const PartitionWindow* window,
              const MaterializationRecord& record) override;
  void record_all(const std::vector<PartitionOutcome>& outcomes) override;
  void forget(const DatasetRef& dataset, const PartitionWindow* window) override;
  WindowStatus status(const DatasetRef& dataset, const PartitionWindow& window) override;
  std::optional<MaterializationRecord> latest(const DatasetRef& dataset,
                                              const Partition* partition) override;
  std::optional<MaterializationRecord> last_record(const DatasetRef& dataset) override;
  std::vector<FailedRange> failures(const DatasetRef& dataset, const PartitionWindow& window,
                                    std::size_t limit) override;
  std::optional<Claim> claim(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
                             const Claim& claim, TimePoint now) override;
  void release(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
               std::string_view owner) override;
  std::vector<std::optional<Claim>> claim_all(const std::vector<ClaimRequest>& requests,
                                              const Claim& claim, TimePoint now) override;
  void release_all(const std::vector<ClaimRequest>& requests, std::string_view owner) override;
  void renew(std::string_view owner, TimePoint expires) override;
  void record_run(const RunRecord& run, std::size_t keep) override;
  std::vector<RunRecord> runs(std::string_view pipeline, std::size_t last) override;

 protected:
  explicit SqlStore(std::unique_ptr<detail::SqlStoreState> state);
  detail::SqlStoreState& state() const { return *state_; }

 private:
  std::unique_ptr<detail::SqlStoreState> state_;
};

// A SqlStore in one SQLite file (tables `partition_ranges`, `partition_keys`, `failures`,
// `claims`, `runs`, `last_records`). A file written by an earlier version is converted when a
// writer opens it. Several processes may share the file (SQLite locking, WAL mode).
class SqliteStore final : public SqlStore {
 public:
  // Opens (creating, with its parent directories) the database file at `path`. Throws
  // DestinationError naming the path and SQLite's message on failure.
  explicit SqliteStore(std::string path);
  // With `read_only`, opens an existing file without writing to it or its directory (not even
  // the journal mode), so a store in a read-only directory can be read; every write then
  // throws DestinationError. A file of another schema version is refused (DestinationError).
  SqliteStore(std::string path, bool read_only);
  ~SqliteStore() override;

  const std::string& path() const;
};

// A SqlStore in a PostgreSQL schema (tables interloper_partition_ranges, _partition_keys,
// _failures, _claims, _runs, _last_records), so that processes on many machines share one
// store. A connection lost to a server restart is opened again by the next call.
class PostgresStore final : public SqlStore {
 public:
  // "postgresql://USER[:PASSWORD]@HOST[:PORT]/DB?schema=NAME&..." as for PostgresDestination.
  // Connects and creates the schema and tables when missing. Throws DestinationError (password
  // redacted) when the URL is malformed or the server refuses.
  explicit PostgresStore(std::string_view url);
  ~PostgresStore() override;
  // The URL with its password replaced by ***.
  std::string url() const;
};

// "memory://" gives a MemoryStore; "sqlite:///abs.db", "sqlite:rel.db" (or "sqlite://./rel.db")
// or a plain file path give a SqliteStore; "postgresql://..." (or "postgres://") a PostgresStore.
// Throws DestinationError for another scheme (any "NAME:" prefix other than these) or no path,
// naming the URL redacted.
std::unique_ptr<MaterializationStore> open_store(const Locator& url);
// The same from text, parsed once by parse_locator.
std::unique_ptr<MaterializationStore> open_store(std::string_view path);

// The same for reading only (status, runs): an existing file is opened read-only (see
// SqliteStore); writes through the returned store throw DestinationError.
std::unique_ptr<MaterializationStore> open_store_read_only(const Locator& url);
std::unique_ptr<MaterializationStore> open_store_read_only(std::string_view path);

// The SQLite file `url` names in the forms open_store reads, as written (a relative path stays
// relative), or std::nullopt for "memory://". Throws DestinationError like open_store.
std::optional<std::string> store_file(const Locator& url);
std::optional<std::string> store_file(std::string_view url);

}  // namespace interloper
