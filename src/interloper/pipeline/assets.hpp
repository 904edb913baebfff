// The compute callables behind `command:` and `sql:` assets.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interloper/asset.hpp"
#include "interloper/destination.hpp"
#include "interloper/time.hpp"

namespace interloper::pipeline {

// What a run covers, in the shapes commands and queries receive.
struct Scope {
  std::string asset;
  bool has_window = false;
  std::string window;                                 // "a..b" or the key
  std::string start_key, end_key;                     // first and last key of the window
  std::optional<std::string> partition_key;           // when the window holds one partition
  std::optional<TimePoint> bounds_start, bounds_end;  // time windows, half-open
  std::vector<std::string> values;                    // list windows: every value, in order

  static Scope of(const ExecutionContext& context);
};

// An instant as text: "YYYY-MM-DD" at midnight, "YYYY-MM-DDTHH:MM:SS" otherwise.
std::string instant_text(TimePoint t);

// The placeholders a command's argv may use, e.g. "partition.key".
bool is_placeholder(std::string_view name);
// Expands "{name}" placeholders ("{{" and "}}" are literal braces). Throws PipelineError naming
// an unknown placeholder; with `scope` null only validates. Throws RunError when the scope
// lacks a value the placeholder needs (a partition key for a multi-partition window).
std::string expand_placeholders(const std::string& arg, const Scope* scope);

struct CommandAsset {
  std::vector<std::string> argv;  // argv[0] already resolved against the pipeline directory
  std::string working_directory;
  bool csv = false;
  double timeout_seconds = 0;
  ReadOptions read;  // declared columns and the time column of what the command prints
};
ComputeFn command_compute(CommandAsset command);

struct SqlAsset {
  std::string sql;
  std::string source;
  std::vector<DatasetRef> deps;              // names are the CTE names (asset names)
  std::shared_ptr<Destination> destination;  // must resolve to a SqliteDestination
};
ComputeFn sql_compute(SqlAsset asset);

// The named parameters (":name", without the colon) a statement uses, outside string literals,
// quoted identifiers and comments, in order of appearance.
std::vector<std::string> named_parameters(std::string_view sql);

// The statement actually sent to SQLite: the user's query with one CTE per dependency
// prepended (merged into the query's own WITH clause when it has one).
std::string sql_with_dependencies(const std::string& sql,
                                  const std::vector<std::pair<std::string, std::string>>& tables);

}  // namespace interloper::pipeline
