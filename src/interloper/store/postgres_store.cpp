// PostgresStore: SqliteStore's tables and range arithmetic in a PostgreSQL schema. Several
// processes on several machines share it: every change runs in one transaction holding an
// advisory lock on what it reads and rewrites (one dataset scope's ranges, or the claims).
#include "interloper/store/postgres_store_state.hpp"

namespace interloper {

PostgresStore::PostgresStore(std::string_view url) : state_(std::make_unique<State>(url)) {}
PostgresStore::~PostgresStore() = default;

std::string PostgresStore::url() const { return state_->url.redacted; }

void PostgresStore::record(const DatasetRef& dataset, const PartitionWindow* window,
                           const MaterializationRecord& record) {
  std::lock_guard lock(state_->mutex);
  postgres::Transaction tx(state_->db());
  const Scope scope = window ? scope_of(*window) : Scope{"none", false, 0, 0};
  state_->lock(state_->scope_lock(dataset, scope.name));
  state_->set_last_record(dataset, record);
  const Cell cell = state_->cell_for(record);
  if (!window) {
    const std::int64_t before = state_->assign_key(dataset.source, dataset.asset, "none", "", cell);
    if (before != 0) state_->drop_unreferenced({before});
  } else if (scope.ranged) {
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
  tx.commit();
}

void PostgresStore::forget(const DatasetRef& dataset, const PartitionWindow* window) {
  std::lock_guard lock(state_->mutex);
  postgres::Transaction tx(state_->db());
  std::vector<std::int64_t> failures;
  auto collect = [&](const Result& r) {
    for (int i = 0; i < r.rows(); ++i) {
      if (!r.is_null(i, 0)) failures.push_back(r.int_value(i, 0));
    }
  };
  if (!window) {
    // Every scope of the dataset, each under its own lock, taken in one order.
    Params p;
    p.text(dataset.source, postgres::oid::text);
    p.text(dataset.asset, postgres::oid::text);
    Result scopes = state_->db().exec(
        "SELECT scope FROM " + state_->t("partition_ranges") +
            " WHERE source = $1 AND asset = $2 UNION SELECT scope FROM " +
            state_->t("partition_keys") + " WHERE source = $1 AND asset = $2 ORDER BY 1",
        p);
    for (int i = 0; i < scopes.rows(); ++i) {
      state_->lock(state_->scope_lock(dataset, std::string(scopes.value(i, 0))));
    }
    state_->db().exec(
        "DELETE FROM " + state_->t("last_records") + " WHERE source = $1 AND asset = $2", p);
    for (const char* table : {"partition_ranges", "partition_keys"}) {
      collect(state_->db().exec(
          "DELETE FROM " + state_->t(table) + " WHERE source = $1 AND asset = $2 RETURNING failure",
          p));
    }
  } else if (Scope scope = scope_of(*window); scope.ranged) {
    state_->lock(state_->scope_lock(dataset, scope.name));
    state_->assign_range(dataset.source, dataset.asset, scope.name, scope.first, scope.last,
                         std::nullopt);
  } else {
    state_->lock(state_->scope_lock(dataset, scope.name));
    for (const std::string& key : window->keys()) {
      Params p = dataset_params(dataset.source, dataset.asset, scope.name);
      p.text(key, postgres::oid::text);
      collect(state_->db().exec("DELETE FROM " + state_->t("partition_keys") +
                                    " WHERE source = $1 AND asset = $2 AND scope = $3 AND "
                                    "key = $4 RETURNING failure",
                                p));
    }
  }
  state_->drop_unreferenced(failures);
  tx.commit();
}

WindowStatus PostgresStore::status(const DatasetRef& dataset, const PartitionWindow& window) {
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
  Result r =
      state_->db().exec("SELECT key, status, definition FROM " + state_->t("partition_keys") +
                            " WHERE source = $1 AND asset = $2 AND scope = $3",
                        dataset_params(dataset.source, dataset.asset, scope.name));
  std::unordered_map<std::string, std::pair<MaterializationStatus, std::string>> stored;
  for (int i = 0; i < r.rows(); ++i) {
    stored[std::string(r.value(i, 0))] = {status_from(r.value(i, 1)), std::string(r.value(i, 2))};
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

std::optional<MaterializationRecord> PostgresStore::latest(const DatasetRef& dataset,
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

std::optional<MaterializationRecord> PostgresStore::last_record(const DatasetRef& dataset) {
  std::lock_guard lock(state_->mutex);
  Params p;
  p.text(dataset.source, postgres::oid::text);
  p.text(dataset.asset, postgres::oid::text);
  Result r = state_->db().exec("SELECT status, rows, run_id, started, finished, error FROM " +
                                   state_->t("last_records") + " WHERE source = $1 AND asset = $2",
                               p);
  if (r.rows() == 0) return std::nullopt;
  MaterializationRecord rec;
  rec.asset = dataset.asset;
  rec.status = status_from(r.value(0, 0));
  rec.rows = r.int_value(0, 1);
  rec.run_id = std::string(r.value(0, 2));
  rec.started = TimePoint::parse(r.value(0, 3));
  rec.finished = TimePoint::parse(r.value(0, 4));
  rec.error = std::string(r.value(0, 5));
  return rec;
}

std::vector<FailedRange> PostgresStore::failures(const DatasetRef& dataset,
                                                 const PartitionWindow& window, std::size_t limit) {
  std::lock_guard lock(state_->mutex);
  std::vector<FailedRange> out;
  if (limit == 0) return out;
  const Scope scope = scope_of(window);
  std::vector<std::pair<PartitionRange, std::int64_t>> found;
  if (scope.ranged) {
    Params p = dataset_params(dataset.source, dataset.asset, scope.name);
    put_int(p, scope.first);
    put_int(p, scope.last);
    put_int(p, static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
    const std::string ranges = state_->t("partition_ranges");
    Result r = state_->db().exec(
        "SELECT first, last, failure FROM " + ranges +
            " WHERE source = $1 AND asset = $2 AND scope = $3 AND first >= coalesce((SELECT "
            "max(first) FROM " +
            ranges +
            " WHERE source = $1 AND asset = $2 AND scope = $3 AND first <= $4), $4) AND first <= "
            "$5 AND last >= $4 AND failure IS NOT NULL ORDER BY first LIMIT $6",
        p);
    for (int i = 0; i < r.rows(); ++i) {
      const auto first =
          static_cast<std::size_t>(std::max(r.int_value(i, 0), scope.first) - scope.first);
      const auto last =
          static_cast<std::size_t>(std::min(r.int_value(i, 1), scope.last) - scope.first);
      found.push_back({{first, last}, r.int_value(i, 2)});
    }
  } else {
    // Keyed partitions: walk the window's keys, joining neighbours that share a failure.
    Result r = state_->db().exec(
        "SELECT key, failure FROM " + state_->t("partition_keys") +
            " WHERE source = $1 AND asset = $2 AND scope = $3 AND failure IS NOT NULL",
        dataset_params(dataset.source, dataset.asset, scope.name));
    std::unordered_map<std::string, std::int64_t> failed;
    for (int i = 0; i < r.rows(); ++i) failed[std::string(r.value(i, 0))] = r.int_value(i, 1);
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
  }
  for (const auto& [range, id] : found) {
    if (auto record = state_->failure(id)) out.push_back({range, std::move(*record)});
  }
  return out;
}

}  // namespace interloper
