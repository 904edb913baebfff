// Pipeline: a loaded pipeline file, what it declares and the DAG built from it.
#include "interloper/pipeline.hpp"

#include <nlohmann/json.hpp>

#include "interloper/data.hpp"
#include "interloper/pipeline/loader.hpp"

namespace interloper {

using pipeline::Loader;

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
  auto it = state_->definition_index.find(asset);
  return it == state_->definition_index.end() ? nullptr : &state_->definitions[it->second];
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
