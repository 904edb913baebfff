// SqliteDestination as a queryable destination: the relations `sql:` assets read and the
// queries they run, each on the guarded connection that allows reads of its dependencies only.
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <chrono>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "interloper/destination.hpp"
#include "interloper/destination/sqlite_state.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {

QueryableDestination::Relation SqliteDestination::relation_of(const DatasetRef& dataset,
                                                              const PartitionWindow* window,
                                                              std::string_view prefix) const {
  Relation relation{"SELECT * FROM " + quote(table_name(dataset)), {}};
  if (window == nullptr || dataset.partitioning == nullptr) return relation;
  Where where =
      where_of(window->filter(dataset.partitioning->column()), Filter::Placeholder::named, prefix);
  relation.sql += " WHERE " + where.sql;
  for (std::size_t i = 0; i < where.params.size(); ++i) {
    relation.params.emplace_back(":" + std::string(prefix) + std::to_string(i + 1),
                                 Value(std::move(where.params[i])));
  }
  return relation;
}

Table SqliteDestination::query(std::string_view sql, const Params& params) {
  return query(sql, params, QueryScope{.asset = "", .datasets = {}, .any_dataset = true});
}

namespace {

// Binds each named parameter (":name", "@name", "$name", or a bare name taken as ":name").
// `iso` holds the text of date and timestamp values until the statement has run.
void bind_params(Statement& stmt, const QueryableDestination::Params& params,
                 std::vector<std::array<char, detail::kMaxIsoChars>>& iso, const std::string& path,
                 std::string_view sql) {
  iso.resize(params.size());
  std::size_t n = 0;
  for (const auto& [name, value] : params) {
    const bool prefixed = !name.empty() && (name[0] == ':' || name[0] == '@' || name[0] == '$');
    const std::string key = prefixed ? name : ":" + name;
    const int i = sqlite3_bind_parameter_index(stmt.get(), key.c_str());
    if (i == 0) {
      throw DestinationError(
          fmt::format("sqlite '{}': query has no parameter '{}': {}", path, key, sql));
    }
    if (bind_value(stmt.get(), i, value, iso[n++].data()) != SQLITE_OK) {
      throw DestinationError(fmt::format("sqlite '{}': cannot bind parameter '{}'", path, key));
    }
  }
}

}  // namespace

std::vector<std::optional<DataType>> SqliteDestination::State::declared_types(Statement& stmt) {
  const int n = sqlite3_column_count(stmt.get());
  std::vector<std::optional<DataType>> declared(static_cast<std::size_t>(n));
  std::unordered_map<std::string, Schema> schemas;
  for (int c = 0; c < n; ++c) {
    const char* table = sqlite3_column_table_name(stmt.get(), c);
    const char* origin = sqlite3_column_origin_name(stmt.get(), c);
    if (table == nullptr || origin == nullptr) continue;
    auto it = schemas.find(table);
    if (it == schemas.end()) it = schemas.emplace(table, columns(table)).first;
    if (auto f = it->second.find(origin)) {
      declared[static_cast<std::size_t>(c)] = it->second.field(*f).type;
    }
  }
  return declared;
}

namespace {

using Clock = std::chrono::steady_clock;

// Stops the statements of a connection once a time limit has passed: SQLite asks the progress
// handler every few thousand virtual-machine steps, and a step it answers "stop" fails with
// SQLITE_INTERRUPT. The handler is removed when this goes.
class QueryDeadline {
 public:
  QueryDeadline(sqlite3* db, double seconds) : db_(db) {
    if (seconds <= 0) return;
    deadline_ = Clock::now() +
                std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    sqlite3_progress_handler(db_, 1000, &QueryDeadline::check, this);
  }
  ~QueryDeadline() {
    if (deadline_) sqlite3_progress_handler(db_, 0, nullptr, nullptr);
  }
  QueryDeadline(const QueryDeadline&) = delete;
  QueryDeadline& operator=(const QueryDeadline&) = delete;
  bool passed() const { return passed_; }

 private:
  static int check(void* self) {
    auto* deadline = static_cast<QueryDeadline*>(self);
    if (Clock::now() < *deadline->deadline_) return 0;
    deadline->passed_ = true;
    return 1;
  }
  sqlite3* db_;
  std::optional<Clock::time_point> deadline_;
  bool passed_ = false;
};

}  // namespace

Table SqliteDestination::State::read_query(Statement& stmt, const std::string& who) {
  const std::vector<std::optional<DataType>> declared = declared_types(stmt);
  std::vector<Field> fields;
  for (std::size_t c = 0; c < declared.size(); ++c) {
    fields.push_back({sqlite3_column_name(stmt.get(), static_cast<int>(c)),
                      declared[c].value_or(DataType::null)});
  }
  auto failed = [&](const DataError& e) {
    return DestinationError(fmt::format("{}sqlite '{}': query result: {}", who, path, e.what()));
  };
  Table out;
  try {
    out = Table(Schema(fields));
  } catch (const DataError& e) {
    throw failed(e);
  }
  while (stmt.step()) {
    std::vector<Value> row;
    row.reserve(fields.size());
    for (std::size_t c = 0; c < fields.size(); ++c) {
      const int i = static_cast<int>(c);
      row.push_back(declared[c] ? read_cell(stmt.get(), i, *declared[c], "query", fields[c].name)
                                : read_stored(stmt.get(), i));
    }
    try {
      out.append_row(std::move(row));
    } catch (const DataError& e) {
      throw failed(e);
    }
  }
  return out;
}

Table SqliteDestination::query(std::string_view sql, const Params& params,
                               const QueryScope& scope) {
  std::optional<std::unordered_set<std::string>> readable;
  if (!scope.any_dataset) {
    readable.emplace();
    for (const DatasetRef& dataset : scope.datasets) readable->insert(table_name(dataset));
  }
  const std::string who = scope.asset.empty() ? "" : fmt::format("asset '{}': ", scope.asset);
  std::lock_guard lock(state_->mutex);
  std::unique_ptr<Statement> prepared =
      state_->guard().prepare(sql, std::move(readable), scope.asset);
  Statement& stmt = *prepared;
  std::vector<std::array<char, detail::kMaxIsoChars>> iso;
  bind_params(stmt, params, iso, state_->path, sql);
  QueryDeadline deadline(state_->query_db->get(), scope.timeout_seconds);
  try {
    return state_->read_query(stmt, who);
  } catch (const DestinationError&) {
    if (deadline.passed()) {
      throw DestinationError(fmt::format("{}sqlite '{}': the query timed out after {}s", who,
                                         state_->path, scope.timeout_seconds));
    }
    const int code = sqlite3_errcode(state_->query_db->get());
    if (scope.asset.empty() || code == SQLITE_ROW || code == SQLITE_DONE) throw;
    // SQLite's own message, without the statement sent (the user's query with its dependencies).
    throw DestinationError(fmt::format("{}sqlite '{}': {}", who, state_->path,
                                       sqlite3_errmsg(state_->query_db->get())));
  }
}

}  // namespace interloper
