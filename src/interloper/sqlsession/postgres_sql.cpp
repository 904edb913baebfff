#include "interloper/sqlsession/postgres_sql.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "interloper/sql/lexer.hpp"

namespace interloper::detail::pg {

namespace {

bool identifier_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool identifier_char(char c) {
  return identifier_start(c) || std::isdigit(static_cast<unsigned char>(c));
}

// The index just past the quoted text starting at `i` (sql[i] is the quote). Doubled quotes
// stay inside; with `backslashes` (E'...') a backslash escapes the next character.
std::size_t skip_quoted(std::string_view sql, std::size_t i, bool backslashes) {
  const char quote = sql[i];
  for (++i; i < sql.size(); ++i) {
    if (backslashes && sql[i] == '\\') {
      ++i;
    } else if (sql[i] == quote) {
      if (i + 1 < sql.size() && sql[i + 1] == quote) {
        ++i;
      } else {
        return i + 1;
      }
    }
  }
  return sql.size();
}

// Past a comment starting at `i`, or `i` when none starts there. Block comments nest.
std::size_t skip_comment(std::string_view sql, std::size_t i) {
  if (sql.substr(i, 2) == "--") {
    std::size_t end = sql.find('\n', i);
    return end == std::string_view::npos ? sql.size() : end + 1;
  }
  if (sql.substr(i, 2) != "/*") return i;
  int depth = 0;
  while (i < sql.size()) {
    if (sql.substr(i, 2) == "/*") {
      ++depth;
      i += 2;
    } else if (sql.substr(i, 2) == "*/") {
      i += 2;
      if (--depth == 0) return i;
    } else {
      ++i;
    }
  }
  return sql.size();
}

using sql::skip_dollar_quoted;

}  // namespace

NumberedQuery number_parameters(std::string_view sql) {
  NumberedQuery out;
  out.sql.reserve(sql.size());
  std::size_t i = 0;
  auto copy_to = [&](std::size_t end) {
    out.sql.append(sql.substr(i, end - i));
    i = end;
  };
  while (i < sql.size()) {
    char c = sql[i];
    bool escape_string = (c == 'E' || c == 'e') && i + 1 < sql.size() && sql[i + 1] == '\'' &&
                         (i == 0 || !identifier_char(sql[i - 1]));
    if (escape_string) {
      out.sql += c;
      ++i;
      copy_to(skip_quoted(sql, i, true));
    } else if (c == '\'' || c == '"') {
      copy_to(skip_quoted(sql, i, false));
    } else if (std::size_t after = skip_comment(sql, i); after != i) {
      copy_to(after);
    } else if (c == '$' && (i == 0 || !identifier_char(sql[i - 1])) &&
               skip_dollar_quoted(sql, i) != i) {
      copy_to(skip_dollar_quoted(sql, i));
    } else if (c == ':' && i + 1 < sql.size() && sql[i + 1] == ':') {
      copy_to(i + 2);
    } else if (c == ':' && i + 1 < sql.size() && identifier_start(sql[i + 1])) {
      std::size_t end = i + 1;
      while (end < sql.size() && identifier_char(sql[end])) ++end;
      std::string name(sql.substr(i + 1, end - i - 1));
      auto at = std::find(out.names.begin(), out.names.end(), name);
      if (at == out.names.end()) at = out.names.insert(out.names.end(), name);
      out.sql += fmt::format("${}", at - out.names.begin() + 1);
      i = end;
    } else {
      out.sql += c;
      ++i;
    }
  }
  return out;
}

void bind_value(postgres::Params& params, const Value& value) {
  switch (value.type()) {
    case DataType::null:
      params.null();
      return;
    case DataType::boolean:
      params.text(value.as_bool() ? "true" : "false", postgres::oid::boolean);
      return;
    case DataType::int64:
      params.text(value.to_string(), postgres::oid::int8);
      return;
    case DataType::float64:
      params.text(value.to_string(), postgres::oid::float8);
      return;
    case DataType::string:
      params.text(value.as_string());
      return;
    case DataType::date:
      params.text(value.to_string(), postgres::oid::date);
      return;
    case DataType::timestamp:
      params.text(value.to_string(), postgres::oid::timestamp);
      return;
    case DataType::decimal:
      params.text(value.to_string(), postgres::oid::numeric);
      return;
    case DataType::json:
      params.text(value.as_json().text, postgres::oid::jsonb);
      return;
  }
}

DataType result_type(Oid type) {
  switch (type) {
    case postgres::oid::boolean:
      return DataType::boolean;
    case postgres::oid::int2:
    case postgres::oid::int4:
    case postgres::oid::int8:
      return DataType::int64;
    case postgres::oid::float4:
    case postgres::oid::float8:
      return DataType::float64;
    case postgres::oid::numeric:  // exact: never through a double
      return DataType::decimal;
    case postgres::oid::json:
    case postgres::oid::jsonb:
      return DataType::json;
    case postgres::oid::date:
      return DataType::date;
    case postgres::oid::timestamp:
    case postgres::oid::timestamptz:
      return DataType::timestamp;
    default:
      return DataType::string;
  }
}

Value text_value(std::string_view text, Oid type) {
  const std::string s(text);
  switch (result_type(type)) {
    case DataType::boolean:
      return Value(s == "t" || s == "true");
    case DataType::int64:
      return Value(static_cast<long long>(std::strtoll(s.c_str(), nullptr, 10)));
    case DataType::float64:
      return Value(std::strtod(s.c_str(), nullptr));
    case DataType::date:
      if (auto d = parse_date(s)) return Value(*d);
      break;
    case DataType::timestamp:
      // "YYYY-MM-DD HH:MM:SS[.ffffff][+00]" in the session's zone (UTC), to the microsecond.
      if (auto t = parse_timestamp(s)) return Value(*t);
      break;
    case DataType::decimal:
      if (auto d = Decimal::parse(s)) return Value(*d);
      throw DataError("numeric " + s + " is not a decimal of at most 38 digits");
    case DataType::json:
      return Value(parse_json(s));
    default:
      return Value(s);
  }
  return Value(s);  // infinity and years beyond 9999 stay readable as text
}

}  // namespace interloper::detail::pg
