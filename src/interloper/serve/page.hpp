#pragma once

// The page of `interloper serve`: one HTML document with its CSS and JS inline (no network
// fetches but the API), which routes on its own path (/, /assets/NAME, /lineage, /runs).

#include <string_view>

namespace interloper::serve {

extern const std::string_view kPage;

}  // namespace interloper::serve
