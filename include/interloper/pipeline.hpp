// interloper/pipeline.hpp — assets declared in a YAML file instead of compiled code.
//
// A pipeline file names a destination, sources and their assets. Each asset has exactly one
// body: a `command:` (a program run directly, without a shell, that prints the asset's rows as
// JSON lines or CSV on stdout), a `sql:` query evaluated inside the destination database,
// where upstream assets appear as tables named after them, or a `python:` function, which only
// a process that registered a PythonResolver (the Python package) can load. docs/pipelines.md
// describes the format in full.
//
//   destination: sqlite://.interloper/data.db
//   sources:
//     - name: shop
//       assets:
//         - name: events
//           partitioning: {kind: time, column: date, granularity: day}
//           command: [./events.sh, "{partition.key}"]
//         - name: daily_revenue
//           deps: [events]
//           partitioning: {kind: time, column: date, granularity: day}
//           sql: SELECT date, SUM(amount) AS revenue FROM events
//                WHERE date >= :bounds_start AND date < :bounds_end GROUP BY date
//
//   il::Pipeline pipeline = il::Pipeline::load("pipeline.yaml");
//   il::ThreadedRunner().run(pipeline.dag(), il::TimePartition(2026y / 11 / 3));
//
// Loading validates everything it can before anything runs: unknown keys, bodies, partitioning,
// placeholders, dependencies and cycles. Destinations are opened lazily, on first use, so
// loading (and `interloper check`) never creates files.
//
// Thread safety: a loaded Pipeline is immutable; its DAG may be run from several threads.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interloper/dag.hpp"
#include "interloper/destination.hpp"
#include "interloper/error.hpp"
#include "interloper/schedule.hpp"

namespace interloper {

// What the file declared for one asset, for catalogs and plans.
struct AssetDefinition {
  std::string name;
  std::string source;
  std::vector<std::string> deps;
  std::vector<DepMapping> mappings;  // what each of deps reads, position by position
  bool enabled = true;
  std::string body;                  // "command", "sql" or "python"
  std::vector<std::string> command;  // argv as written (placeholders unexpanded)
  std::string sql;                   // the query as written
  std::string python;                // the `python:` target as written ("module:function")
  std::string format;                // "jsonl" or "csv" (command assets)
  std::optional<double> timeout_seconds;
  std::string destination_url;   // resolved (absolute paths, ${VAR} expanded)
  Schema schema;                 // the declared `schema:` (empty when none)
  std::int64_t min_rows = 0;     // `min_rows:`, or 1 for `allow_empty: false`
  std::string version;           // `version:`, bumped by hand to mark stored partitions stale
  bool adopt = false;            // `adopt:` (Asset::adopt)
  bool require_upstream = true;  // `require_upstream:` (Asset::require_upstream)
  int line = 0;                  // where the asset is declared (1-based)
  int column = 0;
};

// A `python:` asset as the loader hands it to the PythonResolver.
struct PythonTarget {
  std::string asset;              // the asset's name
  std::string target;             // as written: "module:function" or "path/to/file.py:function"
  std::string module;             // "package.module", or the .py file's absolute path
  std::string function;           // the attribute of the module to call ("name" or "Class.name")
  std::string directory;          // the pipeline's directory, where modules are looked for
  std::vector<std::string> deps;  // the asset's declared dependencies
};

// Turns a `python:` target into the asset's compute function. Throws (any std::exception) when
// the target cannot be found or used; the loader reports the message at the `python:` line,
// with the asset and the target.
using PythonResolver = std::function<ComputeFn(const PythonTarget&)>;

// Sets the resolver the loader asks for every `python:` asset; an empty function removes it.
// Without a resolver, loading a pipeline with a `python:` asset throws PipelineError. Not
// thread-safe: set it before loading, never while a pipeline is loaded.
void set_python_resolver(PythonResolver resolver);

class Pipeline {
 public:
  // Reads and validates the file. Throws PipelineError whose message starts with
  // "path:line:col: " and names what is wrong (an unknown key, a missing or second body, a bad
  // granularity or value list, an unset ${VAR}, an unknown dependency, a cycle...).
  static Pipeline load(const std::string& path);
  // Loads pipeline text as if it were the file at `path` (which names it in messages and
  // anchors relative paths; it need not exist). Throws PipelineError like load().
  static Pipeline parse(const std::string& yaml, const std::string& path);

  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;
  ~Pipeline();

  const DAG& dag() const;
  // The file as given to load().
  const std::string& path() const;
  // The directory relative paths in the file resolve against (absolute).
  const std::string& directory() const;
  // The materialization store's file: `store:` or `.interloper/state.db` beside the file.
  std::string store_path() const;
  // The pipeline's default destination URL.
  const std::string& destination_url() const;
  // The destination of each source, by source name; nullptr for an unknown source.
  std::shared_ptr<Destination> source_destination(const std::string& source) const;
  // Every asset's definition, in declaration order.
  const std::vector<AssetDefinition>& definitions() const;
  // nullptr for an unknown asset.
  const AssetDefinition* definition(const std::string& asset) const;
  // The `jobs:` of the file, in declaration order (docs/schedules.md).
  const std::vector<Job>& jobs() const;

  // catalog_json(catalog(dag(), this, with_schema)): the catalog as `interloper catalog`
  // prints it. Throws DestinationError when a destination cannot be read.
  std::string catalog(bool with_schema = true) const;

  struct State;  // the loaded file; defined by the implementation

 private:
  explicit Pipeline(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// One asset of the catalog, as `interloper catalog` shows it.
struct CatalogEntry {
  std::string name;
  std::string source;
  std::vector<std::string> deps;
  std::vector<DepMapping> mappings;  // what each of deps reads, position by position
  bool enabled = true;
  std::string description;         // Asset::description ("" when none)
  std::string source_description;  // Source::description of its source ("" when none)
  // What the pipeline file declared (body, command or SQL, declared schema...); nullptr for an
  // asset built in code. Points into the Pipeline, which must outlive the entry.
  const AssetDefinition* definition = nullptr;
  const PartitionConfig* partitioning = nullptr;  // the asset's own; nullptr when unpartitioned
  std::optional<std::string> destination;         // its URL; nullopt when it has none
  bool schema_read = false;                       // whether the two below were read
  std::optional<Schema> schema;                   // as stored; nullopt when never written
  // The columns of `schema` the latest write did not produce (Destination::retired_columns).
  std::vector<std::string> retired_columns;
};

// The catalog of `dag`: in `pipeline`'s declaration order with what it declared, or in the
// DAG's order (pipeline nullptr). With `with_schema`, each asset's stored schema and retired
// columns are read from its destination; destinations that do not exist yet are not created.
// The entries point into `dag` and `pipeline`. Throws DestinationError when a destination
// cannot be read.
std::vector<CatalogEntry> catalog(const DAG& dag, const Pipeline* pipeline, bool with_schema);
// A JSON array with one object per entry: name, source, deps, enabled, body (a pipeline's
// "command", "sql" or "python" with its fields, or "code"), partitioning (the config's
// to_definition, or null), destination, declared_schema and min_rows when declared, and, when read,
// schema (null when never written) and retired_columns.
std::string catalog_json(const std::vector<CatalogEntry>& entries);
// The same for people: a line per asset, then its dependencies, destination and, when read,
// one line per stored column, a retired one marked "(retired: ...)".
std::string catalog_text(const std::vector<CatalogEntry>& entries);

}  // namespace interloper
