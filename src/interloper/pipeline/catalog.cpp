// The catalog: every asset's definition and stored schema, built once and rendered as JSON or
// text.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "interloper/data.hpp"
#include "interloper/pipeline.hpp"

namespace interloper {

namespace {

using json = nlohmann::ordered_json;

// Each source's description by the source's name (assets outside any source have none).
using SourceDescriptions = std::unordered_map<std::string_view, std::string_view>;

SourceDescriptions source_descriptions(const DAG& dag) {
  SourceDescriptions out;
  for (const Source& source : dag.sources()) out.emplace(source.name(), source.description());
  return out;
}

CatalogEntry entry_of(const DAG& dag, const SourceDescriptions& sources, const Asset& asset,
                      const AssetDefinition* definition, bool with_schema) {
  CatalogEntry entry;
  entry.name = asset.name();
  entry.source = asset.source_name();
  entry.deps = asset.deps();
  for (const std::string& dep : entry.deps) entry.mappings.push_back(asset.mapping(dep));
  entry.enabled = asset.enabled();
  entry.description = asset.description();
  if (const auto found = sources.find(entry.source); found != sources.end()) {
    entry.source_description = found->second;
  }
  entry.definition = definition;
  entry.partitioning = asset.partitioning();
  Destination* destination = dag.destination_of(asset);
  if (destination != nullptr) entry.destination = destination->url();
  entry.schema_read = with_schema;
  if (with_schema && destination != nullptr) {
    entry.schema = destination->schema(asset.dataset());
    if (entry.schema) entry.retired_columns = destination->retired_columns(asset.dataset());
  }
  return entry;
}

json schema_json(const Schema& schema) {
  json out = json::array();
  for (const Field& f : schema.fields()) {
    out.push_back({{"name", f.name}, {"type", type_text(f)}});
  }
  return out;
}

// "events (window -6..0), fx": each dependency, with its mapping unless it reads the overlap.
std::string deps_text(const CatalogEntry& entry) {
  std::string out;
  for (std::size_t i = 0; i < entry.deps.size(); ++i) {
    out += (i == 0 ? "" : ", ") + entry.deps[i];
    if (i < entry.mappings.size() && !entry.mappings[i].is_overlap()) {
      out += " (" + entry.mappings[i].to_string() + ")";
    }
  }
  return out;
}

json text_or_null(const std::string& text) { return text.empty() ? json() : json(text); }

json entry_json(const CatalogEntry& entry) {
  json out;
  out["name"] = entry.name;
  out["source"] = entry.source;
  out["deps"] = entry.deps;
  // What a dependency reads, for those that say more than the overlap.
  json mappings = json::object();
  for (std::size_t i = 0; i < entry.deps.size() && i < entry.mappings.size(); ++i) {
    if (!entry.mappings[i].is_overlap()) {
      mappings[entry.deps[i]] = json::parse(entry.mappings[i].to_definition());
    }
  }
  if (!mappings.empty()) out["mappings"] = mappings;
  out["enabled"] = entry.enabled;
  out["description"] = text_or_null(entry.description);
  out["source_description"] = text_or_null(entry.source_description);
  const AssetDefinition* def = entry.definition;
  out["body"] = def != nullptr ? def->body : "code";
  if (def != nullptr && def->body == "command") {
    out["command"] = def->command;
    out["format"] = def->format;
    out["timeout"] = def->timeout_seconds ? json(*def->timeout_seconds) : json(nullptr);
  } else if (def != nullptr && def->body == "python") {
    out["python"] = def->python;
  } else if (def != nullptr) {
    out["sql"] = def->sql;
    if (def->timeout_seconds) out["timeout"] = *def->timeout_seconds;
  }
  // A partitioning of any registered kind describes itself (PartitionConfig::to_definition).
  out["partitioning"] =
      entry.partitioning != nullptr ? json::parse(entry.partitioning->to_definition()) : json();
  out["destination"] = entry.destination ? json(*entry.destination) : json();
  if (def != nullptr && !def->schema.empty()) out["declared_schema"] = schema_json(def->schema);
  if (def != nullptr && def->min_rows > 0) out["min_rows"] = def->min_rows;
  if (entry.schema_read) {
    out["schema"] = entry.schema ? schema_json(*entry.schema) : json();
    out["retired_columns"] = entry.retired_columns;
  }
  return out;
}

std::string partitioning_text(const PartitionConfig* config) {
  if (config == nullptr) return "unpartitioned";
  if (const std::optional<TimeAxis> axis = config->time_axis()) {
    return fmt::format("{} by {}", axis->granularity.name(), axis->column);
  }
  return fmt::format("{} by {}", config->kind(), config->column());
}

// `text` after `lead`, its later lines indented as far as its first, ending with a newline.
std::string indented(std::string_view lead, std::string_view text) {
  std::string out(lead);
  for (const char c : text) {
    out += c;
    if (c == '\n') out.append(lead.size(), ' ');
  }
  return out + "\n";
}

}  // namespace

std::vector<CatalogEntry> catalog(const DAG& dag, const Pipeline* pipeline, bool with_schema) {
  std::vector<CatalogEntry> out;
  const SourceDescriptions sources = source_descriptions(dag);
  if (pipeline != nullptr) {
    for (const AssetDefinition& def : pipeline->definitions()) {
      out.push_back(entry_of(dag, sources, dag.asset(def.name), &def, with_schema));
    }
    return out;
  }
  for (const Asset* asset : dag.order()) {
    out.push_back(entry_of(dag, sources, *asset, nullptr, with_schema));
  }
  return out;
}

std::string catalog_json(const std::vector<CatalogEntry>& entries) {
  json out = json::array();
  for (const CatalogEntry& entry : entries) out.push_back(entry_json(entry));
  // Invalid UTF-8 in the file (names, commands) is replaced rather than fatal.
  return out.dump(2, ' ', false, json::error_handler_t::replace);
}

std::string catalog_text(const std::vector<CatalogEntry>& entries) {
  std::string out;
  std::unordered_set<std::string_view> sources_shown;
  for (const CatalogEntry& entry : entries) {
    const AssetDefinition* def = entry.definition;
    if (!entry.source_description.empty() && sources_shown.insert(entry.source).second) {
      out += indented(fmt::format("source {}: ", entry.source), entry.source_description);
    }
    out += fmt::format("{}  {}  {}, {}{}\n", entry.name, entry.source,
                       partitioning_text(entry.partitioning), def != nullptr ? def->body : "code",
                       entry.enabled ? "" : ", disabled");
    if (!entry.description.empty()) out += indented("  description ", entry.description);
    if (!entry.deps.empty()) out += fmt::format("  after {}\n", deps_text(entry));
    out += fmt::format("  destination {}\n", entry.destination.value_or("(none)"));
    if (!entry.schema_read) continue;
    if (!entry.schema) {
      out += "  not written yet\n";
      continue;
    }
    std::size_t width = 0;
    for (const Field& f : entry.schema->fields()) width = std::max(width, f.name.size());
    for (const Field& f : entry.schema->fields()) {
      const bool retired = std::find(entry.retired_columns.begin(), entry.retired_columns.end(),
                                     f.name) != entry.retired_columns.end();
      std::string line = fmt::format("    {:<{}}  {}", f.name, width, type_text(f));
      if (retired) line += "  (retired: the latest write did not produce it)";
      out += line + "\n";
    }
  }
  return out;
}

std::string Pipeline::catalog(bool with_schema) const {
  return catalog_json(interloper::catalog(dag(), this, with_schema));
}

}  // namespace interloper
