// SqliteStore: materialization records as ranges of period ordinals (time) or keys (others).
#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "interloper/run/range_map.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/store.hpp"

namespace interloper {

namespace {

using sqlite::Statement;

// How a window is filed: time windows by granularity and ordinal range, others by key.
struct Scope {
  std::string name;  // "time:day", "list", ...
  bool ranged = false;
  std::int64_t first = 0;  // ordinals, inclusive (ranged only)
  std::int64_t last = -1;
};

std::int64_t ordinal(TimeGranularity g, TimePoint t) { return g.periods_between(TimePoint{}, t); }

Scope scope_of(const PartitionWindow& window) {
  if (const auto* time = dynamic_cast<const TimePartitionWindow*>(&window)) {
    std::int64_t first = ordinal(time->granularity(), time->start());
    return {fmt::format("time:{}", time->granularity().name()), true, first,
            first + static_cast<std::int64_t>(time->size()) - 1};
  }
  return {std::string(window.kind()), false, 0, -1};
}

const char* status_text(MaterializationStatus s) {
  return s == MaterializationStatus::materialized ? "materialized" : "failed";
}

// One stored range with its record.
struct Stored {
  std::int64_t first = 0;
  std::int64_t last = 0;
  MaterializationRecord record;
};

constexpr const char* record_columns =
    "first, last, status, rows, run_id, started, finished, error, asset_name";

Stored stored_from(Statement& stmt) {
  Stored s;
  s.first = stmt.column_int(0);
  s.last = stmt.column_int(1);
  s.record.status = stmt.column_text(2) == "failed" ? MaterializationStatus::failed
                                                    : MaterializationStatus::materialized;
  s.record.rows = stmt.column_int(3);
  s.record.run_id = stmt.column_text(4);
  s.record.started = TimePoint::parse(stmt.column_text(5));
  s.record.finished = TimePoint::parse(stmt.column_text(6));
  s.record.error = stmt.column_text(7);
  s.record.asset = stmt.column_text(8);
  return s;
}

// Binds the key every statement starts with: (source, asset, scope) as parameters 1 to 3.
void bind_dataset(Statement& stmt, const DatasetRef& dataset, const std::string& scope) {
  stmt.bind_text(1, dataset.source, false);
  stmt.bind_text(2, dataset.asset, false);
  stmt.bind_text(3, scope, false);
}

void bind_record(Statement& stmt, int at, const MaterializationRecord& r) {
  stmt.bind_text(at, status_text(r.status), false);
  stmt.bind_int(at + 1, r.rows);
  stmt.bind_text(at + 2, r.run_id);
  stmt.bind_text(at + 3, r.started.to_string());
  stmt.bind_text(at + 4, r.finished.to_string());
  stmt.bind_text(at + 5, r.error);
  stmt.bind_text(at + 6, r.asset);
}

}  // namespace

struct SqliteStore::State {
  explicit State(std::string p) : path(std::move(p)), db(path) {
    db.exec(
        "CREATE TABLE IF NOT EXISTS materialization_ranges ("
        " source TEXT NOT NULL, asset TEXT NOT NULL, scope TEXT NOT NULL,"
        " first INTEGER NOT NULL, last INTEGER NOT NULL, status TEXT NOT NULL,"
        " rows INTEGER NOT NULL, run_id TEXT NOT NULL, started TEXT NOT NULL,"
        " finished TEXT NOT NULL, error TEXT NOT NULL, asset_name TEXT NOT NULL,"
        " PRIMARY KEY (source, asset, scope, first)) WITHOUT ROWID;"
        "CREATE TABLE IF NOT EXISTS materialization_keys ("
        " source TEXT NOT NULL, asset TEXT NOT NULL, scope TEXT NOT NULL, key TEXT NOT NULL,"
        " status TEXT NOT NULL, rows INTEGER NOT NULL, run_id TEXT NOT NULL,"
        " started TEXT NOT NULL, finished TEXT NOT NULL, error TEXT NOT NULL,"
        " asset_name TEXT NOT NULL, PRIMARY KEY (source, asset, scope, key)) WITHOUT ROWID;");
  }

  std::string path;
  sqlite::Database db;
  std::mutex mutex;

  // Stored ranges overlapping [first, last], oldest first. The ranges of one scope never
  // overlap, so only the last range starting at or before `first` can reach into the span
  // from the left; the primary key finds it and the ones starting inside directly.
  std::vector<Stored> overlapping(const DatasetRef& dataset, const Scope& scope) {
    auto stmt_lease =
        db.cached(fmt::format("SELECT {} FROM materialization_ranges WHERE source = ?1 AND "
                              "asset = ?2 AND scope = ?3 AND first >= coalesce((SELECT max(first) "
                              "FROM materialization_ranges WHERE source = ?1 AND asset = ?2 AND "
                              "scope = ?3 AND first <= ?4), ?4) AND first <= ?5 AND last >= ?4 "
                              "ORDER BY first",
                              record_columns));
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, dataset, scope.name);
    stmt.bind_int(4, scope.first);
    stmt.bind_int(5, scope.last);
    std::vector<Stored> out;
    while (stmt.step()) out.push_back(stored_from(stmt));
    return out;
  }

  void insert_range(const DatasetRef& dataset, const Scope& scope, std::int64_t first,
                    std::int64_t last, const MaterializationRecord& r) {
    auto stmt_lease = db.cached(
        "INSERT OR REPLACE INTO materialization_ranges (source, asset, scope, first, "
        "last, status, rows, run_id, started, finished, error, asset_name) VALUES "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, dataset, scope.name);
    stmt.bind_int(4, first);
    stmt.bind_int(5, last);
    bind_record(stmt, 6, r);
    stmt.step();
  }

  void put_key(const DatasetRef& dataset, const std::string& scope, const std::string& key,
               const MaterializationRecord& r) {
    auto stmt_lease = db.cached(
        "INSERT OR REPLACE INTO materialization_keys (source, asset, scope, key, "
        "status, rows, run_id, started, finished, error, asset_name) VALUES "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, dataset, scope);
    stmt.bind_text(4, key, false);
    bind_record(stmt, 5, r);
    stmt.step();
  }

  std::optional<MaterializationRecord> get_key(const DatasetRef& dataset, const std::string& scope,
                                               const std::string& key) {
    auto stmt_lease = db.cached(
        "SELECT 0, 0, status, rows, run_id, started, finished, error, asset_name "
        "FROM materialization_keys WHERE source = ? AND asset = ? AND scope = ? AND "
        "key = ?");
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, dataset, scope);
    stmt.bind_text(4, key, false);
    if (!stmt.step()) return std::nullopt;
    return stored_from(stmt).record;
  }
};

SqliteStore::SqliteStore(std::string path) : state_(std::make_unique<State>(std::move(path))) {}
SqliteStore::~SqliteStore() = default;

const std::string& SqliteStore::path() const { return state_->path; }

void SqliteStore::record(const DatasetRef& dataset, const PartitionWindow* window,
                         const MaterializationRecord& record) {
  std::lock_guard lock(state_->mutex);
  sqlite::Transaction transaction(state_->db);
  if (!window) {
    state_->put_key(dataset, "none", "", record);
  } else if (Scope scope = scope_of(*window); scope.ranged) {
    // Cut the overlapped parts out of earlier ranges, keeping what sticks out on either side.
    std::vector<Stored> old = state_->overlapping(dataset, scope);
    {
      auto del_lease = state_->db.cached(
          "DELETE FROM materialization_ranges WHERE source = ? AND asset = ? AND "
          "scope = ? AND first = ?");
      Statement& del = *del_lease;
      for (const Stored& s : old) {
        del.reset();
        bind_dataset(del, dataset, scope.name);
        del.bind_int(4, s.first);
        del.step();
      }
    }
    for (const Stored& s : old) {
      if (s.first < scope.first)
        state_->insert_range(dataset, scope, s.first, scope.first - 1, s.record);
      if (s.last > scope.last)
        state_->insert_range(dataset, scope, scope.last + 1, s.last, s.record);
    }
    state_->insert_range(dataset, scope, scope.first, scope.last, record);
  } else {
    for (const std::string& key : window->keys()) state_->put_key(dataset, scope.name, key, record);
  }
  transaction.commit();
}

WindowStatus SqliteStore::status(const DatasetRef& dataset, const PartitionWindow& window) {
  std::lock_guard lock(state_->mutex);
  Scope scope = scope_of(window);
  std::vector<detail::StatusSegment> segments;
  if (scope.ranged) {
    for (const Stored& s : state_->overlapping(dataset, scope)) {
      segments.push_back({s.first, s.last, s.record.status});
    }
    return detail::to_window_status(segments, scope.first, window.size());
  }
  // Keyed partitions: the window's indices stand in for ordinals.
  auto stmt_lease = state_->db.cached(
      "SELECT key, status FROM materialization_keys WHERE source = ? AND asset = ? "
      "AND scope = ?");
  Statement& stmt = *stmt_lease;
  bind_dataset(stmt, dataset, scope.name);
  std::unordered_map<std::string, MaterializationStatus> stored;
  while (stmt.step()) {
    stored[stmt.column_text(0)] = stmt.column_text(1) == "failed"
                                      ? MaterializationStatus::failed
                                      : MaterializationStatus::materialized;
  }
  const std::vector<std::string> keys = window.keys();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    auto it = stored.find(keys[i]);
    if (it == stored.end()) continue;
    const auto ordinal = static_cast<std::int64_t>(i);
    segments.push_back({ordinal, ordinal, it->second});
  }
  return detail::to_window_status(segments, 0, window.size());
}

std::optional<MaterializationRecord> SqliteStore::latest(const DatasetRef& dataset,
                                                         const Partition* partition) {
  std::lock_guard lock(state_->mutex);
  if (!partition) return state_->get_key(dataset, "none", "");
  if (const auto* time = dynamic_cast<const TimePartition*>(partition)) {
    std::int64_t at = ordinal(time->granularity(), time->value());
    auto stmt_lease =
        state_->db.cached(fmt::format("SELECT {} FROM materialization_ranges WHERE source = ? AND "
                                      "asset = ? AND scope = ? AND first <= ? ORDER BY first DESC "
                                      "LIMIT 1",
                                      record_columns));
    Statement& stmt = *stmt_lease;
    const std::string scope = fmt::format("time:{}", time->granularity().name());
    bind_dataset(stmt, dataset, scope);  // bound without copying: `scope` outlives the step
    stmt.bind_int(4, at);
    if (!stmt.step()) return std::nullopt;
    Stored s = stored_from(stmt);
    if (s.last < at) return std::nullopt;
    return s.record;
  }
  return state_->get_key(dataset, std::string(partition->kind()), partition->key());
}

std::unique_ptr<MaterializationStore> open_store(std::string_view path) {
  if (path == "memory://" || path == "memory:") return std::make_unique<MemoryStore>();
  std::string_view file = path;
  if (file.rfind("sqlite:", 0) == 0) {
    file.remove_prefix(7);
    if (file.rfind("//", 0) == 0) {
      file.remove_prefix(2);
      if (file.empty() || (file[0] != '/' && file[0] != '.')) {
        throw DestinationError(
            fmt::format("store '{}': write sqlite:///absolute/path or sqlite:relative/path", path));
      }
    }
  } else if (auto colon = file.find("://"); colon != std::string_view::npos) {
    throw DestinationError(fmt::format("store '{}': unknown scheme '{}' (memory, sqlite)", path,
                                       file.substr(0, colon)));
  }
  if (file.empty()) throw DestinationError(fmt::format("store '{}': no path", path));
  return std::make_unique<SqliteStore>(std::string(file));
}

}  // namespace interloper
