// One entry of an asset's `deps:`: a name (the overlapping partitions), or a map naming the
// asset and what it reads of it (`offset`, `window`, `all`; see mapping.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "interloper/mapping.hpp"
#include "interloper/pipeline/loader.hpp"

namespace interloper::pipeline {

void Loader::read_dependency(const yaml::Node& node, AssetSpec& spec, AssetDefinition& def) const {
  // A dependency gets one entry: a second one's mapping would be silently ignored.
  auto check_new = [&](const yaml::Node& at, const std::string& name) {
    if (std::find(def.deps.begin(), def.deps.end(), name) == def.deps.end()) return;
    fail(at, fmt::format("asset '{}': dependency '{}' is named twice in deps (one entry per "
                         "dependency; a window such as -1..0 reads several partitions)",
                         def.name, name));
  };
  spec.dep_nodes.push_back(node);
  if (!node.is_map()) {
    const std::string name = scalar(node, "a dependency");
    check_new(node, name);
    def.deps.push_back(name);
    def.mappings.emplace_back();
    return;
  }
  check_keys(node, "dependency", {"asset", "offset", "window", "all"});
  if (!node["asset"]) {
    fail(node, fmt::format("asset '{}': a dependency written as a map needs 'asset: NAME'",
                           def.name));
  }
  const std::string name = scalar(node["asset"], "a dependency");
  check_new(node["asset"], name);
  const char* given = nullptr;
  DepMapping mapping;
  for (const char* key : {"offset", "window", "all"}) {
    const yaml::Node value = node[key];
    if (!value) continue;
    if (given != nullptr) {
      fail(value, fmt::format("asset '{}': dependency '{}' gives both '{}' and '{}'; give one",
                              def.name, name, given, key));
    }
    given = key;
    const std::string text = scalar(value, key);
    try {
      if (std::string_view(key) == "all") {
        if (boolean(value, "all")) mapping = DepMapping::all();
      } else if (std::string_view(key) == "offset") {
        if (text.find("..") != std::string::npos) throw std::invalid_argument("not one number");
        mapping = DepMapping::parse_window(text);
      } else {
        mapping = DepMapping::parse_window(text);
      }
    } catch (const std::invalid_argument& e) {
      if (std::string_view(key) != "offset") {
        fail(value, fmt::format("asset '{}': dependency '{}': {}", def.name, name, e.what()));
      }
      fail(value, fmt::format("asset '{}': dependency '{}': offset '{}' is not a whole number of "
                              "partitions (like -1)",
                              def.name, name, text));
    }
  }
  def.deps.push_back(name);
  def.mappings.push_back(mapping);
}

}  // namespace interloper::pipeline
