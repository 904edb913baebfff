#include "interloper/sqlsession/sqlite_guard.hpp"

#include <fmt/format.h>

#include <cctype>
#include <optional>

namespace interloper::detail {

namespace {

std::string text_or_empty(const char* s) { return s ? s : ""; }

// What an authorizer action would do, in words, for the error message.
std::string describe(int action, const char* a, const char* b) {
  const std::string x = text_or_empty(a), y = text_or_empty(b);
  switch (action) {
    case SQLITE_TRANSACTION:
      return fmt::format("transaction control ({})", x);
    case SQLITE_SAVEPOINT:
      return fmt::format("a savepoint ({} {})", x, y);
    case SQLITE_ATTACH:
      return fmt::format("ATTACH of '{}'", x);
    case SQLITE_DETACH:
      return fmt::format("DETACH of '{}'", x);
    case SQLITE_PRAGMA:
      return y.empty() ? fmt::format("PRAGMA {}", x) : fmt::format("PRAGMA {}={}", x, y);
    case SQLITE_READ:
      return fmt::format("reading table '{}', which is not a declared dependency", x);
    case SQLITE_FUNCTION:
      return fmt::format("the function {}()", y);
    case SQLITE_INSERT:
      return fmt::format("writing (INSERT into '{}')", x);
    case SQLITE_UPDATE:
      return fmt::format("writing (UPDATE of '{}')", x);
    case SQLITE_DELETE:
      return fmt::format("writing (DELETE from '{}')", x);
    case SQLITE_ALTER_TABLE:
      return fmt::format("a schema change (ALTER TABLE '{}')", y);
    case SQLITE_ANALYZE:
      return "ANALYZE";
    case SQLITE_REINDEX:
      return "REINDEX";
    default:
      break;
  }
  // Every CREATE_* and DROP_* action names its object first.
  return x.empty() ? fmt::format("a statement that writes (action {})", action)
                   : fmt::format("a schema change (of '{}')", x);
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Whether a read of `name` is of a table the query makes itself (a recursive CTE, which SQLite
// reports as a table read): no table, view or virtual table module of the database has that
// name (SQLite matches names without regard to ASCII case).
bool query_own(const QueryGuard::Rules& rules, const std::string& name) {
  const std::string key = lower(name);
  return rules.stored.count(key) == 0 && key.rfind("pragma_", 0) != 0 &&
         key.rfind("sqlite_", 0) != 0;
}

// The names, lower-cased, a query could read stored data through: every table and view of the
// database and every virtual table module (eponymous ones are read by their module's name).
std::unordered_set<std::string> stored_names(sqlite::Database& db) {
  std::unordered_set<std::string> names;
  sqlite::Statement stmt(db,
                         "SELECT name FROM sqlite_schema UNION ALL SELECT name FROM "
                         "sqlite_temp_schema UNION ALL SELECT name FROM pragma_module_list");
  while (stmt.step()) names.insert(lower(stmt.column_text(0)));
  return names;
}

int authorize(void* data, int action, const char* a, const char* b, const char*, const char*) {
  auto* guard = static_cast<QueryGuard::Rules*>(data);
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_READ: {
      const std::string table = text_or_empty(a);
      // The JSON table-valued functions are eponymous virtual tables.
      if (!guard->readable || guard->readable->count(table) != 0 || table == "json_each" ||
          table == "json_tree" || query_own(*guard, table)) {
        return SQLITE_OK;
      }
      break;
    }
    case SQLITE_FUNCTION: {
      const std::string name = text_or_empty(b);
      if (name != "load_extension" && name != "fts3_tokenizer") return SQLITE_OK;
      break;
    }
    default:
      break;
  }
  if (!guard->denied) guard->denied = describe(action, a, b);
  return SQLITE_DENY;
}

// Position after blanks, comments and semicolons starting at `i`.
std::size_t skip_filler(std::string_view sql, std::size_t i) {
  while (i < sql.size()) {
    const char c = sql[i];
    if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == ';') {
      ++i;
    } else if (sql.substr(i, 2) == "--") {
      const std::size_t nl = sql.find('\n', i);
      i = nl == std::string_view::npos ? sql.size() : nl + 1;
    } else if (sql.substr(i, 2) == "/*") {
      const std::size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else {
      break;
    }
  }
  return i;
}

std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out(text.substr(0, kMax));
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text.size() > kMax ? out + "..." : out;
}

}  // namespace

std::size_t trailing_text(std::string_view sql, std::size_t first_end) {
  const std::size_t i = skip_filler(sql, first_end);
  return i < sql.size() ? i : std::string_view::npos;
}

QueryGuard::QueryGuard(sqlite::Database& db) : db_(db) {
  sqlite3_set_authorizer(db_.get(), authorize, &rules_);
}

QueryGuard::~QueryGuard() { sqlite3_set_authorizer(db_.get(), nullptr, nullptr); }

std::unique_ptr<sqlite::Statement> QueryGuard::prepare(
    std::string_view sql, std::optional<std::unordered_set<std::string>> readable,
    const std::string& asset) {
  const std::string who = asset.empty() ? "" : fmt::format("asset '{}': ", asset);
  // The guard's own look at the schema (a PRAGMA function among others) runs unguarded.
  sqlite3_set_authorizer(db_.get(), nullptr, nullptr);
  try {
    rules_.stored = stored_names(db_);
  } catch (...) {
    sqlite3_set_authorizer(db_.get(), authorize, &rules_);
    throw;
  }
  sqlite3_set_authorizer(db_.get(), authorize, &rules_);
  rules_.readable = std::move(readable);
  rules_.denied.reset();
  std::unique_ptr<sqlite::Statement> stmt;
  std::size_t used = 0;
  try {
    stmt = std::make_unique<sqlite::Statement>(db_, sql, false, &used);
  } catch (const DestinationError& e) {
    if (rules_.denied) {
      throw DestinationError(
          fmt::format("{}sqlite '{}': sql may not use {} (a query reads its "
                      "dependencies and nothing else)",
                      who, db_.path(), *rules_.denied));
    }
    if (asset.empty()) throw;
    // SQLite's own message, without the statement sent (the user's query with its dependencies).
    throw DestinationError(
        fmt::format("{}sqlite '{}': {}", who, db_.path(), sqlite3_errmsg(db_.get())));
  }
  if (stmt->get() == nullptr) throw DestinationError(who + "sql holds no statement");
  if (std::size_t more = trailing_text(sql, used); more != std::string_view::npos) {
    throw DestinationError(fmt::format("{}sql must be exactly one statement, but '{}' follows it",
                                       who, excerpt(sql.substr(more))));
  }
  if (sqlite3_stmt_readonly(stmt->get()) == 0) {
    // A scoped query's text is the user's with its dependencies in front: the caller shows it.
    throw DestinationError(fmt::format("{}sql must be a read-only query{}", who,
                                       asset.empty() ? ": " + excerpt(sql) : ""));
  }
  return stmt;
}

}  // namespace interloper::detail
