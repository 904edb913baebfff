// The SQLite destination's SQL types, WHERE clauses and the Value <-> SQLite codec shared by
// writes, reads and queries (declared in sqlite_state.hpp).
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "interloper/data/format.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/sqlite_state.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {

namespace detail::sqlite_store {

Where where_of(const Filter& filter, Filter::Placeholder style, std::string_view prefix) {
  Filter::Sql sql = filter.to_sql(style, 1, prefix);
  Where where{std::move(sql.text), {}};
  where.params.reserve(sql.params.size());
  for (auto& param : sql.params) {
    if (const auto* t = std::get_if<TimePoint>(&param)) {
      where.params.push_back(bound_text(*t));
    } else {
      where.params.push_back(std::move(std::get<std::string>(param)));
    }
  }
  return where;
}

}  // namespace detail::sqlite_store

}  // namespace interloper
