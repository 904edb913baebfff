// Pieces of SQL's lexical grammar that more than one reader of query text needs: where a
// dollar-quoted string ends. `sql:` assets check their statement with it, and the PostgreSQL
// destination numbers parameters outside such strings.
//
//   sql::skip_dollar_quoted("$f$ a; b $f$ x", 0)  // 11: just past the closing $f$
#pragma once

#include <cctype>
#include <cstddef>
#include <string_view>

namespace interloper::sql {

// Whether `c` may continue an unquoted identifier (letters, digits, '_', and every byte of a
// multi-byte UTF-8 character, as PostgreSQL reads them).
inline bool is_identifier_byte(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Past a dollar-quoted string starting at `i` ($$...$$ or $tag$...$tag$, the tag an identifier
// that does not start with a digit), or `i` itself when the '$' there starts something else
// ($1, a parameter, part of a name). An unterminated string runs to the end of `sql`. The
// caller checks that the '$' does not continue an identifier (a$b$).
inline std::size_t skip_dollar_quoted(std::string_view sql, std::size_t i) {
  std::size_t end = i + 1;
  while (end < sql.size() && is_identifier_byte(sql[end])) ++end;
  if (end >= sql.size() || sql[end] != '$') return i;
  if (end > i + 1 && std::isdigit(static_cast<unsigned char>(sql[i + 1])) != 0) return i;
  const std::string_view tag = sql.substr(i, end - i + 1);
  const std::size_t close = sql.find(tag, end + 1);
  return close == std::string_view::npos ? sql.size() : close + tag.size();
}

}  // namespace interloper::sql
