// SqlStore's partition states: ranges of period ordinals (time) or keys (other kinds), failure
// details apart. Every change is one transaction holding the lock of the dataset scope it
// rewrites, so writers sharing the database take turns.
#include <algorithm>
#include <climits>
#include <unordered_map>
#include <unordered_set>

#include "interloper/store/sql_store_state.hpp"

namespace interloper {

using detail::Cell;
using detail::Range;
using detail::Scope;
using detail::scope_of;
using sql::Transaction;

namespace {

std::string scope_key(const DatasetRef& dataset, std::string_view scope) {
  return dataset.source + "\x1f" + dataset.asset + "\x1f" + std::string(scope);
}

// The partitions of `keys` (a window's, in order) found in `stored`, as index segments.
template <typename Found>
std::vector<detail::StatusSegment> keyed_segments(const std::vector<std::string>& keys,
                                                  const Found& stored) {
  std::vector<detail::StatusSegment> segments;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto it = stored.find(keys[i]);
    if (it == stored.end()) continue;
    const auto ordinal = static_cast<std::int64_t>(i);
    segments.push_back({ordinal, ordinal, it->second.first, it->second.second});
  }
  return segments;
}

}  // namespace

SqlStore::SqlStore(std::unique_ptr<detail::SqlStoreState> state) : state_(std::move(state)) {}
SqlStore::~SqlStore() = default;

namespace {

// The state of `scope`'s ordinals (ranged), or of `window`'s keys (nullptr: the unpartitioned
// asset), set to `cell`, the failures no partition refers to any more dropped. In a transaction
// holding the scope's lock.
void assign(detail::SqlStoreState& s, const DatasetRef& dataset, const PartitionWindow* window,
            const Scope& scope, const Cell& cell) {
  if (scope.ranged) {
    s.assign_range(dataset, scope.name, scope.first, scope.last, cell);
  } else if (!window) {
    const std::int64_t before = s.assign_key(dataset, "none", "", cell);
    if (before != 0) s.drop_unreferenced({before});
  } else {
    std::vector<std::int64_t> before;
    for (const std::string& key : window->keys()) {
      const std::int64_t id = s.assign_key(dataset, scope.name, key, cell);
      if (id != 0 && (before.empty() || before.back() != id)) before.push_back(id);
    }
    s.drop_unreferenced(before);
  }
}

Scope scope_or_none(const PartitionWindow* window) {
  return window ? scope_of(*window) : Scope{"none", false, 0, 0};
}

bool same_dataset(const DatasetRef& a, const DatasetRef& b) {
  return a.source == b.source && a.asset == b.asset;
}

// Materialized partitions of one dataset's scope recorded together, adjacent ones joined into
// one range: one assignment for a run's consecutive partitions.
struct Joined {
  const DatasetRef* dataset = nullptr;
  Scope scope;
  Cell cell;
  // Joins `scope` (materialized as `cell`) when it extends this range; false otherwise.
  bool join(const DatasetRef& d, const Scope& next, const Cell& c) {
    if (dataset == nullptr || !same_dataset(*dataset, d) || scope.name != next.name ||
        !(cell == c)) {
      return false;
    }
    if (next.first == scope.last + 1) {
      scope.last = next.last;
    } else if (next.last + 1 == scope.first) {
      scope.first = next.first;
    } else {
      return false;
    }
    return true;
  }
};

}  // namespace

void SqlStore::record(const DatasetRef& dataset, const PartitionWindow* window,
                      const MaterializationRecord& record) {
  detail::SqlStoreState& s = *state_;
  std::lock_guard lock(s.mutex);
  Transaction tx(s.db());
  const Scope scope = scope_or_none(window);
  s.lock("partition_ranges", scope_key(dataset, scope.name));
  s.set_last_record(dataset, record);
  assign(s, dataset, window, scope, s.cell_for(record));
  tx.commit();
}

void SqlStore::record_all(const std::vector<PartitionOutcome>& outcomes) {
  if (outcomes.empty()) return;
  detail::SqlStoreState& s = *state_;
  std::lock_guard lock(s.mutex);
  Transaction tx(s.db());
  std::vector<Scope> scopes;
  std::vector<std::string> keys;
  for (const PartitionOutcome& o : outcomes) {
    scopes.push_back(scope_or_none(o.window.get()));
    keys.push_back(scope_key(o.dataset, scopes.back().name));
  }
  // A dataset's last record is the last of the batch for it.
  std::vector<bool> last(outcomes.size());
  std::unordered_set<std::string> seen;
  for (std::size_t i = outcomes.size(); i-- > 0;) {
    last[i] = seen.insert(outcomes[i].dataset.source + "\x1f" + outcomes[i].dataset.asset).second;
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  s.db().lock(s.t("partition_ranges"), keys);  // every scope at once, in one order
  Joined joined;
  auto flush = [&] {
    if (joined.dataset) assign(s, *joined.dataset, nullptr, joined.scope, joined.cell);
    joined.dataset = nullptr;
  };
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const PartitionOutcome& o = outcomes[i];
    if (last[i]) s.set_last_record(o.dataset, o.record);
    const bool joinable =
        scopes[i].ranged && o.record.status == MaterializationStatus::materialized;
    const Cell cell = joinable ? Cell{o.record.status, 0, o.record.definition} : Cell{};
    if (joinable && joined.join(o.dataset, scopes[i], cell)) continue;
    flush();
    if (joinable) {
      joined = {&o.dataset, scopes[i], cell};
    } else {
      assign(s, o.dataset, o.window.get(), scopes[i], s.cell_for(o.record));
    }
  }
  flush();
  tx.commit();
}

void SqlStore::forget(const DatasetRef& dataset, const PartitionWindow* window) {
  detail::SqlStoreState& s = *state_;
  std::lock_guard lock(s.mutex);
  Transaction tx(s.db());
  std::vector<std::int64_t> failures;
  auto collect = [&](const Table& rows) {
    for (std::size_t i = 0; i < rows.num_rows(); ++i) {
      if (!rows.column(0)[i].is_null()) failures.push_back(detail::int_at(rows, i, 0));
    }
  };
  if (!window) {
    // Every scope of the dataset, each under its own lock, taken in one order.
    const Table scopes =
        s.query("SELECT scope FROM " + s.t("partition_ranges") +
                    " WHERE source = ? AND asset = ? UNION SELECT scope FROM " +
                    s.t("partition_keys") + " WHERE source = ? AND asset = ? ORDER BY 1",
                {dataset.source, dataset.asset, dataset.source, dataset.asset});
    for (std::size_t i = 0; i < scopes.num_rows(); ++i) {
      s.lock("partition_ranges", scope_key(dataset, detail::text_at(scopes, i, 0)));
    }
    s.run("DELETE FROM " + s.t("last_records") + " WHERE source = ? AND asset = ?",
          {dataset.source, dataset.asset});
    for (const char* table : {"partition_ranges", "partition_keys"}) {
      collect(s.query("DELETE FROM " + s.t(table) +
                          " WHERE source = ? AND asset = ? RETURNING "
                          "failure",
                      {dataset.source, dataset.asset}));
    }
  } else if (Scope scope = scope_of(*window); scope.ranged) {
    s.lock("partition_ranges", scope_key(dataset, scope.name));
    s.assign_range(dataset, scope.name, scope.first, scope.last, std::nullopt);
  } else {
    s.lock("partition_ranges", scope_key(dataset, scope.name));
    for (const std::string& key : window->keys()) {
      collect(s.query("DELETE FROM " + s.t("partition_keys") +
                          " WHERE source = ? AND asset = ? AND scope = ? AND key = ? RETURNING "
                          "failure",
                      {dataset.source, dataset.asset, scope.name, key}));
    }
  }
  s.drop_unreferenced(failures);
  tx.commit();
}

WindowStatus SqlStore::status(const DatasetRef& dataset, const PartitionWindow& window) {
  detail::SqlStoreState& s = *state_;
  std::lock_guard lock(s.mutex);
  const Scope scope = scope_of(window);
  if (scope.ranged) {
    std::vector<detail::StatusSegment> segments;
    for (const Range& r : s.overlapping(dataset, scope.name, scope.first, scope.last)) {
      segments.push_back({r.first, r.last, r.cell.status, r.cell.definition});
    }
    return detail::to_window_status(segments, scope.first, window.size());
  }
  // Keyed partitions: the window's indices stand in for ordinals.
  const Table rows = s.query("SELECT key, status, definition FROM " + s.t("partition_keys") +
                                 " WHERE source = ? AND asset = ? AND scope = ?",
                             {dataset.source, dataset.asset, scope.name});
  std::unordered_map<std::string, std::pair<MaterializationStatus, std::string>> stored;
  for (std::size_t i = 0; i < rows.num_rows(); ++i) {
    stored[detail::text_at(rows, i, 0)] = {detail::status_from(rows.column(1)[i]),
                                           detail::text_at(rows, i, 2)};
  }
  return detail::to_window_status(keyed_segments(window.keys(), stored), 0, window.size());
}

std::optional<MaterializationRecord> SqlStore::latest(const DatasetRef& dataset,
                                                      const Partition* partition) {
  detail::SqlStoreState& s = *state_;
  std::lock_guard lock(s.mutex);
  std::optional<Cell> cell;
  if (!partition) {
    cell = s.key_cell(dataset, "none", "");
  } else if (Scope scope = scope_of(*partition->as_window()); scope.ranged) {
    const std::vector<Range> found = s.overlapping(dataset, scope.name, scope.first, scope.first);
    if (!found.empty()) cell = found.front().cell;
  } else {
    cell = s.key_cell(dataset, scope.name, partition->key());
  }
  if (!cell) return std::nullopt;
  return s.record_of(dataset.asset, *cell);
}

std::optional<MaterializationRecord> SqlStore::last_record(const DatasetRef& dataset) {
  detail::SqlStoreState& s = *state_;
  std::lock_guard lock(s.mutex);
  if (!s.has_last_records) return std::nullopt;
  const Table rows = s.query("SELECT status, rows, run_id, started, finished, error FROM " +
                                 s.t("last_records") + " WHERE source = ? AND asset = ?",
                             {dataset.source, dataset.asset});
  if (rows.num_rows() == 0) return std::nullopt;
  return detail::outcome_at(rows, 0, 1, dataset.asset, detail::status_from(rows.column(0)[0]));
}

std::vector<FailedRange> SqlStore::failures(const DatasetRef& dataset,
                                            const PartitionWindow& window, std::size_t limit) {
  detail::SqlStoreState& s = *state_;
  std::lock_guard lock(s.mutex);
  std::vector<FailedRange> out;
  if (limit == 0) return out;
  const Scope scope = scope_of(window);
  std::vector<std::pair<PartitionRange, std::int64_t>> found;
  if (scope.ranged) {
    // The failed ranges overlapping the window, found as overlapping() finds every range.
    const std::string ranges = s.t("partition_ranges");
    const Table rows = s.query(
        "SELECT first, last, failure FROM " + ranges +
            " WHERE source = ? AND asset = ? AND scope = ? AND first >= coalesce((SELECT "
            "max(first) FROM " +
            ranges +
            " WHERE source = ? AND asset = ? AND scope = ? AND first <= ?), ?) AND first <= ? "
            "AND last >= ? AND failure IS NOT NULL ORDER BY first LIMIT ?",
        {dataset.source, dataset.asset, scope.name, dataset.source, dataset.asset, scope.name,
         scope.first, scope.first, scope.last, scope.first,
         static_cast<std::int64_t>(std::min<std::size_t>(limit, INT64_MAX))});
    for (std::size_t i = 0; i < rows.num_rows(); ++i) {
      const std::int64_t first = std::max(detail::int_at(rows, i, 0), scope.first);
      const std::int64_t last = std::min(detail::int_at(rows, i, 1), scope.last);
      found.push_back({{static_cast<std::size_t>(first - scope.first),
                        static_cast<std::size_t>(last - scope.first)},
                       detail::int_at(rows, i, 2)});
    }
  } else {
    // Keyed partitions: walk the window's keys, joining neighbours that share a failure.
    const Table rows = s.query("SELECT key, failure FROM " + s.t("partition_keys") +
                                   " WHERE source = ? AND asset = ? AND scope = ? AND failure IS "
                                   "NOT NULL",
                               {dataset.source, dataset.asset, scope.name});
    std::unordered_map<std::string, std::int64_t> failed;
    for (std::size_t i = 0; i < rows.num_rows(); ++i) {
      failed[detail::text_at(rows, i, 0)] = detail::int_at(rows, i, 1);
    }
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
    if (auto record = s.failure(id)) out.push_back({range, std::move(*record)});
  }
  return out;
}

}  // namespace interloper
