// The catalog: every asset's definition and stored schema, built once and rendered as JSON or
// text.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "interloper/data.hpp"
#include "interloper/pipeline.hpp"

namespace interloper {

namespace {

using json = nlohmann::ordered_json;

CatalogEntry entry_of(const DAG& dag, const Asset& asset, const AssetDefinition* definition,
                      bool with_schema) {
  CatalogEntry entry;
  entry.name = asset.name();
  entry.source = asset.source_name();
  entry.deps = asset.deps();
  entry.enabled = asset.enabled();
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
    out.push_back({{"name", f.name}, {"type", type_name(f.type)}});
  }
  return out;
}

json entry_json(const CatalogEntry& entry) {
  json out;
  out["name"] = entry.name;
  out["source"] = entry.source;
  out["deps"] = entry.deps;
  out["enabled"] = entry.enabled;
  const AssetDefinition* def = entry.definition;
  out["body"] = def != nullptr ? def->body : "code";
  if (def != nullptr && def->body == "command") {
    out["command"] = def->command;
    out["format"] = def->format;
    out["timeout"] = def->timeout_seconds ? json(*def->timeout_seconds) : json(nullptr);
  } else if (def != nullptr) {
    out["sql"] = def->sql;
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
  if (const auto* time = dynamic_cast<const TimePartitionConfig*>(config)) {
    return fmt::format("{} by {}", time->granularity().name(), config->column());
  }
  return fmt::format("{} by {}", config->kind(), config->column());
}

}  // namespace

std::vector<CatalogEntry> catalog(const DAG& dag, const Pipeline* pipeline, bool with_schema) {
  std::vector<CatalogEntry> out;
  if (pipeline != nullptr) {
    for (const AssetDefinition& def : pipeline->definitions()) {
      out.push_back(entry_of(dag, dag.asset(def.name), &def, with_schema));
    }
    return out;
  }
  for (const Asset* asset : dag.order()) out.push_back(entry_of(dag, *asset, nullptr, with_schema));
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
  for (const CatalogEntry& entry : entries) {
    const AssetDefinition* def = entry.definition;
    out += fmt::format("{}  {}  {}, {}{}\n", entry.name, entry.source,
                       partitioning_text(entry.partitioning), def != nullptr ? def->body : "code",
                       entry.enabled ? "" : ", disabled");
    if (!entry.deps.empty()) out += fmt::format("  after {}\n", fmt::join(entry.deps, ", "));
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
      std::string line = fmt::format("    {:<{}}  {}", f.name, width, type_name(f.type));
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
