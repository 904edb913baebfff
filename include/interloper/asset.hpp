// interloper/asset.hpp — assets, sources and what an asset sees while it runs.
//
// An asset is a named table produced by code. Its compute callable receives an
// ExecutionContext describing the run's scope (a window of partitions, or none for an
// unpartitioned asset) and returns the rows as an il::Table. Assets are grouped under a
// Source, which names them and gives them a default destination.
//
//   il::Source ads("ads", destination);
//   ads.asset("ads_stats", [](il::ExecutionContext& ctx) {
//        il::Table rows;
//        rows.append({{"date", ctx.partition_date()}, {"clicks", 12}});
//        return rows;
//      })
//      .partitioning(il::TimePartitionConfig("date"));
//
// An asset with more rows than memory should hold emits them in batches instead: each batch goes
// to the destination's writer at once, and the partition is replaced when the callable returns
// (nothing is replaced if it throws). Whatever the callable returns is added after the batches.
//
//   ads.asset("ads_clicks", [](il::ExecutionContext& ctx) {
//        for (int hour = 0; hour < 24; ++hour) {
//          il::Table batch;
//          for (int i = 0; i < 100000; ++i) {
//            batch.append({{"date", ctx.partition_date()}, {"hour", hour}, {"clicks", i % 7}});
//          }
//          ctx.emit(batch);   // written now; memory holds one batch
//        }
//        return il::Table();  // nothing more
//      })
//      .partitioning(il::TimePartitionConfig("date"));
//
// Asset and Source are value types; copying an asset copies its definition (the
// partitioning is cloned, the destination shared).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/dataset.hpp"
#include "interloper/error.hpp"
#include "interloper/mapping.hpp"
#include "interloper/partitioning.hpp"

namespace interloper {

class ExecutionContext;

enum class LogLevel : std::uint8_t { debug, info, warning, error };
std::string_view log_level_name(LogLevel level);

// Receives an asset's log lines. Thread-safe: runners call it from worker threads.
class Logger {
 public:
  using Sink = std::function<void(LogLevel, std::string_view asset, std::string_view message)>;
  Logger() = default;  // discards everything
  explicit Logger(Sink sink, std::string asset = {});
  Logger for_asset(std::string asset) const;  // same sink, lines tagged with `asset`
  void log(LogLevel level, std::string_view message) const;
  void debug(std::string_view message) const { log(LogLevel::debug, message); }
  void info(std::string_view message) const { log(LogLevel::info, message); }
  void warning(std::string_view message) const { log(LogLevel::warning, message); }
  void error(std::string_view message) const { log(LogLevel::error, message); }

 private:
  std::shared_ptr<const Sink> sink_;
  std::string asset_;
};

// The compute callable. May throw anything: runners turn an exception into a failed asset.
using ComputeFn = std::function<Table(ExecutionContext&)>;

class Asset {
 public:
  // Throws std::invalid_argument when `name` is empty or `compute` is empty.
  Asset(std::string name, ComputeFn compute);

  Asset(const Asset& other);
  Asset& operator=(const Asset& other);
  Asset(Asset&&) noexcept = default;
  Asset& operator=(Asset&&) noexcept = default;
  ~Asset();

  // Builder-style setters, each named as its getter; each returns *this.
  Asset& partitioning(const PartitionConfig& config);  // clones `config`
  // Sets the dependencies by name, each reading the overlapping partitions.
  Asset& deps(std::vector<std::string> upstream_names);
  // Adds the dependency `upstream` (or changes the one of that name) reading what `mapping`
  // says: asset.dep("balances", il::DepMapping::offset(-1)) reads yesterday's balances, and an
  // asset may name itself this way (see mapping.hpp). The DAG checks the mapping.
  Asset& dep(std::string upstream, DepMapping mapping);
  // The earlier names of those two setters.
  [[deprecated("use partitioning(config)")]] Asset& partitioned(const PartitionConfig& config) {
    return partitioning(config);
  }
  [[deprecated("use deps(names)")]] Asset& depends_on(std::vector<std::string> upstream_names) {
    return deps(std::move(upstream_names));
  }
  Asset& enabled(bool on);
  Asset& destination(std::shared_ptr<Destination> destination);  // overrides the source's
  Asset& source_name(std::string name);                          // set by Source::add
  // Declared column types: every table the asset computes is conformed to them (see
  // Table::conform), so a declared column always has its type and a value that does not
  // convert fails the asset, naming the row (from 1), the column and the value.
  Asset& schema(Schema declared);
  // The fewest rows each partition of a run (the whole table when unpartitioned) must get;
  // a run that computes fewer fails before anything is written, so stored data is kept.
  // 0 (the default) accepts an empty result.
  Asset& min_rows(std::int64_t rows);
  // What the asset computes, as text (a `command:` asset's argv, a `sql:` asset's query; set by
  // the pipeline loader), and a version the user bumps when a C++ callable changes. Both go into
  // definition_fingerprint(): partitions written under another fingerprint are stale.
  Asset& definition(std::string text);
  Asset& version(std::string version);
  // Lets the asset's destination take over an existing table of its dataset's name that it did
  // not create (DatasetRef::adopt); off by default, so such a table is refused, never emptied.
  Asset& adopt(bool on);
  // Whether a run checks, before computing, that the upstream partitions the asset reads from
  // storage were materialized (on by default); see execute() in plan.hpp. Off for an asset
  // that reads upstream rows written outside interloper's runs, or that accepts a partial read.
  Asset& require_upstream(bool on);
  // What the asset holds, in the user's words, as `catalog` and `serve` show it. Documentation
  // only: it is not part of definition_fingerprint(), so editing it leaves partitions fresh.
  Asset& description(std::string text);

  const std::string& name() const { return name_; }
  const std::string& source_name() const { return source_; }
  const PartitionConfig* partitioning() const { return partitioning_.get(); }  // nullptr: none
  const std::vector<std::string>& deps() const { return deps_; }
  // What the dependency `upstream` reads: the mapping dep() gave it, else the overlap (also for
  // a name that is not a dependency).
  const DepMapping& mapping(std::string_view upstream) const;
  bool enabled() const { return enabled_; }
  const Schema& schema() const { return schema_; }
  std::int64_t min_rows() const { return min_rows_; }
  const std::string& definition() const { return definition_; }
  const std::string& version() const { return version_; }
  bool adopt() const { return adopt_; }
  bool require_upstream() const { return require_upstream_; }
  const std::string& description() const { return description_; }  // "" when none
  // A stable hash (16 hex digits) of the definition text, the version, the partitioning's
  // definition, the declared schema and the mappings other than the overlap: what the store keeps with each materialized partition.
  std::string definition_fingerprint() const;
  // The asset's own destination, or nullptr (a Source or DAG then supplies one).
  const std::shared_ptr<Destination>& destination() const { return destination_; }
  // Where the asset's rows go: its own destination, else the destination of the Source it was
  // added to; nullptr when neither has one. DAG::destination_of resolves the same way.
  const std::shared_ptr<Destination>& resolved_destination() const {
    return destination_ ? destination_ : source_destination_;
  }
  DatasetRef dataset() const { return {source_, name_, partitioning_.get(), adopt_}; }

  // Validates a run's window against the partitioning (PartitionConfig::check: same kind and
  // granularity, one partition unless allow_window). `window` may be nullptr (no window).
  // Throws PartitionError whose message starts with "asset 'NAME': ".
  // An unpartitioned asset accepts anything: it never fails validation, its context still
  // sees the run's window (has_window() is true when the run has one), and its rows are
  // written whole (with a nullptr window).
  void check(const PartitionWindow* window) const;

  // Computes the rows for `window` without writing them. Validates first. `load()` inside
  // the callable throws RunError (there is no DAG to resolve upstreams).
  Table run(const PartitionWindow& window, Logger logger = {}) const;
  Table run(const Partition& partition, Logger logger = {}) const;
  Table run(Logger logger = {}) const;  // unpartitioned assets

  // Computes and writes to resolved_destination(); returns the number of rows written.
  // Throws DestinationError when neither the asset nor its source has a destination.
  std::int64_t materialize(const PartitionWindow& window, Logger logger = {}) const;
  std::int64_t materialize(const Partition& partition, Logger logger = {}) const;
  std::int64_t materialize(Logger logger = {}) const;

  // Invokes the compute callable with a prepared context (used by runners) and returns the rows
  // it returned. When the context has no emitter, the batches the callable emitted come first
  // in the result; with one, they were handed to it and only the returned rows are left. Every
  // batch and the returned rows are conformed to schema(), and min_rows() is checked against
  // the context's window over all of them before this returns. Throws DataError for a value
  // that does not convert, RunError for too few rows (a writer given the batches must then not
  // be committed).
  Table compute(ExecutionContext& context) const;

 private:
  std::int64_t write_into(Destination& destination, const PartitionWindow* window,
                          std::shared_ptr<const PartitionWindow> scope, Logger logger) const;

  std::string name_;
  std::string source_;
  ComputeFn compute_;
  std::unique_ptr<PartitionConfig> partitioning_;
  std::vector<std::string> deps_;
  std::vector<DepMapping> mappings_;  // parallel to deps_
  bool enabled_ = true;
  Schema schema_;
  std::int64_t min_rows_ = 0;
  std::string definition_;
  std::string version_;
  bool adopt_ = false;
  bool require_upstream_ = true;
  std::string description_;
  std::shared_ptr<Destination> destination_;
  std::shared_ptr<Destination> source_destination_;  // set by Source::add

  friend class Source;
};

// A named group of assets sharing a default destination.
class Source {
 public:
  explicit Source(std::string name, std::shared_ptr<Destination> destination = nullptr);

  // Adds an asset (its source name is set to this source's, and this source's destination
  // becomes its default); returns a reference to the stored copy, valid until the next add.
  // Throws DagError on a duplicate asset name.
  Asset& add(Asset asset);
  Asset& asset(std::string name, ComputeFn compute) {
    return add(Asset(std::move(name), std::move(compute)));
  }
  // Makes room for `count` assets in all, so that adding that many moves none of them.
  void reserve(std::size_t count);
  // What the source is, in the user's words (documentation, as Asset::description); returns
  // *this.
  Source& description(std::string text);

  const std::string& name() const { return name_; }
  const std::shared_ptr<Destination>& destination() const { return destination_; }
  const std::vector<Asset>& assets() const { return assets_; }
  const std::string& description() const { return description_; }  // "" when none

 private:
  std::string name_;
  std::string description_;
  std::shared_ptr<Destination> destination_;
  std::vector<Asset> assets_;
  std::unordered_set<std::string> names_;  // of assets_, so that add() stays O(1)
};

// Everything an asset sees while it computes. Created by runners (and Asset::run); not
// thread-safe, one per asset execution.
class ExecutionContext {
 public:
  // Reads an upstream asset's rows for this context's window.
  using Loader = std::function<Table(std::string_view upstream_name)>;
  // What load(upstream) reads, for assets that fetch the rows themselves (an `sql:` asset
  // queries them inside the database): the upstream's dataset, and either every row (`whole`)
  // or the rows of `window`, the upstream's partitions overlapping this run's window. `window`
  // is null when this run's window lies wholly before the upstream's start: nothing is read.
  struct UpstreamReads {
    DatasetRef dataset;
    bool whole = true;
    std::shared_ptr<const PartitionWindow> window;
  };
  using ReadsOf = std::function<UpstreamReads(std::string_view upstream_name)>;
  // Receives the batches the asset emits: a runner's destination writer.
  using Emitter = std::function<void(const Table& batch)>;

  // `window` may be null for unpartitioned runs. `loader` and `reads_of` may be empty (load()
  // and reads_of() then throw). `emitter` may be empty: emitted batches are then kept and
  // Asset::compute returns them.
  ExecutionContext(std::string asset_name, std::shared_ptr<const PartitionWindow> window,
                   Logger logger = {}, Loader loader = {}, Emitter emitter = {},
                   ReadsOf reads_of = {});

  const std::string& asset_name() const { return asset_name_; }
  bool has_window() const { return window_ != nullptr; }
  // The run's window; a single partition is a window of one. Throws PartitionError when
  // the run has no window.
  const PartitionWindow& window() const;
  // The one partition of the window. Throws PartitionError when the run has no window or
  // the window holds several partitions.
  const Partition& partition() const;
  // The keys of the window's partitions, in order; empty when the run has no window.
  std::vector<std::string> keys() const;
  // The window as time periods (bounds, granularity), or nullopt when the run has no window or
  // its partitions are not periods of time.
  std::optional<TimePartitionWindow> time_window() const;
  // The start of the one time partition, whatever its granularity. Throws PartitionError when
  // the run has no window, the window holds several partitions, or they are not time periods.
  TimePoint partition_start() const;
  // The date of the day partition (days only: use partition_start() for other granularities).
  // Throws PartitionError for other kinds or granularities, or when the window holds several
  // partitions.
  std::chrono::year_month_day partition_date() const;
  const Logger& logger() const { return logger_; }
  // The upstream's rows for this run's window (an unpartitioned upstream is read whole),
  // read from its destination. Throws RunError when `upstream_name` is not a dependency or
  // no loader is available; destination errors propagate.
  Table load(std::string_view upstream_name) const;
  // What load(upstream_name) would read, without reading it. Throws RunError like load().
  UpstreamReads reads_of(std::string_view upstream_name) const;

  // Hands one batch of the asset's rows on now (to the run's destination writer), so that an
  // asset producing many rows holds one batch at a time. The batches and the rows the callable
  // returns make up the partition's rows; batches may differ in their columns (they are unified
  // as Table::append_table unifies). Throws what the writer throws, e.g. DestinationError for a
  // row outside the window; let it propagate, the run then fails and nothing is replaced.
  void emit(const Table& batch);
  // The emitted batches kept (no emitter), followed by `rest`; `rest` alone with an emitter.
  // Used by Asset::compute.
  Table finish(Table rest);

 private:
  std::string asset_name_;
  std::shared_ptr<const PartitionWindow> window_;
  mutable std::unique_ptr<Partition> partition_;  // computed on first use
  Logger logger_;
  Loader loader_;
  Emitter emitter_;
  std::optional<Table> emitted_;  // the batches kept when there is no emitter
  ReadsOf reads_of_;
  // Set by Asset::compute while the callable runs: the asset's declared columns (may be
  // empty) and what counts the rows handed on, so that every batch obeys both.
  friend class Asset;
  const Schema* declared_ = nullptr;
  std::function<void(const Table&)> count_;
  std::size_t rows_emitted_ = 0;
  void hand_on(const Table& batch);
};

// A stable 64-bit FNV-1a hash of `text`, as 16 hex digits: the same on every machine and build.
std::string fingerprint(std::string_view text);

}  // namespace interloper
