// The kind registry behind PartitionConfig::from_definition.
//
// A function-local static holds the registry, seeded with the built-in kinds on first use, so
// no static-initialization order between translation units matters.
#include <map>
#include <mutex>

#include "interloper/partitioning.hpp"
#include "interloper/partitioning/definition.hpp"

namespace interloper {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, PartitionConfig::Factory, std::less<>> factories;
};

Registry& registry() {
  static Registry r{{},
                    {{"time", &detail::time_config_from_definition},
                     {"list", &detail::list_config_from_definition}}};
  return r;
}

}  // namespace

namespace detail {

std::string quote_definition(std::string_view json) {
  constexpr std::size_t kMax = 200;
  if (json.size() <= kMax) return "'" + std::string(json) + "'";
  return "'" + std::string(json.substr(0, kMax)) + "...'";
}

nlohmann::ordered_json parse_definition(std::string_view json, std::string_view kind,
                                        std::initializer_list<std::string_view> fields) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw PartitionError("malformed partition definition " + quote_definition(json) +
                         ": not a JSON object");
  }
  auto kind_it = j.find("kind");
  if (kind_it == j.end() || !kind_it->is_string() || kind_it->get<std::string>() != kind) {
    throw PartitionError("malformed partition definition " + quote_definition(json) +
                         ": expected \"kind\":\"" + std::string(kind) + "\"");
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "kind") continue;
    bool known = false;
    for (std::string_view f : fields) known = known || it.key() == f;
    if (!known) {
      throw PartitionError("malformed partition definition " + quote_definition(json) +
                           ": unknown field '" + it.key() + "'");
    }
  }
  for (std::string_view f : fields) {
    if (!j.contains(std::string(f))) {
      throw PartitionError("malformed partition definition " + quote_definition(json) +
                           ": missing field '" + std::string(f) + "'");
    }
  }
  return j;
}

}  // namespace detail

std::unique_ptr<PartitionConfig> PartitionConfig::from_definition(std::string_view json) {
  const auto j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("kind") || !j["kind"].is_string()) {
    throw PartitionError("malformed partition definition " + detail::quote_definition(json) +
                         ": expected a JSON object with a string \"kind\"");
  }
  const auto kind = j["kind"].get<std::string>();
  Factory factory;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.factories.find(kind);
    if (it == r.factories.end()) {
      std::string known;
      for (const auto& [name, f] : r.factories) known += (known.empty() ? "" : ", ") + name;
      throw PartitionError("unknown partitioning kind '" + kind + "' (registered: " + known + ")");
    }
    factory = it->second;
  }
  std::unique_ptr<PartitionConfig> config;
  try {
    config = factory(json);
  } catch (const PartitionError&) {
    throw;
  } catch (const std::exception& e) {
    throw PartitionError("malformed partition definition " + detail::quote_definition(json) + ": " +
                         e.what());
  }
  if (!config) {
    throw PartitionError("the factory of partitioning kind '" + kind + "' returned nothing");
  }
  return config;
}

void PartitionConfig::register_kind(std::string kind, Factory factory) {
  if (kind.empty()) throw std::invalid_argument("register_kind: empty partitioning kind name");
  if (!factory) {
    throw std::invalid_argument("register_kind: empty factory for kind '" + kind + "'");
  }
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.factories.insert_or_assign(std::move(kind), std::move(factory));
}

}  // namespace interloper
