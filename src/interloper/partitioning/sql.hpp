// Internal: SQL text shared by Filter::to_sql and the SQLite destination and store.
//
//   "SELECT * FROM " + detail::quote_identifier("my \"table\"")  // SELECT * FROM "my ""table"""
#pragma once

#include <string>
#include <string_view>

namespace interloper::detail {

// `name` as a SQL identifier: wrapped in double quotes, embedded double quotes doubled, so any
// text (keywords, spaces, quotes) names exactly itself.
std::string quote_identifier(std::string_view name);

}  // namespace interloper::detail
