#include "interloper/pipeline/assets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "interloper/data.hpp"
#include "interloper/error.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/pipeline/lazy_destination.hpp"
#include "interloper/pipeline/process.hpp"

namespace interloper::pipeline {

std::string instant_text(TimePoint t) { return t.is_midnight() ? t.date_string() : t.to_string(); }

Scope Scope::of(const ExecutionContext& context) {
  Scope scope;
  scope.asset = context.asset_name();
  if (!context.has_window()) return scope;
  const PartitionWindow& window = context.window();
  scope.has_window = true;
  scope.window = window.to_string();
  scope.start_key = window.partition_at(0)->key();
  scope.end_key = window.partition_at(window.size() - 1)->key();
  if (window.size() == 1) scope.partition_key = scope.start_key;
  if (const std::optional<TimePartitionWindow> time = window.as_time_window()) {
    Bounds bounds = time->bounds();
    scope.bounds_start = bounds.start;
    scope.bounds_end = bounds.end;
  } else {
    scope.values = window.keys();
  }
  return scope;
}

namespace {

constexpr std::string_view kPlaceholders[] = {"partition.key", "window.start", "window.end",
                                              "bounds.start",  "bounds.end",   "asset"};

std::string placeholder_value(std::string_view name, const Scope& scope) {
  auto need_window = [&] {
    if (!scope.has_window) {
      throw RunError(fmt::format("placeholder {{{}}} needs a window but the run has none", name));
    }
  };
  if (name == "asset") return scope.asset;
  need_window();
  if (name == "partition.key") {
    if (!scope.partition_key) {
      throw RunError(
          fmt::format("placeholder {{partition.key}} needs a single partition but the window is {}",
                      scope.window));
    }
    return *scope.partition_key;
  }
  if (name == "window.start") return scope.start_key;
  if (name == "window.end") return scope.end_key;
  if (!scope.bounds_start) {
    throw RunError(fmt::format("placeholder {{{}}} needs a time window", name));
  }
  return name == "bounds.start" ? scope.bounds_start->to_string() : scope.bounds_end->to_string();
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  out += '"';
  return out;
}

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

// The named parameters (":name") the statement uses, skipping string literals, quoted
// identifiers and comments, so that only parameters SQLite will see get bound.
std::vector<std::string> scan_named_parameters(std::string_view sql) {
  std::vector<std::string> names;
  std::size_t i = 0;
  auto skip_quoted = [&](char quote) {
    for (++i; i < sql.size(); ++i) {
      if (sql[i] == quote) {
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
    if (c == '\'' || c == '"' || c == '`') {
      skip_quoted(c);
    } else if (c == '[') {
      std::size_t end = sql.find(']', i);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (std::size_t after = skip_comment(sql, i); after != i) {
      i = after;
    } else if (c == ':' && i + 1 < sql.size() && sql[i + 1] == ':') {
      i += 2;  // a PostgreSQL cast (x::date), not a parameter
    } else if (c == ':' && i + 1 < sql.size() && is_identifier_char(sql[i + 1])) {
      std::size_t end = i + 1;
      while (end < sql.size() && is_identifier_char(sql[end])) ++end;
      names.emplace_back(sql.substr(i + 1, end - i - 1));
      i = end;
    } else {
      ++i;
    }
  }
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

bool is_placeholder(std::string_view name) {
  for (auto p : kPlaceholders) {
    if (p == name) return true;
  }
  return false;
}

namespace {

// The length of an identifier-shaped name ("asset", "window.start") at the start of `text`:
// letters, digits, '_' and '.', beginning with a letter or '_'. Zero when there is none.
std::size_t name_length(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return 0;
  }
  std::size_t n = 1;
  while (n < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[n])) || text[n] == '_' || text[n] == '.')) {
    ++n;
  }
  return n;
}

}  // namespace

// Only `{name}` is a placeholder, and not after '$' (the shell's `${HOME}`); a brace that does
// not open one is literal, so JSON and most awk programs pass through as written. "{{" and "}}"
// still stand for one brace each, as they always have.
std::string expand_placeholders(const std::string& arg, const Scope* scope) {
  std::string out;
  const std::string_view text(arg);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;  // "{{" and "}}" stand for one brace
      ++i;
      continue;
    }
    if (c != '{' || (i > 0 && text[i - 1] == '$')) {
      out += c;
      continue;
    }
    const std::size_t n = name_length(text.substr(i + 1));
    const std::size_t close = i + 1 + n;
    if (n == 0 || close >= text.size() || text[close] != '}') {
      out += c;  // not a placeholder: a literal brace
      continue;
    }
    std::string name(text.substr(i + 1, n));
    if (!is_placeholder(name)) {
      throw PipelineError(fmt::format(
          "unknown placeholder {{{}}} in argument '{}' (known: {{partition.key}}, "
          "{{window.start}}, {{window.end}}, {{bounds.start}}, {{bounds.end}}, {{asset}}; write "
          "{{{{{}}}}} for the literal text)",
          name, arg, name));
    } else if (scope != nullptr) {
      out += placeholder_value(name, *scope);
    }
    i = close;
  }
  return out;
}

ComputeFn command_compute(CommandAsset command) {
  return [command = std::move(command)](ExecutionContext& context) -> Table {
    Scope scope = Scope::of(context);
    ProcessSpec spec;
    for (const auto& arg : command.argv) spec.argv.push_back(expand_placeholders(arg, &scope));
    spec.working_directory = command.working_directory;
    spec.timeout_seconds = command.timeout_seconds;
    spec.unset_env = {"IL_PARTITION_KEY", "IL_WINDOW",     "IL_WINDOW_START",    "IL_WINDOW_END",
                      "IL_BOUNDS_START",  "IL_BOUNDS_END", "IL_PARTITION_VALUES"};
    spec.env.emplace_back("IL_ASSET", scope.asset);
    if (scope.has_window) {
      spec.env.emplace_back("IL_WINDOW", scope.window);
      spec.env.emplace_back("IL_WINDOW_START", scope.start_key);
      spec.env.emplace_back("IL_WINDOW_END", scope.end_key);
      if (scope.partition_key) spec.env.emplace_back("IL_PARTITION_KEY", *scope.partition_key);
      if (scope.bounds_start) {
        spec.env.emplace_back("IL_BOUNDS_START", scope.bounds_start->to_string());
        spec.env.emplace_back("IL_BOUNDS_END", scope.bounds_end->to_string());
      } else {
        std::string joined;
        for (const auto& v : scope.values) {
          if (!joined.empty()) joined += '\n';
          joined += v;
        }
        spec.env.emplace_back("IL_PARTITION_VALUES", joined);
      }
    }
    const Logger& logger = context.logger();
    spec.on_stderr_line = [&logger](std::string_view line) { logger.info(line); };

    ProcessResult result;
    try {
      result = run_process(spec);
    } catch (const PipelineError& e) {
      throw RunError(fmt::format("asset '{}': {}", scope.asset, e.what()));
    }
    const std::string& program = command.argv.front();
    if (result.left_processes) {
      logger.warning(fmt::format(
          "command '{}' exited but processes it started still held its output; they were "
          "killed",
          program));
    }
    if (!result.ok()) {
      std::string tail;
      for (const auto& line : result.stderr_tail) {
        tail += tail.empty() ? ": " : " | ";
        tail += line;
      }
      throw RunError(fmt::format("command '{}' {}{}", program,
                                 result.describe(command.timeout_seconds), tail));
    }
    try {
      return command.csv ? parse_csv(result.out, command.read)
                         : parse_json_lines(result.out, command.read);
    } catch (const std::exception& e) {
      throw RunError(fmt::format("command '{}' printed invalid {}: {}", program,
                                 command.csv ? "CSV" : "JSON lines", e.what()));
    }
  };
}

std::string sql_with_dependencies(const std::string& sql,
                                  const std::vector<std::pair<std::string, std::string>>& tables) {
  if (tables.empty()) return sql;
  std::string ctes;
  for (const auto& [name, table] : tables) {
    if (!ctes.empty()) ctes += ", ";
    ctes += quote_identifier(name) + " AS (SELECT * FROM " + quote_identifier(table) + ")";
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

ComputeFn sql_compute(SqlAsset asset) {
  return [asset = std::move(asset)](ExecutionContext& context) -> Table {
    QueryableDestination* database = asset.destination->queryable();
    if (database == nullptr) {
      throw RunError(fmt::format("sql assets need a destination that runs SQL queries, not {}",
                                 asset.destination->url()));
    }
    std::vector<std::pair<std::string, std::string>> tables;
    for (const auto& dep : asset.deps) tables.emplace_back(dep.asset, database->table_name_of(dep));
    std::string text = sql_with_dependencies(asset.sql, tables);

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
    std::vector<std::pair<std::string, Value>> params;
    for (auto& [name, value] : candidates) {
      if (std::find(used.begin(), used.end(), name) != used.end()) {
        params.emplace_back(":" + name, std::move(value));
      }
    }
    return database->query(text, params);
  };
}

}  // namespace interloper::pipeline
