// The query string of a destination URL ("a=1&b=2"), shared by every scheme's parser.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interloper/error.hpp"

namespace interloper {

// The `key=value` items of `query`, in order, values as written (not decoded); empty items are
// skipped. Throws DestinationError naming `url` and an item without '='.
inline std::vector<std::pair<std::string, std::string>> query_parameters(std::string_view url,
                                                                         std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!query.empty()) {
    std::string_view item = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), item.size() + 1));
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw DestinationError(
          fmt::format("destination URL '{}': parameter '{}' has no value", url, item));
    }
    out.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return out;
}

}  // namespace interloper
