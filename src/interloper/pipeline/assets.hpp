// The compute callables behind `command:` and `sql:` assets.
#pragma once

#include <cstdint>
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
  // Command assets: each dependency's name and the file holding what load() returns for it.
  std::vector<std::pair<std::string, std::string>> inputs;

  static Scope of(const ExecutionContext& context);
};

// An instant as text: "YYYY-MM-DD" at midnight, "YYYY-MM-DDTHH:MM:SS" otherwise.
std::string instant_text(TimePoint t);

// The placeholders a command's argv may use, e.g. "partition.key" ("input.NAME" aside).
bool is_placeholder(std::string_view name);
// Expands "{name}" placeholders ("{{" and "}}" are literal braces). Throws PipelineError naming
// an unknown placeholder, or an "{input.NAME}" whose NAME is not in `inputs` (with a scope: not
// in scope->inputs); with `scope` null only validates. Throws RunError when the scope lacks a
// value the placeholder needs (a partition key for a multi-partition window).
std::string expand_placeholders(const std::string& arg, const Scope* scope,
                                const std::vector<std::string>& inputs = {});

// The variable naming a dependency's input file: "IL_INPUT_" and the name upper-cased, every
// character other than a letter or digit replaced by '_' ("daily-events" -> IL_INPUT_DAILY_EVENTS).
std::string input_variable(std::string_view dependency);

// The stdout a command may print before it is stopped and its asset fails (10 GiB): far more
// than a partition of tens of millions of rows, small enough to stop a runaway program long
// before it fills a disk.
constexpr std::uint64_t kDefaultMaxOutput = std::uint64_t{10} << 30;

struct CommandAsset {
  std::vector<std::string> argv;  // argv[0] already resolved against the pipeline directory
  std::string working_directory;
  bool csv = false;
  double timeout_seconds = 0;
  std::uint64_t max_output = kDefaultMaxOutput;  // bytes of stdout
  // The dependencies: each one's rows for the run (what ExecutionContext::load returns) are
  // written to a JSON-lines file named by IL_INPUT_<NAME> and {input.NAME}, removed afterwards.
  std::vector<std::string> inputs;
  ReadOptions read;  // declared columns and the time column of what the command prints
};
// Runs the command and streams its stdout, parsed as it arrives, to the context's emitter in
// batches (bounded memory). Throws RunError naming the asset and the limit when stdout exceeds
// `max_output` (the command is stopped), and RunError for invalid output or a failed command.
ComputeFn command_compute(CommandAsset command);

struct SqlAsset {
  std::string sql;
  std::string source;
  std::vector<DatasetRef> deps;              // names are the CTE names (asset names)
  std::shared_ptr<Destination> destination;  // must be queryable (Destination::queryable())
  double timeout_seconds = 0;                // > 0: the query is stopped after this long
  // The asset's own columns (partition column and declared schema), for a query reading its
  // own earlier partitions before any is written: it then reads an empty table of them.
  std::vector<std::string> own_columns;
};
ComputeFn sql_compute(SqlAsset asset);

// The named parameters (":name", without the colon) a statement uses, outside string literals,
// quoted identifiers and comments, in order of appearance.
std::vector<std::string> named_parameters(std::string_view sql);

// Where a second statement starts in `sql`: the first text after a ';' (outside literals,
// quoted identifiers and comments; with `postgresql`, outside its dollar-quoted and E'...'
// strings too) that is not blanks, comments or more semicolons. npos when `sql` holds one
// statement.
std::size_t second_statement(std::string_view sql, bool postgresql);

// The statement's first word, upper-cased, past blanks and comments ("" when it starts with
// anything else). A query starts with SELECT, WITH or VALUES.
std::string first_keyword(std::string_view sql);

// The statement actually sent to the database: the user's query with one CTE (name, SELECT
// body) per entry of `ctes` prepended, merged into the query's own WITH clause when it has one.
std::string sql_with_dependencies(const std::string& sql,
                                  const std::vector<std::pair<std::string, std::string>>& ctes);

}  // namespace interloper::pipeline
