// One asset's declaration as the file spells it: its name, partitioning, dependencies and
// body, a command run without a shell, one SQL statement or a Python function.
#include <fmt/format.h>

#include <cctype>
#include <string>

#include "interloper/partitioning.hpp"
#include "interloper/pipeline/loader.hpp"

namespace interloper::pipeline {

void Loader::read_asset(const yaml::Node& node, const SourceSpec& source) {
  check_keys(node, "asset",
             {"name", "partitioning", "deps", "enabled", "command", "sql", "python", "format",
              "timeout", "max_output", "schema", "allow_empty", "min_rows", "destination",
              "version", "adopt", "require_upstream", "description"});
  AssetSpec& spec = assets_.emplace_back();  // both read in place: they are large
  AssetDefinition& def = definitions_.emplace_back();
  def.line = node.mark().line + 1;
  def.column = node.mark().column + 1;
  def.source = source.name;
  if (!node["name"]) fail(node, "asset needs a 'name'");
  spec.name_node = node["name"];
  def.name = scalar(node["name"], "asset name");
  if (def.name.empty()) fail(node["name"], "asset name must not be empty");
  if (!asset_index_.emplace(def.name, assets_.size() - 1).second) {
    fail(node["name"], fmt::format("duplicate asset name '{}'", def.name));
  }
  if (node["enabled"]) def.enabled = boolean(node["enabled"], "enabled");
  if (node["description"]) spec.description = description(node["description"]);
  if (node["partitioning"]) {
    spec.partitioning = partitioning(node["partitioning"]);
    try {
      (void)spec.partitioning->to_definition();  // the catalog shows it
    } catch (const std::exception& e) {
      // The definition is JSON: text that is not UTF-8 cannot be part of it.
      fail(node["partitioning"], fmt::format("partitioning cannot be described: {}", e.what()));
    }
  }
  if (node["schema"]) def.schema = declared_schema(node["schema"], spec.partitioning.get());
  def.min_rows = min_rows(node);
  if (node["version"]) def.version = scalar(node["version"], "version");
  if (node["adopt"]) def.adopt = boolean(node["adopt"], "adopt");
  if (node["require_upstream"]) {
    def.require_upstream = boolean(node["require_upstream"], "require_upstream");
  }
  if (const yaml::Node deps = node["deps"]) {
    spec.deps_node = deps;
    if (!deps.is_sequence()) fail(deps, "'deps' must be a list of asset names");
    for (const auto& d : deps) read_dependency(d, spec, def);
  }
  const yaml::Node command = node["command"];
  const yaml::Node sql = node["sql"];
  const yaml::Node python = node["python"];
  if ((command && sql) || ((command || sql) && python)) {
    fail(python ? python : sql,
         fmt::format("asset '{}' has two bodies: give one of 'command', 'sql' or 'python'",
                     def.name));
  }
  if (!command && !sql && !python) {
    fail(node, fmt::format("asset '{}' has no body: give 'command: [program, args...]', "
                           "'sql: SELECT ...' or 'python: module:function'",
                           def.name));
  }
  spec.destination = node["destination"] ? destination(node["destination"]) : source.destination;
  def.destination_url = spec.destination->url();
  if (command) {
    read_command(node, spec, def);
  } else if (sql) {
    read_sql(node, source, spec, def);
  } else {
    read_python(node, spec, def);
  }
}

void Loader::refuse_keys(const yaml::Node& node, std::string_view body,
                         std::initializer_list<std::string_view> keys) const {
  for (std::string_view key : keys) {
    if (const yaml::Node value = node[std::string(key)]) {
      fail(value, fmt::format("'{}' does not apply to {} assets", key, body));
    }
  }
}

namespace {

bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// "a.b.c" with every part an identifier.
bool is_dotted_name(std::string_view text) {
  for (std::size_t start = 0;;) {
    const std::size_t dot = text.find('.', start);
    if (!is_identifier(text.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

// A python body: `module:function` or `path/to/file.py:function`, turned into the asset's
// compute function by the resolver the Python package registers. Without one (the plain
// binary) the pipeline cannot be loaded.
void Loader::read_python(const yaml::Node& node, AssetSpec& spec, AssetDefinition& def) const {
  const yaml::Node python = node["python"];
  def.body = "python";
  def.python = scalar(python, "python");
  refuse_keys(node, "python", {"format", "timeout", "max_output"});
  const std::size_t colon = def.python.rfind(':');
  PythonTarget target;
  target.asset = def.name;
  target.target = def.python;
  target.directory = directory_;
  if (colon != std::string::npos) {
    target.module = def.python.substr(0, colon);
    target.function = def.python.substr(colon + 1);
  }
  const bool file =
      target.module.size() > 3 && target.module.compare(target.module.size() - 3, 3, ".py") == 0;
  if (!(file || is_dotted_name(target.module)) || !is_dotted_name(target.function)) {
    fail(python, fmt::format("asset '{}': python must be 'module:function' or "
                             "'path/to/file.py:function', not '{}'",
                             def.name, def.python));
  }
  if (file) target.module = resolve_path(target.module);
  const PythonResolver& resolver = python_resolver();
  if (!resolver) {
    fail(python, fmt::format("asset '{}' is a Python asset (python: {}): run this pipeline "
                             "with python3 -m interloper",
                             def.name, def.python));
  }
  target.deps = def.deps;
  try {
    spec.python = resolver(target);
  } catch (const std::exception& e) {
    fail(python, fmt::format("asset '{}': python: {}: {}", def.name, def.python, e.what()));
  }
  if (!spec.python) {
    fail(python, fmt::format("asset '{}': python: {} gave no function", def.name, def.python));
  }
}

// A command's body: its arguments (placeholders checked against what the asset has), the
// program resolved against the pipeline's directory, its output format and limits.
void Loader::read_command(const yaml::Node& node, AssetSpec& spec, AssetDefinition& def) {
  const yaml::Node command = node["command"];
  def.body = "command";
  if (!command.is_sequence()) {
    fail(command, "'command' must be a list: [program, arg, ...] (it runs without a shell)");
  }
  if (command.size() == 0) fail(command, "'command' must name a program");
  for (const auto& arg : command) def.command.push_back(command_argument(arg, spec, def));
  spec.argv = def.command;
  check_input_variables(spec, def);
  if (spec.argv[0].find('/') != std::string::npos) {
    // Assets mostly share a few programs: each is resolved once.
    auto [program, added] = programs_.try_emplace(spec.argv[0]);
    if (added) program->second = resolve_path(spec.argv[0]);
    spec.argv[0] = program->second;
  }
  def.format = "jsonl";
  if (node["format"]) {
    def.format = scalar(node["format"], "format");
    if (def.format != "jsonl" && def.format != "csv") {
      fail(node["format"], fmt::format("format must be jsonl or csv, not '{}'", def.format));
    }
  }
  spec.csv = def.format == "csv";
  if (node["timeout"]) {
    spec.timeout = timeout(node["timeout"], def.name);
    def.timeout_seconds = spec.timeout;
  }
  if (node["max_output"]) spec.max_output = byte_size(node["max_output"], "max_output");
}

std::string Loader::command_argument(const yaml::Node& arg, const AssetSpec& spec,
                                     const AssetDefinition& def) const {
  std::string text = scalar(arg, "a command argument");
  try {
    pipeline::expand_placeholders(text, nullptr, def.deps);
  } catch (const PipelineError& e) {
    fail(arg, e.what());
  }
  bool uses_window = text.find("{partition.") != std::string::npos ||
                     text.find("{window.") != std::string::npos ||
                     text.find("{bounds.") != std::string::npos;
  if (uses_window && !spec.partitioning) {
    fail(arg, fmt::format("argument '{}' uses a window placeholder but asset '{}' is not "
                          "partitioned",
                          text, def.name));
  }
  if (text.find("{bounds.") != std::string::npos && spec.partitioning &&
      !spec.partitioning->time_axis()) {
    fail(arg, fmt::format("argument '{}' uses {{bounds.*}} but asset '{}' is not "
                          "time-partitioned",
                          text, def.name));
  }
  return text;
}

void Loader::check_input_variables(const AssetSpec& spec, const AssetDefinition& def) const {
  for (std::size_t i = 0; i < def.deps.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (pipeline::input_variable(def.deps[i]) == pipeline::input_variable(def.deps[j])) {
        fail(
            spec.dep_nodes[i],
            fmt::format("dependencies '{}' and '{}' of asset '{}' would both be given in {}; "
                        "rename one of them",
                        def.deps[j], def.deps[i], def.name, pipeline::input_variable(def.deps[i])));
      }
    }
  }
}

// `timeout: SECONDS`, a positive number no larger than kMaxQueryTimeout: a deadline that far
// ahead still fits every clock, and PostgreSQL's statement_timeout holds it.
double Loader::timeout(const yaml::Node& node, const std::string& asset) const {
  std::string text = scalar(node, "timeout");
  double seconds = 0;
  try {
    std::size_t used = 0;
    seconds = std::stod(text, &used);
    if (used != text.size()) seconds = -1;
  } catch (const std::exception&) {
    seconds = -1;
  }
  if (!(seconds > 0)) {
    fail(node, fmt::format("asset '{}': timeout must be a positive number of seconds, not '{}'",
                           asset, text));
  }
  if (!(seconds <= kMaxQueryTimeout)) {  // also infinity
    fail(node, fmt::format("asset '{}': timeout '{}' is too long: at most {:.0f} seconds "
                           "(about 11 days); leave 'timeout' out for no limit",
                           asset, text, kMaxQueryTimeout));
  }
  return seconds;
}

// An sql body: exactly one statement, run inside the SQLite or PostgreSQL destination the
// asset writes to.
void Loader::read_sql(const yaml::Node& node, const SourceSpec& source, AssetSpec& spec,
                      AssetDefinition& def) {
  const yaml::Node sql = node["sql"];
  def.body = "sql";
  spec.sql_node = sql;
  def.sql = scalar(sql, "sql");
  if (def.sql.find_first_not_of(" \t\r\n") == std::string::npos) fail(sql, "'sql' is empty");
  const std::string& target = def.destination_url;
  const bool postgresql = target.rfind("postgresql:", 0) == 0 || target.rfind("postgres:", 0) == 0;
  if (std::size_t more = pipeline::second_statement(def.sql, postgresql);
      more != std::string::npos) {
    fail(sql, fmt::format("asset '{}': sql must be exactly one statement, but '{}' follows it",
                          def.name, one_line_excerpt(def.sql.substr(more))));
  }
  if (const std::string word = pipeline::first_keyword(def.sql);
      word != "SELECT" && word != "WITH" && word != "VALUES") {
    fail(sql, fmt::format("asset '{}': sql must be a query (SELECT, WITH ... SELECT or VALUES); {}",
                          def.name,
                          word.empty() ? "'" + one_line_excerpt(def.sql) + "' is not one"
                                       : word + " statements are not allowed"));
  }
  if (node["format"]) fail(node["format"], "'format' applies to command assets only");
  if (node["timeout"]) {
    spec.timeout = timeout(node["timeout"], def.name);
    def.timeout_seconds = spec.timeout;
  }
  if (node["max_output"]) {
    fail(node["max_output"], "'max_output' applies to command assets only");
  }
  if (target.rfind("sqlite:", 0) != 0 && !postgresql) {
    fail(sql, fmt::format("asset '{}': sql assets run inside a SQLite or PostgreSQL "
                          "destination, but source "
                          "'{}' writes to {}",
                          def.name, source.name, def.destination_url));
  }
}

}  // namespace interloper::pipeline
