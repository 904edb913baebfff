// SQL identifiers, quoted the way SQLite and PostgreSQL both read them: the one definition used
// by filters, the SQLite and PostgreSQL destinations, the stores and `sql:` assets.
//
//   "SELECT * FROM " + sql::quote_identifier("my \"table\"")  // SELECT * FROM "my ""table"""
#pragma once

#include <string>
#include <string_view>

namespace interloper::sql {

// `name` as a SQL identifier: wrapped in double quotes, embedded double quotes doubled, so any
// text (keywords, spaces, quotes) names exactly itself. Thread-safe; never throws but bad_alloc.
inline std::string quote_identifier(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 2);
  out += '"';
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace interloper::sql
