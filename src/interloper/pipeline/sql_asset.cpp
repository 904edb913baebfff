// `sql:` assets: the dependency CTEs, the named parameters a statement uses, and the query run
// in the destination database.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "interloper/asset.hpp"
#include "interloper/data.hpp"
#include "interloper/error.hpp"
#include "interloper/pipeline/assets.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sql/lexer.hpp"

namespace interloper::pipeline {

namespace {

using sql::quote_identifier;

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// The position after an SQL comment starting at `i` ("-- ..." to the end of the line or
// "/* ... */"), or `i` itself when no comment starts there.
std::size_t skip_comment(std::string_view sql, std::size_t i) {
  if (sql.substr(i, 2) == "--") {
    std::size_t nl = sql.find('\n', i);
    return nl == std::string_view::npos ? sql.size() : nl + 1;
  }
  if (sql.substr(i, 2) == "/*") {
    std::size_t end = sql.find("*/", i + 2);
    return end == std::string_view::npos ? sql.size() : end + 2;
  }
  return i;
}

// Walks `sql` outside string literals (with `postgresql`, its E'...' and dollar-quoted $$...$$
// and $tag$...$tag$ too), quoted identifiers and comments, calling `code(i)` at each position
// of plain SQL text; `code` returns the next position to look at (i + 1 to go on), or npos to
// stop. `quoted(begin, end)` sees each double-quoted identifier.
template <typename F, typename Q>
void scan_code(std::string_view sql, bool postgresql, F&& code, Q&& quoted) {
  std::size_t i = 0;
  auto skip_quoted = [&](char quote, bool backslashes = false) {
    for (++i; i < sql.size(); ++i) {
      if (backslashes && sql[i] == '\\') {
        ++i;
      } else if (sql[i] == quote) {
        if (i + 1 < sql.size() && sql[i + 1] == quote) {
          ++i;
        } else {
          ++i;
          return;
        }
      }
    }
  };
  while (i < sql.size()) {
    char c = sql[i];
    // PostgreSQL's strings start where no name goes on: x$y$ and xe'...' are none.
    const bool string_start = postgresql && !(i > 0 && sql::is_identifier_byte(sql[i - 1]));
    if (c == '"') {
      const std::size_t begin = i;
      skip_quoted(c);
      quoted(begin, i);
    } else if (c == '\'' || c == '`') {
      skip_quoted(c);
    } else if ((c == 'E' || c == 'e') && string_start && i + 1 < sql.size() && sql[i + 1] == '\'') {
      ++i;
      skip_quoted('\'', true);
    } else if (c == '$' && string_start && sql::skip_dollar_quoted(sql, i) != i) {
      i = sql::skip_dollar_quoted(sql, i);
    } else if (c == '[') {
      std::size_t end = sql.find(']', i);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (std::size_t after = skip_comment(sql, i); after != i) {
      i = after;
    } else {
      i = code(i);
      if (i == std::string_view::npos) return;
    }
  }
}

template <typename F>
void scan_code(std::string_view sql, bool postgresql, F&& code) {
  scan_code(sql, postgresql, std::forward<F>(code), [](std::size_t, std::size_t) {});
}

// The named parameters (":name") the statement uses, skipping string literals, quoted
// identifiers and comments, so that only parameters SQLite will see get bound.
std::vector<std::string> scan_named_parameters(std::string_view sql) {
  std::vector<std::string> names;
  scan_code(sql, true, [&](std::size_t i) {
    if (sql[i] == ':' && i + 1 < sql.size() && sql[i + 1] == ':') {
      return i + 2;  // a PostgreSQL cast (x::date), not a parameter
    }
    if (sql[i] == ':' && i + 1 < sql.size() && is_identifier_char(sql[i + 1])) {
      std::size_t end = i + 1;
      while (end < sql.size() && is_identifier_char(sql[end])) ++end;
      names.emplace_back(sql.substr(i + 1, end - i - 1));
      return end;
    }
    return i + 1;
  });
  return names;
}

// Position after leading whitespace and comments.
std::size_t skip_blank(std::string_view sql, std::size_t i) {
  while (i < sql.size()) {
    if (std::isspace(static_cast<unsigned char>(sql[i])) != 0) {
      ++i;
    } else if (std::size_t after = skip_comment(sql, i); after != i) {
      i = after;
    } else {
      break;
    }
  }
  return i;
}

// Whether the keyword `word` (case-insensitive) starts at `i`; returns the position after it.
std::optional<std::size_t> keyword_at(std::string_view sql, std::size_t i, std::string_view word) {
  if (sql.size() - i < word.size()) return std::nullopt;
  for (std::size_t k = 0; k < word.size(); ++k) {
    if (std::toupper(static_cast<unsigned char>(sql[i + k])) != word[k]) return std::nullopt;
  }
  std::size_t after = i + word.size();
  if (after < sql.size() && is_identifier_char(sql[after])) return std::nullopt;
  return after;
}

}  // namespace

std::vector<std::string> named_parameters(std::string_view sql) {
  return scan_named_parameters(sql);
}

std::size_t second_statement(std::string_view sql, bool postgresql) {
  std::size_t found = std::string_view::npos;
  scan_code(sql, postgresql, [&](std::size_t i) {
    if (sql[i] != ';') return i + 1;
    std::size_t next = skip_blank(sql, i + 1);
    while (next < sql.size() && sql[next] == ';') next = skip_blank(sql, next + 1);
    if (next < sql.size()) {
      found = next;
      return std::string_view::npos;
    }
    return next;
  });
  return found;
}

std::string first_keyword(std::string_view sql) {
  std::string word;
  for (std::size_t i = skip_blank(sql, 0); i < sql.size(); ++i) {
    const auto c = static_cast<unsigned char>(sql[i]);
    if (!std::isalnum(c) && c != '_') break;
    word += static_cast<char>(std::toupper(c));
  }
  return word;
}

std::string sql_with_dependencies(const std::string& sql,
                                  const std::vector<std::pair<std::string, std::string>>& ctes_of) {
  if (ctes_of.empty()) return sql;
  std::string ctes;
  for (const auto& [name, body] : ctes_of) {
    if (!ctes.empty()) ctes += ", ";
    ctes += quote_identifier(name) + " AS (" + body + ")";
  }
  std::string_view text(sql);
  std::size_t start = skip_blank(text, 0);
  if (auto after_with = keyword_at(text, start, "WITH")) {
    std::size_t rest = skip_blank(text, *after_with);
    std::string head = "WITH ";
    if (auto after_recursive = keyword_at(text, rest, "RECURSIVE")) {
      head += "RECURSIVE ";
      rest = skip_blank(text, *after_recursive);
    }
    return head + ctes + ", " + std::string(text.substr(rest));
  }
  return "WITH " + ctes + " " + sql;
}

namespace {

// Fails naming the dependency when the database holds no table for it: it was never written
// (what the runner says of an upstream not materialized), or written without a single column
// (an empty result of an asset that declares no schema), so a query could only fail on a
// table name the user never wrote. Returns whether no row was ever written to it (its partition
// column has no type yet): its table then has only the columns it declares.
bool check_readable(Destination& destination, const std::string& asset, const DatasetRef& dep) {
  const std::optional<Schema> stored = destination.schema(dep);
  if (!stored) {
    throw RunError(fmt::format("asset '{}': upstream '{}': not materialized", asset, dep.asset));
  }
  if (stored->empty()) {
    throw RunError(fmt::format(
        "asset '{}': upstream '{}' was materialized without any column (its result had no rows "
        "and it declares no schema), so there is no table to read; declare its columns with "
        "'schema:' so that an empty result still leaves one",
        asset, dep.asset));
  }
  if (dep.partitioning == nullptr) return false;
  const std::optional<std::size_t> column = stored->find(dep.partitioning->column());
  return column && stored->field(*column).type == DataType::null;
}

// What a query reading its own earlier partitions sees before the first one is written: an
// empty table of the asset's own columns. Fails when it declares none beyond the partition's.
std::string no_earlier_rows(const std::string& asset, const std::vector<std::string>& columns) {
  if (columns.size() < 2) {
    throw RunError(fmt::format(
        "asset '{}' reads its own earlier partitions and none is written yet: declare its "
        "columns with 'schema:' so that its first partition reads an empty table",
        asset));
  }
  std::string select;
  for (const std::string& column : columns) {
    select += (select.empty() ? "SELECT NULL AS " : ", NULL AS ") + quote_identifier(column);
  }
  return select + " WHERE 1 = 0";
}

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

// `sql` with each name of `renames` (a pair: the name, what it becomes) written as its quoted
// new name wherever the query names it: bare (in any case, as SQL reads a bare name) or in
// double quotes (exactly). String literals (with `postgresql`, its dollar-quoted and E'...'
// strings too), comments, parameters (:name) and qualified names
// (x.name) are left alone.
std::string rename_identifiers(std::string_view sql, bool postgresql,
                               const std::vector<std::pair<std::string, std::string>>& renames) {
  if (renames.empty()) return std::string(sql);
  std::vector<std::pair<std::pair<std::size_t, std::size_t>, std::string>> edits;
  auto rename = [&](std::size_t begin, std::size_t end, std::string_view name, bool bare) {
    if (begin > 0 && (sql[begin - 1] == '.' || sql[begin - 1] == ':')) return;
    for (const auto& [from, to] : renames) {
      if (bare ? same_ignoring_case(name, from) : name == from) {
        edits.push_back({{begin, end}, quote_identifier(to)});
        return;
      }
    }
  };
  auto bare = [&](std::size_t i) {
    if (!is_identifier_char(sql[i])) return i + 1;
    std::size_t end = i;
    while (end < sql.size() && is_identifier_char(sql[end])) ++end;
    rename(i, end, sql.substr(i, end - i), true);
    return end;
  };
  auto quoted = [&](std::size_t begin, std::size_t end) {
    std::string name;  // between the quotes, each doubled quote read as one
    for (std::size_t k = begin + 1; k + 1 < end; ++k) {
      name += sql[k];
      if (sql[k] == '"') ++k;
    }
    rename(begin, end, name, false);
  };
  scan_code(sql, postgresql, bare, quoted);
  std::string out;
  std::size_t at = 0;
  for (const auto& [span, text] : edits) {
    out.append(sql.substr(at, span.first - at)).append(text);
    at = span.second;
  }
  return out.append(sql.substr(at));
}

// Gives each CTE whose name PostgreSQL would cut (longer than 63 bytes) its short form (a
// prefix and the fingerprint of the whole name), so that NAME and NAME__all never become one
// name; returns what was renamed, for the query that names them in full.
std::vector<std::pair<std::string, std::string>> shorten_long_names(
    std::vector<std::pair<std::string, std::string>>& ctes) {
  std::vector<std::pair<std::string, std::string>> renames;
  for (auto& cte : ctes) {
    std::string short_form =
        sql::short_identifier(cte.first, [](std::string_view name) { return fingerprint(name); });
    if (short_form == cte.first) continue;
    renames.emplace_back(cte.first, short_form);
    cte.first = std::move(short_form);
  }
  return renames;
}

// The two CTEs of one dependency: NAME holds what load(NAME) returns (its partitions that
// overlap the run's window, or everything when it is read whole), NAME__all every row it has.
// Returns the dataset both read: the one table the query may read for this dependency.
DatasetRef dependency_ctes(const QueryableDestination& database, const ExecutionContext& context,
                           const DatasetRef& dep, std::size_t index,
                           std::vector<std::pair<std::string, std::string>>& ctes,
                           std::vector<std::pair<std::string, Value>>& params) {
  ExecutionContext::UpstreamReads reads{dep, true, nullptr};
  try {
    reads = context.reads_of(dep.asset);
  } catch (const RunError&) {
    // Outside a DAG run (Asset::run) nothing says which partitions: read the table whole.
  }
  const std::string whole = database.relation_of(reads.dataset, nullptr, "").sql;
  std::string scoped = whole;
  if (!reads.whole) {
    if (reads.window == nullptr) {
      scoped = whole + " WHERE 1 = 0";  // the run lies before the upstream's start
    } else {
      QueryableDestination::Relation relation =
          database.relation_of(reads.dataset, reads.window.get(), fmt::format("il_dep{}_", index));
      scoped = std::move(relation.sql);
      for (auto& param : relation.params) params.push_back(std::move(param));
    }
  }
  ctes.emplace_back(dep.asset, std::move(scoped));
  ctes.emplace_back(dep.asset + "__all", whole);
  return reads.dataset;
}

// `message` with each dependency's table named as the query names it: "shop__events" becomes
// "events" (where it is a whole name, not part of a longer one).
std::string in_dependency_names(std::string message, const QueryableDestination& database,
                                const std::vector<DatasetRef>& deps) {
  for (const DatasetRef& dep : deps) {
    const std::string table = database.table_name_of(dep);
    for (std::size_t at = message.find(table); at != std::string::npos;
         at = message.find(table, at)) {
      const std::size_t after = at + table.size();
      const bool whole = (at == 0 || !is_identifier_char(message[at - 1])) &&
                         (after == message.size() || !is_identifier_char(message[after]));
      if (whole) message.replace(at, table.size(), dep.asset);
      at += whole ? dep.asset.size() : 1;
    }
  }
  return message;
}

// A failed query's error followed by the query as its author wrote it (line breaks kept), not
// the statement sent, which has the dependencies' tables in front of it. `rowless` names the
// dependencies that never had a row: a column the query reads may be missing there.
DestinationError query_failure(const std::string& error, std::string_view sql,
                               const std::vector<std::string>& rowless) {
  std::string hint;
  for (const std::string& dep : rowless) {
    hint += fmt::format(
        "\nupstream '{}' has had no rows yet, so its table holds only its partition column and "
        "the columns its 'schema:' declares; declare there the columns this query reads",
        dep);
  }
  const std::size_t end = sql.find_last_not_of(" \t\r\n");
  return DestinationError(fmt::format("{}{}\nquery:\n{}", error, hint, sql.substr(0, end + 1)));
}

// Binds the run's scope (":window_start", ":bounds_end"...) for each one `text` uses.
void bind_scope(const ExecutionContext& context, const std::string& text,
                std::vector<std::pair<std::string, Value>>& params) {
  Scope scope = Scope::of(context);
  auto text_or_null = [](const std::optional<std::string>& v) { return v ? Value(*v) : Value(); };
  auto instant_or_null = [](const std::optional<TimePoint>& t) {
    // Typed, so that a database compares them with date and timestamp columns as times;
    // their text is instant_text's (a midnight as the bare date).
    if (!t) return Value();
    if (t->is_midnight()) {
      return Value(Value::Date(std::chrono::floor<std::chrono::days>(t->seconds())));
    }
    return Value(Value::Timestamp(t->seconds()));
  };
  std::vector<std::pair<std::string, Value>> candidates = {
      {"window_start", scope.has_window ? Value(scope.start_key) : Value()},
      {"window_end", scope.has_window ? Value(scope.end_key) : Value()},
      {"bounds_start", instant_or_null(scope.bounds_start)},
      {"bounds_end", instant_or_null(scope.bounds_end)},
      {"partition_key", text_or_null(scope.partition_key)},
      {"asset", Value(scope.asset)},
  };
  std::vector<std::string> used = named_parameters(text);
  for (auto& [name, value] : candidates) {
    if (std::find(used.begin(), used.end(), name) != used.end()) {
      params.emplace_back(":" + name, std::move(value));
    }
  }
}

}  // namespace

ComputeFn sql_compute(SqlAsset asset) {
  return [asset = std::move(asset)](ExecutionContext& context) -> Table {
    QueryableDestination* database = asset.destination->queryable();
    if (database == nullptr) {
      throw RunError(fmt::format("sql assets need a destination that runs SQL queries, not {}",
                                 asset.destination->url()));
    }
    std::vector<std::pair<std::string, std::string>> ctes;
    std::vector<std::pair<std::string, Value>> params;
    // The query reads exactly the tables its dependency CTEs read, nothing else.
    QueryScope readable{
        .asset = context.asset_name(), .datasets = {}, .timeout_seconds = asset.timeout_seconds};
    std::vector<std::string> rowless;
    for (std::size_t i = 0; i < asset.deps.size(); ++i) {
      if (asset.deps[i].asset == context.asset_name() &&
          !asset.destination->schema(asset.deps[i])) {
        const std::string empty = no_earlier_rows(context.asset_name(), asset.own_columns);
        ctes.emplace_back(asset.deps[i].asset, empty);
        ctes.emplace_back(asset.deps[i].asset + "__all", empty);
        continue;
      }
      readable.datasets.push_back(
          dependency_ctes(*database, context, asset.deps[i], i, ctes, params));
      if (check_readable(*asset.destination, readable.asset, readable.datasets.back())) {
        rowless.push_back(asset.deps[i].asset);
      }
    }
    const auto renames = shorten_long_names(ctes);
    // postgresql:// and postgres:// (whose strings include $$...$$ and E'...').
    const bool postgresql = asset.destination->url().rfind("postgres", 0) == 0;
    std::string text =
        sql_with_dependencies(rename_identifiers(asset.sql, postgresql, renames), ctes);
    bind_scope(context, text, params);
    try {
      return database->query(text, params, readable);
    } catch (const DestinationError& e) {
      throw query_failure(in_dependency_names(e.what(), *database, readable.datasets), asset.sql,
                          rowless);
    }
  };
}

}  // namespace interloper::pipeline
