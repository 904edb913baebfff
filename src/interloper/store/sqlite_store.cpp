// SqliteStore: partition states as ranges of period ordinals (time) or keys (others), failure
// details apart.
#include "interloper/store/sqlite_store_state.hpp"

namespace interloper {

SqliteStore::SqliteStore(std::string path) : SqliteStore(std::move(path), false) {}
SqliteStore::SqliteStore(std::string path, bool read_only)
    : state_(std::make_unique<State>(std::move(path), read_only)) {}
SqliteStore::~SqliteStore() = default;

const std::string& SqliteStore::path() const { return state_->path; }

void SqliteStore::record(const DatasetRef& dataset, const PartitionWindow* window,
                         const MaterializationRecord& record) {
  std::lock_guard lock(state_->mutex);
  sqlite::Transaction transaction(state_->db);
  state_->set_last_record(dataset, record);
  const Cell cell = state_->cell_for(record);
  if (!window) {
    const std::int64_t before = state_->assign_key(dataset.source, dataset.asset, "none", "", cell);
    if (before != 0) state_->drop_unreferenced({before});
  } else if (Scope scope = scope_of(*window); scope.ranged) {
    state_->assign_range(dataset.source, dataset.asset, scope.name, scope.first, scope.last, cell);
  } else {
    std::vector<std::int64_t> before;
    for (const std::string& key : window->keys()) {
      const std::int64_t id =
          state_->assign_key(dataset.source, dataset.asset, scope.name, key, cell);
      if (id != 0 && (before.empty() || before.back() != id)) before.push_back(id);
    }
    state_->drop_unreferenced(before);
  }
  transaction.commit();
}

void SqliteStore::forget(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  sqlite::Transaction transaction(state_->db);
  std::vector<std::int64_t> failures;
  if (!window) {
    {
      Statement stmt(state_->db,
                     "SELECT failure FROM partition_ranges WHERE source = ?1 AND asset = ?2 AND "
                     "failure IS NOT NULL UNION SELECT failure FROM partition_keys WHERE "
                     "source = ?1 AND asset = ?2 AND failure IS NOT NULL");
      stmt.bind_text(1, dataset.source, false);
      stmt.bind_text(2, dataset.asset, false);
      while (stmt.step()) failures.push_back(stmt.column_int(0));
    }
    for (const char* table : {"partition_ranges", "partition_keys", "last_records"}) {
      Statement del(state_->db,
                    fmt::format("DELETE FROM {} WHERE source = ? AND asset = ?", table));
      del.bind_text(1, dataset.source, false);
      del.bind_text(2, dataset.asset, false);
      del.step();
    }
  } else if (Scope scope = scope_of(*window); scope.ranged) {
    state_->assign_range(dataset.source, dataset.asset, scope.name, scope.first, scope.last,
                         std::nullopt);
  } else {
    Statement get(state_->db,
                  "DELETE FROM partition_keys WHERE source = ? AND asset = ? AND scope = ? AND "
                  "key = ? RETURNING failure");
    for (const std::string& key : window->keys()) {
      get.reset();
      bind_dataset(get, dataset.source, dataset.asset, scope.name);
      get.bind_text(4, key, false);
      while (get.step()) {
        if (!get.column_is_null(0)) failures.push_back(get.column_int(0));
      }
    }
  }
  state_->drop_unreferenced(failures);
  transaction.commit();
}

WindowStatus SqliteStore::status(const DatasetRef& dataset, const PartitionWindow& window) {
  std::lock_guard lock(state_->mutex);
  Scope scope = scope_of(window);
  std::vector<detail::StatusSegment> segments;
  if (scope.ranged) {
    for (const Range& r :
         state_->overlapping(dataset.source, dataset.asset, scope.name, scope.first, scope.last)) {
      segments.push_back({r.first, r.last, r.cell.status, r.cell.definition});
    }
    return detail::to_window_status(segments, scope.first, window.size());
  }
  // Keyed partitions: the window's indices stand in for ordinals.
  auto stmt_lease = state_->db.cached(
      "SELECT key, status, definition FROM partition_keys WHERE source = ? AND asset = ? AND "
      "scope = ?");
  Statement& stmt = *stmt_lease;
  bind_dataset(stmt, dataset.source, dataset.asset, scope.name);
  std::unordered_map<std::string, std::pair<MaterializationStatus, std::string>> stored;
  while (stmt.step()) {
    stored[stmt.column_text(0)] = {status_from(stmt.column_text(1)), stmt.column_text(2)};
  }
  const std::vector<std::string> keys = window.keys();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto it = stored.find(keys[i]);
    if (it == stored.end()) continue;
    const auto ordinal = static_cast<std::int64_t>(i);
    segments.push_back({ordinal, ordinal, it->second.first, it->second.second});
  }
  return detail::to_window_status(segments, 0, window.size());
}

std::optional<MaterializationRecord> SqliteStore::latest(const DatasetRef& dataset,
                                                         const Partition* partition) {
  std::lock_guard lock(state_->mutex);
  std::optional<Cell> cell;
  if (!partition) {
    cell = state_->key_cell(dataset, "none", "");
  } else if (Scope scope = scope_of(*partition->as_window()); scope.ranged) {
    auto found =
        state_->overlapping(dataset.source, dataset.asset, scope.name, scope.first, scope.first);
    if (!found.empty()) cell = found.front().cell;
  } else {
    cell = state_->key_cell(dataset, scope.name, partition->key());
  }
  if (!cell) return std::nullopt;
  return state_->record_of(dataset.asset, *cell);
}

std::optional<MaterializationRecord> SqliteStore::last_record(const DatasetRef& dataset) {
  std::lock_guard lock(state_->mutex);
  if (!state_->has_last_records) return std::nullopt;
  auto stmt_lease = state_->db.cached(
      "SELECT status, rows, run_id, started, finished, error FROM last_records WHERE source = ? "
      "AND asset = ?");
  Statement& stmt = *stmt_lease;
  stmt.bind_text(1, dataset.source, false);
  stmt.bind_text(2, dataset.asset, false);
  if (!stmt.step()) return std::nullopt;
  return outcome_at(stmt, 1, dataset.asset, status_from(stmt.column_text(0)));
}

std::vector<FailedRange> SqliteStore::failures(const DatasetRef& dataset,
                                               const PartitionWindow& window, std::size_t limit) {
  std::lock_guard lock(state_->mutex);
  std::vector<FailedRange> out;
  if (limit == 0) return out;
  const Scope scope = scope_of(window);
  if (scope.ranged) {
    // The failed ranges overlapping the window, found as overlapping() finds every range.
    std::vector<std::pair<PartitionRange, std::int64_t>> found;
    {
      auto stmt_lease = state_->db.cached(
          "SELECT first, last, failure FROM partition_ranges WHERE source = ?1 AND asset = ?2 AND "
          "scope = ?3 AND first >= coalesce((SELECT max(first) FROM partition_ranges WHERE "
          "source = ?1 AND asset = ?2 AND scope = ?3 AND first <= ?4), ?4) AND first <= ?5 AND "
          "last >= ?4 AND failure IS NOT NULL ORDER BY first LIMIT ?6");
      Statement& stmt = *stmt_lease;
      bind_dataset(stmt, dataset.source, dataset.asset, scope.name);
      stmt.bind_int(4, scope.first);
      stmt.bind_int(5, scope.last);
      stmt.bind_int(6, static_cast<std::int64_t>(limit));
      while (stmt.step()) {
        const auto first =
            static_cast<std::size_t>(std::max(stmt.column_int(0), scope.first) - scope.first);
        const auto last =
            static_cast<std::size_t>(std::min(stmt.column_int(1), scope.last) - scope.first);
        found.push_back({{first, last}, stmt.column_int(2)});
      }
    }
    for (const auto& [range, id] : found) {
      if (auto record = state_->failure(id)) out.push_back({range, std::move(*record)});
    }
    return out;
  }
  // Keyed partitions: walk the window's keys, joining neighbours that share a failure.
  std::unordered_map<std::string, std::int64_t> failed;
  {
    auto stmt_lease = state_->db.cached(
        "SELECT key, failure FROM partition_keys WHERE source = ? AND asset = ? AND scope = ? "
        "AND failure IS NOT NULL");
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, dataset.source, dataset.asset, scope.name);
    while (stmt.step()) failed[stmt.column_text(0)] = stmt.column_int(1);
  }
  std::vector<std::pair<PartitionRange, std::int64_t>> found;
  const std::vector<std::string> keys = window.keys();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto it = failed.find(keys[i]);
    if (it == failed.end()) continue;
    if (!found.empty() && found.back().first.last + 1 == i && found.back().second == it->second) {
      found.back().first.last = i;
    } else if (found.size() == limit) {
      break;
    } else {
      found.push_back({{i, i}, it->second});
    }
  }
  for (const auto& [range, id] : found) {
    if (auto record = state_->failure(id)) out.push_back({range, std::move(*record)});
  }
  return out;
}

}  // namespace interloper
