// SQL identifiers, quoted the way SQLite and PostgreSQL both read them: the one definition used
// by filters, the SQLite and PostgreSQL destinations, the stores and `sql:` assets.
//
//   "SELECT * FROM " + sql::quote_identifier("my \"table\"")  // SELECT * FROM "my ""table"""
#pragma once

#include <cstddef>
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

// PostgreSQL keeps the first 63 bytes of a name and drops the rest in silence.
inline constexpr std::size_t kMaxIdentifier = 63;

// `name` itself when it fits in kMaxIdentifier bytes; otherwise a readable prefix (whole UTF-8
// characters) and, after '~', `hash(name)` (the fingerprint of the whole name), kMaxIdentifier
// bytes in all: the same on every run, and different for two names sharing their first bytes.
template <typename Hash>
std::string short_identifier(std::string_view name, Hash&& hash) {
  if (name.size() <= kMaxIdentifier) return std::string(name);
  const std::string tail = hash(name);
  std::size_t cut = kMaxIdentifier - tail.size() - 1;
  // Never end inside a UTF-8 character: back up over its continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
  return std::string(name.substr(0, cut)) + "~" + tail;
}

}  // namespace interloper::sql
