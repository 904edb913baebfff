// The values a pipeline file spells, each checked where it is written: scalars, sizes,
// environment variables, paths, destination and store URLs, partitionings and schemas.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>

#include "interloper/data.hpp"
#include "interloper/destination/destination_url.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/pipeline/lazy_destination.hpp"
#include "interloper/pipeline/loader.hpp"
#include "interloper/store.hpp"

namespace interloper::pipeline {

namespace fs = std::filesystem;

// The start of `text` on one line, for messages.
std::string one_line_excerpt(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out(text.substr(0, kMax));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';  // NUL, newline...
  }
  return text.size() > kMax ? out + "..." : out;
}

void Loader::check_keys(const yaml::Node& map, std::string_view what,
                        std::initializer_list<std::string_view> allowed) const {
  if (!map.is_map()) fail(map, fmt::format("{} must be a mapping", what));
  std::uint64_t seen = 0;  // bit i: allowed[i] (no mapping allows more than 64 keys)
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.is_scalar()) fail(it->first, fmt::format("{} has a non-text key", what));
    const std::string_view key = it->first.scalar();
    auto known = std::find(allowed.begin(), allowed.end(), key);
    if (known == allowed.end()) {
      fail(it->first, fmt::format("unknown key '{}' in {} (expected one of: {})", key, what,
                                  fmt::join(allowed, ", ")));
    }
    const std::uint64_t bit = std::uint64_t{1} << (known - allowed.begin());
    if ((seen & bit) != 0) fail(it->first, fmt::format("duplicate key '{}' in {}", key, what));
    seen |= bit;
  }
}

std::string Loader::scalar(const yaml::Node& node, std::string_view what) const {
  if (!node.is_scalar()) fail(node, fmt::format("{} must be a single value", what));
  return std::string(node.scalar());
}

// `description: TEXT` of a source or an asset, without the line break a block scalar ends with.
// Text for people, printed as it is: line breaks and tabs, but no other control character (an
// escape sequence would act on the terminal that shows the catalog).
std::string Loader::description(const yaml::Node& node) const {
  std::string text = scalar(node, "description");
  text.erase(text.find_last_not_of(" \t\r\n") + 1);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if ((u < 0x20 && u != '\n' && u != '\t') || u == 0x7f) {
      fail(node, fmt::format("description holds the control character 0x{:02x} at byte {} (line "
                             "breaks and tabs are the only ones allowed)",
                             u, i + 1));
    }
  }
  return text;
}

bool Loader::boolean(const yaml::Node& node, std::string_view what) const {
  std::string text = scalar(node, what);
  if (text == "true") return true;
  if (text == "false") return false;
  fail(node, fmt::format("{} must be true or false, not '{}'", what, text));
}

// A positive number of bytes, optionally with a binary suffix: 4096, 64K, 512M, 10G.
std::uint64_t Loader::byte_size(const yaml::Node& node, std::string_view what) const {
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

// "${NAME}" is the variable's value, "${NAME:-default}" the default when the variable is unset
// or empty; a variable that is unset or empty without a default is an error, since an empty
// part of a URL or path silently changes what it names ("sqlite:${DIR}/w.db" -> "/w.db").
std::string Loader::expand_env(const yaml::Node& node, std::string_view what) const {
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
      std::optional<std::string> fallback;
      if (std::size_t dash = name.find(":-"); dash != std::string::npos) {
        fallback = name.substr(dash + 2);
        name.erase(dash);
      }
      if (name.empty()) fail(node, fmt::format("'${{}}' names no variable in {} '{}'", what, text));
      const char* value = std::getenv(name.c_str());
      if (value != nullptr && *value != '\0') {
        out += value;
      } else if (fallback) {
        out += *fallback;
      } else {
        fail(node, fmt::format("environment variable '{}' is {} (used in {} '{}'; write "
                               "${{{}:-default}} to give a default)",
                               name, value == nullptr ? "not set" : "empty", what, text, name));
      }
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

// The store in the forms open_store reads, relative files resolved against the pipeline's
// directory; "memory://" stays as written.
std::string Loader::store_path(const yaml::Node& node) const {
  if (!node) return resolve_path(".interloper/state.db");
  std::string text = expand_env(node, "store");
  // A server's URL is no path: it stays as written.
  if (text.rfind("postgresql://", 0) == 0 || text.rfind("postgres://", 0) == 0) return text;
  std::optional<std::string> file;
  try {
    file = store_file(text);
  } catch (const DestinationError& e) {
    fail(node, e.what());
  }
  return file ? resolve_path(*file) : std::string("memory://");
}

std::shared_ptr<Destination> Loader::destination(const yaml::Node& node) {
  std::string text =
      node ? expand_env(node, "destination") : std::string("sqlite:.interloper/data.db");
  DestinationUrl url;
  try {
    url = parse_destination_url(text);
  } catch (const DestinationError& e) {
    fail(node, e.what());
  }
  std::string key = text, local;
  bool is_directory = false;
  switch (url.scheme) {
    case DestinationUrl::Scheme::sqlite:
    case DestinationUrl::Scheme::file:
      is_directory = url.scheme == DestinationUrl::Scheme::file;
      local = resolve_path(url.path);
      key = url.with_path(local);
      break;
    case DestinationUrl::Scheme::postgresql: {
      // Connected now, so that a bad URL, password, database or host stops a run before any
      // asset executes. Messages carry the URL with its password as ***.
      auto& shared = destinations_by_url_[key];
      if (!shared) {
        try {
          shared = std::make_shared<PostgresDestination>(text);
        } catch (const DestinationError& e) {
          fail(node, e.what());
        }
      }
      return shared;
    }
    case DestinationUrl::Scheme::memory:
    case DestinationUrl::Scheme::s3:
      break;  // an S3 destination reads its credentials when it opens
  }
  // Sources naming the same URL share one destination object (one SQLite connection).
  auto& shared = destinations_by_url_[key];
  if (!shared) shared = std::make_shared<pipeline::LazyDestination>(key, local, is_directory);
  return shared;
}

// A YAML value as JSON, scalars typed the way YAML's core schema reads them (integers, booleans,
// null), so a registered kind's factory receives its fields as it wrote them in to_definition.
nlohmann::ordered_json yaml_to_json(const yaml::Node& node) {
  if (node.is_sequence()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& item : node) out.push_back(yaml_to_json(item));
    return out;
  }
  if (node.is_map()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (auto it = node.begin(); it != node.end(); ++it) {
      out[std::string(it->first.scalar())] = yaml_to_json(it->second);
    }
    return out;
  }
  if (!node.is_scalar()) return nullptr;
  if (node.quoted()) return std::string(node.scalar());  // quoted: always text
  const std::string_view text = node.scalar();
  if (text == "~" || text == "null") return nullptr;
  if (text == "true") return true;
  if (text == "false") return false;
  long long number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size()) return number;
  return std::string(text);
}

// The definition of a time partitioning, its fields checked where the file spells them.
nlohmann::ordered_json Loader::time_definition(const yaml::Node& node) const {
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

// The definition of a list partitioning, each value checked where the file spells them, by the
// rules ListPartitionConfig itself enforces (ListPartitionConfig::check_value).
void Loader::check_list_value(const yaml::Node& node, const std::string& value) const {
  try {
    ListPartitionConfig::check_value(value);
  } catch (const PartitionError& e) {
    fail(node, e.what());
  }
}

nlohmann::ordered_json Loader::list_definition(const yaml::Node& node) const {
  if (node["granularity"]) fail(node["granularity"], "'granularity' belongs to time partitioning");
  if (node["start"]) fail(node["start"], "'start' belongs to time partitioning");
  const yaml::Node values = node["values"];
  if (!values) fail(node, "list partitioning needs 'values'");
  if (!values.is_sequence()) fail(values, "'values' must be a list");
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& v : values) {
    std::string value = scalar(v, "a list value");
    check_list_value(v, value);
    list.push_back(std::move(value));
  }
  return {{"kind", "list"}, {"column", nullptr}, {"values", list}, {"allow_window", false}};
}

// Every kind is built through the kind registry from its definition. The built-in kinds get
// their fields checked here first, so a mistake is reported at the field; another registered
// kind receives the mapping as its definition and reports its own mistakes.
std::unique_ptr<PartitionConfig> Loader::partitioning(const yaml::Node& node) const {
  if (!node.is_map()) fail(node, "partitioning must be a mapping");
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

constexpr const char* kColumnTypes =
    "string, int, double, bool, date, timestamp, decimal(p,s) or json";

// `schema: {column: type, ...}`, each type one a column can be declared with, and the time
// partition column a time.
Schema Loader::declared_schema(const yaml::Node& node, const PartitionConfig* partitioning) const {
  if (!node.is_map()) {
    fail(node, "schema must be a mapping of column to type, e.g. {zip: string, amount: double}");
  }
  std::vector<Field> fields;
  for (auto it = node.begin(); it != node.end(); ++it) {
    std::string column = scalar(it->first, "a schema column");
    if (column.empty()) fail(it->first, "a schema column name must not be empty");
    for (const Field& f : fields) {
      if (f.name == column) fail(it->first, fmt::format("schema declares '{}' twice", column));
    }
    if (it->second.is_null()) {
      fail(it->first, fmt::format("column '{}' needs a type ({})", column, kColumnTypes));
    }
    std::string name = scalar(it->second, "a column type");
    Field field;
    try {
      field = field_of_type(column, name);
    } catch (const DataError& e) {
      if (name.rfind("decimal(", 0) == 0 && name.find(')') == std::string::npos) {
        fail(it->second, fmt::format("column '{}': type '{}' is cut at its comma, as YAML splits "
                                     "a {{...}} mapping there: quote it (\"decimal(38,2)\") or "
                                     "write the schema one column per line",
                                     column, name));
      }
      if (name.rfind("decimal(", 0) == 0) {
        fail(it->second, fmt::format("column '{}': {}", column, e.what()));
      }
    }
    if (field.type == DataType::null) {
      fail(it->second, fmt::format("unknown type '{}' for column '{}' (expected {})", name, column,
                                   kColumnTypes));
    }
    const std::optional<TimeAxis> axis =
        partitioning != nullptr ? partitioning->time_axis() : std::nullopt;
    if (axis && axis->column == column && field.type != DataType::date &&
        field.type != DataType::timestamp) {
      fail(it->second, fmt::format("column '{}' is the time partition column: declare it date "
                                   "or timestamp, not {}",
                                   column, name));
    }
    fields.push_back(std::move(field));
  }
  return Schema(std::move(fields));
}

// `min_rows: N`, or `allow_empty: false` (the same as min_rows: 1); 0 when neither is given.
std::int64_t Loader::min_rows(const yaml::Node& asset) const {
  const yaml::Node allow_empty = asset["allow_empty"];
  const yaml::Node min = asset["min_rows"];
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

}  // namespace interloper::pipeline
