#include "interloper/pipeline.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "interloper/dag.hpp"
#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/pipeline/assets.hpp"
#include "interloper/pipeline/jobs.hpp"
#include "interloper/pipeline/lazy_destination.hpp"

namespace interloper {

namespace fs = std::filesystem;

struct Pipeline::State {
  std::string path;
  std::string directory;
  std::string store_path;
  std::string destination_url;
  std::map<std::string, std::shared_ptr<Destination>> source_destinations;
  std::vector<AssetDefinition> definitions;
  std::unique_ptr<DAG> dag;
  std::vector<Job> jobs;
};

namespace {

using pipeline::LazyDestination;

// One asset as read from the file, before the DAG is built.
struct AssetSpec {
  AssetDefinition definition;
  YAML::Node name_node;
  YAML::Node deps_node;
  std::vector<YAML::Node> dep_nodes;
  YAML::Node sql_node;
  std::unique_ptr<PartitionConfig> partitioning;
  std::vector<std::string> argv;  // resolved program path
  bool csv = false;
  double timeout = 0;
  std::uint64_t max_output = pipeline::kDefaultMaxOutput;
  std::shared_ptr<Destination> destination;
};

struct SourceSpec {
  std::string name;
  std::shared_ptr<Destination> destination;
  std::vector<std::size_t> assets;  // indexes into Loader::assets
};

// The directory relative paths in the file resolve against: the directory of the file itself,
// after following the symbolic links that lead to it, so a pipeline reached through a link runs
// exactly as it does from where it lives. Directories above the file are left as spelled.
std::string file_directory(const std::string& path) {
  std::error_code ec;
  fs::path file = fs::absolute(path, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(file, ec); ++hops) {
    fs::path target = fs::read_symlink(file, ec);
    if (ec) break;
    file = target.is_absolute() ? target : file.parent_path() / target;
  }
  std::string directory = file.parent_path().lexically_normal().string();
  if (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  return directory;
}

class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) { directory_ = file_directory(path_); }

  // Reads the file, or `text` when given.
  std::unique_ptr<Pipeline::State> load(const std::optional<std::string>& text = std::nullopt);

 private:
  [[noreturn]] void fail_at(int line, int column, const std::string& message) const {
    throw PipelineError(fmt::format("{}:{}:{}: {}", path_, line, column, message));
  }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
    YAML::Mark mark = node.Mark();
    if (mark.line < 0) fail_at(1, 1, message);
    fail_at(mark.line + 1, mark.column + 1, message);
  }

  void check_keys(const YAML::Node& map, std::string_view what,
                  std::initializer_list<std::string_view> allowed) const;
  std::string scalar(const YAML::Node& node, std::string_view what) const;
  bool boolean(const YAML::Node& node, std::string_view what) const;
  std::uint64_t byte_size(const YAML::Node& node, std::string_view what) const;
  std::string expand_env(const YAML::Node& node, std::string_view what) const;
  std::string resolve_path(const std::string& path) const;
  std::shared_ptr<Destination> destination(const YAML::Node& node);
  std::unique_ptr<PartitionConfig> partitioning(const YAML::Node& node) const;
  Schema declared_schema(const YAML::Node& node, const PartitionConfig* partitioning) const;
  std::int64_t min_rows(const YAML::Node& asset) const;
  nlohmann::ordered_json time_definition(const YAML::Node& node) const;
  nlohmann::ordered_json list_definition(const YAML::Node& node) const;
  void read_asset(const YAML::Node& node, const SourceSpec& source);
  void check_graph() const;

  std::string path_;
  std::string directory_;
  std::map<std::string, std::shared_ptr<Destination>> destinations_by_url_;
  std::vector<AssetSpec> assets_;
  std::map<std::string, std::size_t> asset_index_;
};

void Loader::check_keys(const YAML::Node& map, std::string_view what,
                        std::initializer_list<std::string_view> allowed) const {
  if (!map.IsMap()) fail(map, fmt::format("{} must be a mapping", what));
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) fail(it->first, fmt::format("{} has a non-text key", what));
    std::string key = it->first.Scalar();
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    if (!known) {
      fail(it->first, fmt::format("unknown key '{}' in {} (expected one of: {})", key, what,
                                  fmt::join(allowed, ", ")));
    }
    if (!seen.insert(key).second)
      fail(it->first, fmt::format("duplicate key '{}' in {}", key, what));
  }
}

std::string Loader::scalar(const YAML::Node& node, std::string_view what) const {
  if (!node.IsScalar()) fail(node, fmt::format("{} must be a single value", what));
  return node.Scalar();
}

bool Loader::boolean(const YAML::Node& node, std::string_view what) const {
  std::string text = scalar(node, what);
  if (text == "true") return true;
  if (text == "false") return false;
  fail(node, fmt::format("{} must be true or false, not '{}'", what, text));
}

// A positive number of bytes, optionally with a binary suffix: 4096, 64K, 512M, 10G.
std::uint64_t Loader::byte_size(const YAML::Node& node, std::string_view what) const {
  const std::string text = scalar(node, what);
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string_view suffix = std::string_view(text).substr(digits);
  int shift = -1;
  if (suffix.empty()) shift = 0;
  if (suffix == "K") shift = 10;
  if (suffix == "M") shift = 20;
  if (suffix == "G") shift = 30;
  std::uint64_t value = 0;
  bool ok = digits > 0 && digits <= 12 && shift >= 0;
  if (ok) value = std::stoull(text.substr(0, digits)) << shift;
  if (!ok || value == 0) {
    fail(node, fmt::format("{} must be a positive number of bytes (4096, 64K, 512M, 10G), not '{}'",
                           what, text));
  }
  return value;
}

std::string Loader::expand_env(const YAML::Node& node, std::string_view what) const {
  std::string text = scalar(node, what);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      out += '$';
      ++i;
    } else if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      std::size_t close = text.find('}', i + 2);
      if (close == std::string::npos)
        fail(node, fmt::format("unclosed '${{' in {} '{}'", what, text));
      std::string name = text.substr(i + 2, close - i - 2);
      const char* value = std::getenv(name.c_str());
      if (value == nullptr) {
        fail(node, fmt::format("environment variable '{}' is not set (used in {} '{}')", name, what,
                               text));
      }
      out += value;
      i = close;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string Loader::resolve_path(const std::string& path) const {
  fs::path p(path);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (fs::path(directory_) / p).lexically_normal().string();
}

std::shared_ptr<Destination> Loader::destination(const YAML::Node& node) {
  std::string text =
      node ? expand_env(node, "destination") : std::string("sqlite:.interloper/data.db");
  auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) {
    fail(node, fmt::format("destination '{}' is not a URL (expected sqlite:///abs/path.db, "
                           "sqlite:relative/path.db or file:///dir?format=jsonl|csv)",
                           text));
  }
  std::string scheme = text.substr(0, colon);
  std::string rest = text.substr(colon + 1);
  std::string url = text, local;
  bool is_directory = false;
  if (scheme == "sqlite" || scheme == "file") {
    std::string query;
    if (auto q = rest.find('?'); q != std::string::npos) {
      query = rest.substr(q);
      rest.erase(q);
    }
    if (scheme == "file") {
      if (!query.empty() && query != "?format=jsonl" && query != "?format=csv") {
        fail(node, fmt::format("destination '{}': the only option is ?format=jsonl or "
                               "?format=csv, not '{}'",
                               text, query));
      }
      is_directory = true;
    } else if (!query.empty()) {
      fail(node, fmt::format("destination '{}': sqlite takes no options ('{}')", text, query));
    }
    // "scheme:///abs" and "scheme://./rel" name paths; "scheme://name" would be a host.
    if (rest.rfind("//", 0) == 0) {
      rest.erase(0, 2);
      if (!rest.empty() && rest[0] != '/' && rest[0] != '.') {
        fail(node, fmt::format("destination '{}': '{}' would be a host; write {}:///absolute/path "
                               "or {}:relative/path",
                               text, rest.substr(0, rest.find('/')), scheme, scheme));
      }
    }
    if (rest.empty()) fail(node, fmt::format("destination '{}' names no path", text));
    local = resolve_path(rest);
    url = scheme + "://" + local + query;
  } else if (scheme == "s3") {
    try {
      S3Destination::parse_url(text);  // credentials are read when the destination opens
    } catch (const DestinationError& e) {
      fail(node, e.what());
    }
  } else if (scheme == "postgresql" || scheme == "postgres") {
    // Connected now, so that a bad URL, password, database or host stops a run before any
    // asset executes. Messages carry the URL with its password as ***.
    auto& shared = destinations_by_url_[url];
    if (!shared) {
      try {
        shared = std::make_shared<PostgresDestination>(text);
      } catch (const DestinationError& e) {
        fail(node, e.what());
      }
    }
    return shared;
  } else if (scheme != "memory") {
    fail(node, fmt::format("destination '{}' has an unknown scheme '{}' (expected sqlite, file, "
                           "s3, postgresql or memory)",
                           text, scheme));
  }
  // Sources naming the same URL share one destination object (one SQLite connection).
  auto& shared = destinations_by_url_[url];
  if (!shared) shared = std::make_shared<LazyDestination>(url, local, is_directory);
  return shared;
}

// A YAML value as JSON, scalars typed the way YAML's core schema reads them (integers, booleans,
// null), so a registered kind's factory receives its fields as it wrote them in to_definition.
nlohmann::ordered_json yaml_to_json(const YAML::Node& node) {
  if (node.IsSequence()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& item : node) out.push_back(yaml_to_json(item));
    return out;
  }
  if (node.IsMap()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (auto it = node.begin(); it != node.end(); ++it) {
      out[it->first.Scalar()] = yaml_to_json(it->second);
    }
    return out;
  }
  if (!node.IsScalar()) return nullptr;
  if (node.Tag() == "!") return node.Scalar();  // quoted: always text
  const std::string& text = node.Scalar();
  if (text == "~" || text == "null") return nullptr;
  if (text == "true") return true;
  if (text == "false") return false;
  long long number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size()) return number;
  return text;
}

// The definition of a time partitioning, its fields checked where the file spells them.
nlohmann::ordered_json Loader::time_definition(const YAML::Node& node) const {
  if (node["values"]) fail(node["values"], "'values' belongs to list partitioning, not time");
  nlohmann::ordered_json definition = {{"kind", "time"},
                                       {"column", nullptr},
                                       {"granularity", "day"},
                                       {"allow_window", false},
                                       {"start", nullptr}};
  if (node["granularity"]) {
    std::string name = scalar(node["granularity"], "granularity");
    try {
      definition["granularity"] = TimeGranularity::from_name(name).name();
    } catch (const std::exception&) {
      fail(node["granularity"],
           fmt::format("unknown granularity '{}' (expected hour, day, week, month, quarter or "
                       "year)",
                       name));
    }
  }
  if (node["start"]) {
    // Any key of the granularity ("2026-10", "2026-W40") or a date/time names the first period.
    std::string text = scalar(node["start"], "start");
    const TimeGranularity granularity =
        TimeGranularity::from_name(definition["granularity"].get<std::string>());
    std::optional<TimePoint> start;
    try {
      start = granularity.parse(text);
    } catch (const std::exception&) {
      try {
        start = TimePoint::parse(text);
      } catch (const std::exception&) {
      }
    }
    if (!start) {
      fail(node["start"], fmt::format("start '{}' is not a {} key (e.g. {}), a date (YYYY-MM-DD) "
                                      "or a time (YYYY-MM-DDTHH:MM:SS)",
                                      text, granularity.name(),
                                      granularity.format(TimePoint(std::chrono::sys_days(
                                          std::chrono::year{2026} / 10 / 5)))));
    }
    definition["start"] = start->to_string();
  }
  return definition;
}

// The definition of a list partitioning, its values checked where the file spells them.
nlohmann::ordered_json Loader::list_definition(const YAML::Node& node) const {
  if (node["granularity"]) fail(node["granularity"], "'granularity' belongs to time partitioning");
  if (node["start"]) fail(node["start"], "'start' belongs to time partitioning");
  const YAML::Node values = node["values"];
  if (!values) fail(node, "list partitioning needs 'values'");
  if (!values.IsSequence()) fail(values, "'values' must be a list");
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& v : values) list.push_back(scalar(v, "a list value"));
  return {{"kind", "list"}, {"column", nullptr}, {"values", list}, {"allow_window", false}};
}

// Every kind is built through the kind registry from its definition. The built-in kinds get
// their fields checked here first, so a mistake is reported at the field; another registered
// kind receives the mapping as its definition and reports its own mistakes.
std::unique_ptr<PartitionConfig> Loader::partitioning(const YAML::Node& node) const {
  if (!node.IsMap()) fail(node, "partitioning must be a mapping");
  if (!node["kind"]) fail(node, "partitioning needs 'kind: time' or 'kind: list'");
  std::string kind = scalar(node["kind"], "kind");
  const bool built_in = kind == "time" || kind == "list";
  if (built_in) {
    check_keys(node, "partitioning",
               {"kind", "column", "granularity", "start", "allow_window", "values"});
  }
  if (!node["column"]) fail(node, "partitioning needs a 'column'");
  std::string column = scalar(node["column"], "column");
  if (column.empty()) fail(node["column"], "partitioning column must not be empty");
  nlohmann::ordered_json definition = kind == "time"   ? time_definition(node)
                                      : kind == "list" ? list_definition(node)
                                                       : yaml_to_json(node);
  definition["column"] = column;
  if (node["allow_window"])
    definition["allow_window"] = boolean(node["allow_window"], "allow_window");
  std::string text;
  try {
    text = definition.dump();
  } catch (const nlohmann::json::exception&) {
    fail(node, "partitioning holds text that is not valid UTF-8");
  }
  try {
    return PartitionConfig::from_definition(text);
  } catch (const PartitionError& e) {
    if (kind == "list") fail(node["values"], fmt::format("bad values: {}", e.what()));
    fail(built_in ? node : node["kind"], e.what());
  }
}

// `schema: {column: type, ...}`, each type one a column can be declared with, and the time
// partition column a time.
Schema Loader::declared_schema(const YAML::Node& node, const PartitionConfig* partitioning) const {
  if (!node.IsMap()) {
    fail(node, "schema must be a mapping of column to type, e.g. {zip: string, amount: double}");
  }
  std::vector<Field> fields;
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string column = scalar(it->first, "a schema column");
    if (column.empty()) fail(it->first, "a schema column name must not be empty");
    for (const Field& f : fields) {
      if (f.name == column) fail(it->first, fmt::format("schema declares '{}' twice", column));
    }
    if (it->second.IsNull()) {
      fail(it->first, fmt::format("column '{}' needs a type (string, int, double, bool, date or "
                                  "timestamp)",
                                  column));
    }
    std::string name = scalar(it->second, "a column type");
    DataType type = DataType::null;
    try {
      type = type_from_name(name);
    } catch (const DataError&) {
    }
    if (type == DataType::null) {
      fail(it->second, fmt::format("unknown type '{}' for column '{}' (expected string, int, "
                                   "double, bool, date or timestamp)",
                                   name, column));
    }
    if (partitioning != nullptr && partitioning->kind() == "time" &&
        partitioning->column() == column && type != DataType::date && type != DataType::timestamp) {
      fail(it->second, fmt::format("column '{}' is the time partition column: declare it date "
                                   "or timestamp, not {}",
                                   column, name));
    }
    fields.push_back({column, type});
  }
  return Schema(std::move(fields));
}

// `min_rows: N`, or `allow_empty: false` (the same as min_rows: 1); 0 when neither is given.
std::int64_t Loader::min_rows(const YAML::Node& asset) const {
  const YAML::Node allow_empty = asset["allow_empty"];
  const YAML::Node min = asset["min_rows"];
  if (allow_empty && min) {
    fail(min,
         "give either 'allow_empty' or 'min_rows', not both (allow_empty: false is "
         "min_rows: 1)");
  }
  if (allow_empty) return boolean(allow_empty, "allow_empty") ? 0 : 1;
  if (!min) return 0;
  std::string text = scalar(min, "min_rows");
  std::int64_t rows = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rows);
  if (error != std::errc() || end != text.data() + text.size() || rows < 0) {
    fail(min, fmt::format("min_rows must be a whole number of rows (0 or more), not '{}'", text));
  }
  return rows;
}

void Loader::read_asset(const YAML::Node& node, const SourceSpec& source) {
  check_keys(node, "asset",
             {"name", "partitioning", "deps", "enabled", "command", "sql", "format", "timeout",
              "max_output", "schema", "allow_empty", "min_rows", "destination"});
  AssetSpec spec;
  AssetDefinition& def = spec.definition;
  def.line = node.Mark().line + 1;
  def.column = node.Mark().column + 1;
  def.source = source.name;
  if (!node["name"]) fail(node, "asset needs a 'name'");
  spec.name_node = node["name"];
  def.name = scalar(node["name"], "asset name");
  if (def.name.empty()) fail(node["name"], "asset name must not be empty");
  if (asset_index_.count(def.name) != 0) {
    fail(node["name"], fmt::format("duplicate asset name '{}'", def.name));
  }
  if (node["enabled"]) def.enabled = boolean(node["enabled"], "enabled");
  if (node["partitioning"]) {
    spec.partitioning = partitioning(node["partitioning"]);
    try {
      def.partitioning = spec.partitioning->to_definition();
    } catch (const std::exception& e) {
      // The definition is JSON: text that is not UTF-8 cannot be part of it.
      fail(node["partitioning"], fmt::format("partitioning cannot be described: {}", e.what()));
    }
  }
  if (node["schema"]) def.schema = declared_schema(node["schema"], spec.partitioning.get());
  def.min_rows = min_rows(node);
  if (const YAML::Node deps = node["deps"]) {
    spec.deps_node = deps;
    if (!deps.IsSequence()) fail(deps, "'deps' must be a list of asset names");
    for (const auto& d : deps) {
      def.deps.push_back(scalar(d, "a dependency"));
      spec.dep_nodes.push_back(d);
    }
  }
  const YAML::Node command = node["command"];
  const YAML::Node sql = node["sql"];
  if (command && sql) {
    fail(sql, fmt::format("asset '{}' has two bodies: give either 'command' or 'sql'", def.name));
  }
  if (!command && !sql) {
    fail(node, fmt::format("asset '{}' has no body: give 'command: [program, args...]' or "
                           "'sql: SELECT ...'",
                           def.name));
  }
  spec.destination = node["destination"] ? destination(node["destination"]) : source.destination;
  def.destination_url = spec.destination->url();
  if (command) {
    def.body = "command";
    if (!command.IsSequence()) {
      fail(command, "'command' must be a list: [program, arg, ...] (it runs without a shell)");
    }
    if (command.size() == 0) fail(command, "'command' must name a program");
    for (const auto& arg : command) {
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
          spec.partitioning->kind() != "time") {
        fail(arg, fmt::format("argument '{}' uses {{bounds.*}} but asset '{}' is not "
                              "time-partitioned",
                              text, def.name));
      }
      def.command.push_back(text);
    }
    spec.argv = def.command;
    // Each dependency's input file is named by a variable; two names must not give the same.
    for (std::size_t i = 0; i < def.deps.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (pipeline::input_variable(def.deps[i]) == pipeline::input_variable(def.deps[j])) {
          fail(spec.dep_nodes[i],
               fmt::format("dependencies '{}' and '{}' of asset '{}' would both be given in {}; "
                           "rename one of them",
                           def.deps[j], def.deps[i], def.name,
                           pipeline::input_variable(def.deps[i])));
        }
      }
    }
    if (spec.argv[0].find('/') != std::string::npos) spec.argv[0] = resolve_path(spec.argv[0]);
    def.format = "jsonl";
    if (node["format"]) {
      def.format = scalar(node["format"], "format");
      if (def.format != "jsonl" && def.format != "csv") {
        fail(node["format"], fmt::format("format must be jsonl or csv, not '{}'", def.format));
      }
    }
    spec.csv = def.format == "csv";
    if (node["timeout"]) {
      std::string text = scalar(node["timeout"], "timeout");
      double seconds = 0;
      try {
        std::size_t used = 0;
        seconds = std::stod(text, &used);
        if (used != text.size()) seconds = -1;
      } catch (const std::exception&) {
        seconds = -1;
      }
      if (!(seconds > 0)) {
        fail(node["timeout"], fmt::format("timeout must be a positive number of seconds, not "
                                          "'{}'",
                                          text));
      }
      spec.timeout = seconds;
      def.timeout_seconds = seconds;
    }
    if (node["max_output"]) spec.max_output = byte_size(node["max_output"], "max_output");
  } else {
    def.body = "sql";
    spec.sql_node = sql;
    def.sql = scalar(sql, "sql");
    if (def.sql.find_first_not_of(" \t\r\n") == std::string::npos) fail(sql, "'sql' is empty");
    if (node["format"]) fail(node["format"], "'format' applies to command assets only");
    if (node["timeout"]) fail(node["timeout"], "'timeout' applies to command assets only");
    if (node["max_output"]) {
      fail(node["max_output"], "'max_output' applies to command assets only");
    }
    const std::string& target = def.destination_url;
    if (target.rfind("sqlite:", 0) != 0 && target.rfind("postgresql:", 0) != 0 &&
        target.rfind("postgres:", 0) != 0) {
      fail(sql, fmt::format("asset '{}': sql assets run inside a SQLite or PostgreSQL "
                            "destination, but source "
                            "'{}' writes to {}",
                            def.name, source.name, def.destination_url));
    }
  }
  asset_index_[def.name] = assets_.size();
  assets_.push_back(std::move(spec));
}

void Loader::check_graph() const {
  for (const auto& spec : assets_) {
    for (std::size_t i = 0; i < spec.definition.deps.size(); ++i) {
      const std::string& dep = spec.definition.deps[i];
      auto found = asset_index_.find(dep);
      if (found == asset_index_.end()) {
        fail(spec.dep_nodes[i],
             fmt::format("asset '{}' depends on unknown asset '{}'", spec.definition.name, dep));
      }
      const AssetSpec& upstream = assets_[found->second];
      if (spec.partitioning && upstream.partitioning &&
          !edge_allowed(*upstream.partitioning, *spec.partitioning)) {
        fail(spec.dep_nodes[i],
             fmt::format("asset '{}' ({}) depends on '{}' ({}): the partitionings cannot be mapped "
                         "(time to time, or the same list)",
                         spec.definition.name, spec.definition.partitioning, dep,
                         upstream.definition.partitioning));
      }
      if (spec.definition.body == "sql" &&
          upstream.definition.destination_url != spec.definition.destination_url) {
        fail(spec.dep_nodes[i],
             fmt::format("sql asset '{}' reads '{}' from {}, but '{}' is stored in {}",
                         spec.definition.name, dep, spec.definition.destination_url, dep,
                         upstream.definition.destination_url));
      }
    }
  }
  // Depth-first search for a cycle, reported from its first asset in declaration order.
  enum Color { white, grey, black };
  std::vector<Color> color(assets_.size(), white);
  std::vector<std::size_t> stack;
  std::function<void(std::size_t)> visit = [&](std::size_t i) {
    color[i] = grey;
    stack.push_back(i);
    for (const auto& dep : assets_[i].definition.deps) {
      std::size_t j = asset_index_.at(dep);
      if (color[j] == grey) {
        std::string path;
        auto from = std::find(stack.begin(), stack.end(), j);
        for (auto it = from; it != stack.end(); ++it) {
          path += assets_[*it].definition.name + " -> ";
        }
        path += assets_[j].definition.name;
        fail(assets_[j].name_node, fmt::format("dependency cycle: {}", path));
      }
      if (color[j] == white) visit(j);
    }
    stack.pop_back();
    color[i] = black;
  };
  for (std::size_t i = 0; i < assets_.size(); ++i) {
    if (color[i] == white) visit(i);
  }
}

std::unique_ptr<Pipeline::State> Loader::load(const std::optional<std::string>& text) {
  YAML::Node root;
  try {
    root = text ? YAML::Load(*text) : YAML::LoadFile(path_);
  } catch (const YAML::BadFile&) {
    fail_at(1, 1, "cannot read the pipeline file");
  } catch (const YAML::Exception& e) {
    fail_at(e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (!root || root.IsNull()) fail_at(1, 1, "the pipeline file is empty");
  check_keys(root, "pipeline", {"destination", "store", "sources", "jobs"});
  auto state = std::make_unique<Pipeline::State>();
  state->path = path_;
  state->directory = directory_;
  std::shared_ptr<Destination> default_destination = destination(root["destination"]);
  state->destination_url = default_destination->url();
  if (root["store"]) {
    std::string store = expand_env(root["store"], "store");
    const bool server = store.rfind("postgresql://", 0) == 0 || store.rfind("postgres://", 0) == 0;
    state->store_path = server ? store : resolve_path(store);  // a server's URL is no path
  } else {
    state->store_path = resolve_path(".interloper/state.db");
  }

  const YAML::Node sources = root["sources"];
  if (!sources) fail(root, "the pipeline has no 'sources'");
  if (!sources.IsSequence() || sources.size() == 0) {
    fail(sources, "'sources' must be a non-empty list");
  }
  std::vector<SourceSpec> source_specs;
  for (const auto& node : sources) {
    check_keys(node, "source", {"name", "destination", "assets"});
    SourceSpec source;
    if (!node["name"]) fail(node, "source needs a 'name'");
    source.name = scalar(node["name"], "source name");
    if (source.name.empty()) fail(node["name"], "source name must not be empty");
    for (const auto& other : source_specs) {
      if (other.name == source.name) {
        fail(node["name"], fmt::format("duplicate source name '{}'", source.name));
      }
    }
    source.destination =
        node["destination"] ? destination(node["destination"]) : default_destination;
    const YAML::Node assets = node["assets"];
    if (!assets) fail(node, fmt::format("source '{}' has no 'assets'", source.name));
    if (!assets.IsSequence()) fail(assets, "'assets' must be a list");
    for (const auto& asset : assets) {
      source.assets.push_back(assets_.size());
      read_asset(asset, source);
    }
    state->source_destinations[source.name] = source.destination;
    source_specs.push_back(std::move(source));
  }
  check_graph();

  std::vector<Source> dag_sources;
  for (const auto& source : source_specs) {
    Source built(source.name, source.destination);
    for (std::size_t index : source.assets) {
      const AssetSpec& spec = assets_[index];
      const AssetDefinition& def = spec.definition;
      ComputeFn compute;
      if (def.body == "command") {
        pipeline::CommandAsset command{.argv = spec.argv,
                                       .working_directory = directory_,
                                       .csv = spec.csv,
                                       .timeout_seconds = spec.timeout,
                                       .max_output = spec.max_output,
                                       .inputs = def.deps,
                                       .read = {.schema = def.schema}};
        // Only the time partition column turns date-shaped text into dates by default.
        if (spec.partitioning && spec.partitioning->kind() == "time") {
          command.read.time_column = spec.partitioning->column();
        }
        compute = pipeline::command_compute(std::move(command));
      } else {
        pipeline::SqlAsset sql{
            .sql = def.sql, .source = def.source, .deps = {}, .destination = spec.destination};
        for (const auto& dep : def.deps) {
          const AssetSpec& upstream = assets_[asset_index_.at(dep)];
          sql.deps.push_back({upstream.definition.source, upstream.definition.name, nullptr});
        }
        compute = pipeline::sql_compute(std::move(sql));
      }
      Asset& asset = built.asset(def.name, std::move(compute));
      if (spec.partitioning) asset.partitioned(*spec.partitioning);
      asset.depends_on(def.deps);
      asset.enabled(def.enabled);
      asset.schema(def.schema);
      asset.min_rows(def.min_rows);
      if (spec.destination != source.destination) asset.destination(spec.destination);
    }
    dag_sources.push_back(std::move(built));
  }
  try {
    state->dag = std::make_unique<DAG>(std::move(dag_sources));
  } catch (const Error& e) {
    fail(sources, e.what());
  }
  state->jobs = pipeline::read_jobs(root["jobs"], path_, *state->dag);
  for (auto& spec : assets_) state->definitions.push_back(std::move(spec.definition));
  return state;
}

}  // namespace

Pipeline Pipeline::load(const std::string& path) { return Pipeline(Loader(path).load()); }

Pipeline Pipeline::parse(const std::string& yaml, const std::string& path) {
  return Pipeline(Loader(path).load(yaml));
}

Pipeline::Pipeline(std::unique_ptr<State> state) : state_(std::move(state)) {}
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::~Pipeline() = default;

const DAG& Pipeline::dag() const { return *state_->dag; }
const std::string& Pipeline::path() const { return state_->path; }
const std::string& Pipeline::directory() const { return state_->directory; }
std::string Pipeline::store_path() const { return state_->store_path; }
const std::string& Pipeline::destination_url() const { return state_->destination_url; }

std::shared_ptr<Destination> Pipeline::source_destination(const std::string& source) const {
  auto it = state_->source_destinations.find(source);
  return it == state_->source_destinations.end() ? nullptr : it->second;
}

const std::vector<AssetDefinition>& Pipeline::definitions() const { return state_->definitions; }

const std::vector<Job>& Pipeline::jobs() const { return state_->jobs; }

const AssetDefinition* Pipeline::definition(const std::string& asset) const {
  for (const auto& d : state_->definitions) {
    if (d.name == asset) return &d;
  }
  return nullptr;
}

std::string Pipeline::catalog(bool with_schema) const {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& def : state_->definitions) {
    nlohmann::ordered_json entry;
    entry["name"] = def.name;
    entry["source"] = def.source;
    entry["deps"] = def.deps;
    entry["enabled"] = def.enabled;
    entry["body"] = def.body;
    if (def.body == "command") {
      entry["command"] = def.command;
      entry["format"] = def.format;
      entry["timeout"] = def.timeout_seconds ? nlohmann::ordered_json(*def.timeout_seconds)
                                             : nlohmann::ordered_json(nullptr);
    } else {
      entry["sql"] = def.sql;
    }
    entry["partitioning"] = def.partitioning.empty()
                                ? nlohmann::ordered_json(nullptr)
                                : nlohmann::ordered_json::parse(def.partitioning);
    entry["destination"] = def.destination_url;
    if (!def.schema.empty()) {
      entry["declared_schema"] = nlohmann::ordered_json::parse(schema_to_json(def.schema));
    }
    if (def.min_rows > 0) entry["min_rows"] = def.min_rows;
    if (with_schema) {
      const Asset& asset = state_->dag->asset(def.name);
      Destination* destination = state_->dag->destination_of(asset);
      std::optional<Schema> schema =
          destination != nullptr ? destination->schema(asset.dataset()) : std::nullopt;
      entry["schema"] = schema ? nlohmann::ordered_json::parse(schema_to_json(*schema))
                               : nlohmann::ordered_json(nullptr);
    }
    out.push_back(std::move(entry));
  }
  // Invalid UTF-8 in the file (names, commands) is replaced rather than fatal.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace interloper
