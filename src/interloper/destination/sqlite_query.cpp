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

// On the session's read-only connection, under its guard (see sqlite_guard.hpp), so that
// nothing a query does reaches the connection that writes.
Table SqliteDestination::query(std::string_view sql, const Params& params,
                               const QueryScope& scope) {
  sql::GuardedQuery query;
  query.sql = sql;
  query.params.assign(params.begin(), params.end());
  if (!scope.any_dataset) {
    query.readable.emplace();
    for (const DatasetRef& dataset : scope.datasets) query.readable->push_back(table_name(dataset));
  }
  query.asset = scope.asset;
  query.timeout_seconds = scope.timeout_seconds;
  std::lock_guard lock(state_->mutex);
  std::unordered_map<std::string, Schema> schemas;
  return state_->session.guarded_query(
      query, [&](const std::string& table, const std::string& column) -> std::optional<DataType> {
        auto it = schemas.find(table);
        if (it == schemas.end()) it = schemas.emplace(table, state_->columns(table)).first;
        if (auto f = it->second.find(column)) return it->second.field(*f).type;
        return std::nullopt;
      });
}

}  // namespace interloper
