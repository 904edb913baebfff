// The default of the scoped query: refuse, since only the destination knows how to isolate it.
#include <fmt/format.h>

#include "interloper/dataset.hpp"
#include "interloper/error.hpp"

namespace interloper {

Table QueryableDestination::query(std::string_view, const Params&, const QueryScope& scope) {
  throw DestinationError(
      fmt::format("asset '{}': this destination cannot run an isolated query", scope.asset));
}

}  // namespace interloper
