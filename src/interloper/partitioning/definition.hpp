// Internal: JSON helpers shared by the built-in kinds' to_definition / from_definition.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "interloper/partitioning.hpp"

namespace interloper::detail {

// Parses a definition and checks it is an object of kind `kind` holding exactly `fields`
// (besides "kind"). Throws PartitionError naming the text otherwise.
nlohmann::ordered_json parse_definition(std::string_view json, std::string_view kind,
                                        std::initializer_list<std::string_view> fields);

// "…" of the definition for error messages, shortened when long.
std::string quote_definition(std::string_view json);

std::unique_ptr<PartitionConfig> time_config_from_definition(std::string_view json);
std::unique_ptr<PartitionConfig> list_config_from_definition(std::string_view json);

}  // namespace interloper::detail
