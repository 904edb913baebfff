// SqliteStore: partition states as ranges of period ordinals (time) or keys (others), failure
// details apart.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "interloper/run/range_map.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/store.hpp"

namespace interloper {

namespace {

using sqlite::Statement;

using detail::Scope;
using detail::scope_of;

const char* status_text(MaterializationStatus s) {
  return s == MaterializationStatus::materialized ? "materialized" : "failed";
}

MaterializationStatus status_from(const std::string& text) {
  return text == "failed" ? MaterializationStatus::failed : MaterializationStatus::materialized;
}

// A record whose rows, run id, start, finish and error are the columns `first` to `first + 4`
// of the row `stmt` stands on.
MaterializationRecord outcome_at(Statement& stmt, int first, std::string asset,
                                 MaterializationStatus status) {
  MaterializationRecord r;
  r.asset = std::move(asset);
  r.status = status;
  r.rows = stmt.column_int(first);
  r.run_id = stmt.column_text(first + 1);
  r.started = TimePoint::parse(stmt.column_text(first + 2));
  r.finished = TimePoint::parse(stmt.column_text(first + 3));
  r.error = stmt.column_text(first + 4);
  return r;
}

// The state of a stored range or key: its status and, when failed, the id of its failure row
// (0 when materialized).
struct Cell {
  MaterializationStatus status = MaterializationStatus::materialized;
  std::int64_t failure = 0;
  std::string definition;  // of a materialized partition: its asset's definition fingerprint
  friend bool operator==(const Cell&, const Cell&) = default;
};

// One stored range.
struct Range {
  std::int64_t first = 0;
  std::int64_t last = 0;
  Cell cell;
};

// Binds the key every statement starts with: (source, asset, scope) as parameters 1 to 3.
void bind_dataset(Statement& stmt, std::string_view source, std::string_view asset,
                  const std::string& scope) {
  stmt.bind_text(1, source, false);
  stmt.bind_text(2, asset, false);
  stmt.bind_text(3, scope, false);
}

void bind_cell(Statement& stmt, int at, const Cell& cell) {
  stmt.bind_text(at, status_text(cell.status), false);
  if (cell.failure == 0) {
    stmt.bind_null(at + 1);
  } else {
    stmt.bind_int(at + 1, cell.failure);
  }
  stmt.bind_text(at + 2, cell.definition, false);
}

Cell cell_from(Statement& stmt, int at) {
  return {status_from(stmt.column_text(at)),
          stmt.column_is_null(at + 1) ? 0 : stmt.column_int(at + 1), stmt.column_text(at + 2)};
}

constexpr int kSchemaVersion = 6;

// Thrown when a store opened read-only holds nothing yet: a writer has created the file and
// not yet committed its tables. A reader sees such a store as empty.
struct NotYetAStore : DestinationError {
  using DestinationError::DestinationError;
};

}  // namespace

struct SqliteStore::State {
  State(std::string p, bool read_only)
      : path(std::move(p)),
        db(path,
           read_only ? sqlite::Database::Mode::read_only : sqlite::Database::Mode::read_write) {
    if (schema_version() == kSchemaVersion) return;
    if (read_only && schema_version() == 5) {
      // Version 5 lacks only the last record per dataset: readers take it as it is.
      has_last_records = false;
      return;
    }
    if (read_only) {
      if (schema_version() == 0 && holds_nothing()) {
        throw NotYetAStore(fmt::format("store '{}' holds no tables yet", path));
      }
      throw DestinationError(
          fmt::format("store '{}': written by another version; run a command "
                      "that writes (materialize, backfill) to convert it",
                      path));
    }
    sqlite::Transaction transaction(db);
    db.exec(
        "CREATE TABLE IF NOT EXISTS failures ("
        " id INTEGER PRIMARY KEY, asset_name TEXT NOT NULL, rows INTEGER NOT NULL,"
        " run_id TEXT NOT NULL, started TEXT NOT NULL, finished TEXT NOT NULL,"
        " error TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS partition_ranges ("
        " source TEXT NOT NULL, asset TEXT NOT NULL, scope TEXT NOT NULL,"
        " first INTEGER NOT NULL, last INTEGER NOT NULL, status TEXT NOT NULL,"
        " failure INTEGER, definition TEXT NOT NULL DEFAULT '',"
        " PRIMARY KEY (source, asset, scope, first)) WITHOUT ROWID;"
        "CREATE INDEX IF NOT EXISTS partition_ranges_failure ON partition_ranges (failure)"
        " WHERE failure IS NOT NULL;"
        "CREATE TABLE IF NOT EXISTS partition_keys ("
        " source TEXT NOT NULL, asset TEXT NOT NULL, scope TEXT NOT NULL, key TEXT NOT NULL,"
        " status TEXT NOT NULL, failure INTEGER, definition TEXT NOT NULL DEFAULT '',"
        " PRIMARY KEY (source, asset, scope, key)) WITHOUT ROWID;"
        "CREATE INDEX IF NOT EXISTS partition_keys_failure ON partition_keys (failure)"
        " WHERE failure IS NOT NULL;"
        "CREATE TABLE IF NOT EXISTS claims ("
        " source TEXT NOT NULL, asset TEXT NOT NULL, scope TEXT NOT NULL, key TEXT NOT NULL,"
        " first INTEGER NOT NULL, last INTEGER NOT NULL, owner TEXT NOT NULL,"
        " expires INTEGER NOT NULL);"
        "CREATE INDEX IF NOT EXISTS claims_partition ON claims (source, asset, scope, key, first);"
        "CREATE INDEX IF NOT EXISTS claims_owner ON claims (owner);"
        "CREATE TABLE IF NOT EXISTS runs ("
        " id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, pipeline TEXT NOT NULL,"
        " command_line TEXT NOT NULL, window TEXT NOT NULL, started TEXT NOT NULL,"
        " finished TEXT NOT NULL, state TEXT NOT NULL, partitions INTEGER NOT NULL,"
        " succeeded INTEGER NOT NULL, failed INTEGER NOT NULL, skipped INTEGER NOT NULL);"
        "CREATE INDEX IF NOT EXISTS runs_pipeline ON runs (pipeline, id);"
        "CREATE TABLE IF NOT EXISTS last_records ("
        " source TEXT NOT NULL, asset TEXT NOT NULL, status TEXT NOT NULL, rows INTEGER NOT NULL,"
        " run_id TEXT NOT NULL, started TEXT NOT NULL, finished TEXT NOT NULL,"
        " error TEXT NOT NULL, PRIMARY KEY (source, asset)) WITHOUT ROWID;");
    add_definition_columns();
    migrate_from_records();
    db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str());
    transaction.commit();
  }

  std::string path;
  sqlite::Database db;
  std::mutex mutex;
  bool has_last_records = true;

  std::int64_t schema_version() {
    Statement stmt(db, "PRAGMA user_version");
    return stmt.step() ? stmt.column_int(0) : 0;
  }

  bool holds_nothing() {
    Statement stmt(db, "SELECT count(*) FROM sqlite_master");
    return stmt.step() && stmt.column_int(0) == 0;
  }

  // Stored ranges overlapping [first, last], ascending. The ranges of one scope never overlap,
  // so only the last range starting at or before `first` can reach into the span from the
  // left; the primary key finds it and the ones starting inside directly.
  std::vector<Range> overlapping(std::string_view source, std::string_view asset,
                                 const std::string& scope, std::int64_t first, std::int64_t last) {
    auto stmt_lease = db.cached(
        "SELECT first, last, status, failure, definition FROM partition_ranges WHERE source = ?1 "
        "AND "
        "asset = ?2 AND scope = ?3 AND first >= coalesce((SELECT max(first) FROM "
        "partition_ranges WHERE source = ?1 AND asset = ?2 AND scope = ?3 AND first <= ?4), ?4) "
        "AND first <= ?5 AND last >= ?4 ORDER BY first");
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, source, asset, scope);
    stmt.bind_int(4, first);
    stmt.bind_int(5, last);
    std::vector<Range> out;
    while (stmt.step()) out.push_back({stmt.column_int(0), stmt.column_int(1), cell_from(stmt, 2)});
    return out;
  }

  // A new failure row for `record`; returns its id.
  std::int64_t insert_failure(const MaterializationRecord& r) {
    auto stmt_lease = db.cached(
        "INSERT INTO failures (asset_name, rows, run_id, started, finished, error) VALUES "
        "(?, ?, ?, ?, ?, ?)");
    Statement& stmt = *stmt_lease;
    stmt.bind_text(1, r.asset);
    stmt.bind_int(2, r.rows);
    stmt.bind_text(3, r.run_id);
    stmt.bind_text(4, r.started.to_string());
    stmt.bind_text(5, r.finished.to_string());
    stmt.bind_text(6, bound_error(r.error));
    stmt.step();
    return sqlite3_last_insert_rowid(db.get());
  }

  void set_last_record(const DatasetRef& dataset, const MaterializationRecord& r) {
    auto stmt_lease = db.cached(
        "INSERT OR REPLACE INTO last_records (source, asset, status, rows, run_id, started, "
        "finished, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    Statement& stmt = *stmt_lease;
    stmt.bind_text(1, dataset.source, false);
    stmt.bind_text(2, dataset.asset, false);
    stmt.bind_text(3, status_text(r.status));
    stmt.bind_int(4, r.rows);
    stmt.bind_text(5, r.run_id, false);
    stmt.bind_text(6, r.started.to_string());
    stmt.bind_text(7, r.finished.to_string());
    stmt.bind_text(8, bound_error(r.error));
    stmt.step();
  }

  Cell cell_for(const MaterializationRecord& r) {
    if (r.status == MaterializationStatus::materialized) return {r.status, 0, r.definition};
    return {r.status, insert_failure(r), ""};
  }

  // Deletes failure rows that no range or key refers to any more.
  void drop_unreferenced(const std::vector<std::int64_t>& failures) {
    auto stmt_lease = db.cached(
        "DELETE FROM failures WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM partition_ranges "
        "WHERE failure = ?1) AND NOT EXISTS (SELECT 1 FROM partition_keys WHERE failure = ?1)");
    Statement& stmt = *stmt_lease;
    for (std::int64_t id : failures) {
      stmt.reset();
      stmt.bind_int(1, id);
      stmt.step();
    }
  }

  std::optional<MaterializationRecord> failure(std::int64_t id) {
    auto stmt_lease = db.cached(
        "SELECT asset_name, rows, run_id, started, finished, error FROM failures WHERE id = ?");
    Statement& stmt = *stmt_lease;
    stmt.bind_int(1, id);
    if (!stmt.step()) return std::nullopt;
    return outcome_at(stmt, 1, stmt.column_text(0), MaterializationStatus::failed);
  }

  MaterializationRecord record_of(std::string_view asset, const Cell& cell) {
    if (cell.failure != 0) {
      if (auto r = failure(cell.failure)) return *r;
    }
    MaterializationRecord r;
    r.asset = std::string(asset);
    r.status = cell.status;
    r.definition = cell.definition;
    return r;
  }

  void insert_range(std::string_view source, std::string_view asset, const std::string& scope,
                    const Range& range) {
    auto stmt_lease = db.cached(
        "INSERT INTO partition_ranges (source, asset, scope, first, last, status, failure, "
        "definition) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, source, asset, scope);
    stmt.bind_int(4, range.first);
    stmt.bind_int(5, range.last);
    bind_cell(stmt, 6, range.cell);
    stmt.step();
  }

  // Sets the state of ordinals [first, last] to `cell` (nullopt: no state, as if never
  // recorded): the ranges overlapping it lose their overlapped part, and neighbours in the same
  // state merge with it. Callers hold a transaction.
  void assign_range(std::string_view source, std::string_view asset, const std::string& scope,
                    std::int64_t first, std::int64_t last, const std::optional<Cell>& cell) {
    // The touching neighbours too: they may merge with the new range.
    std::vector<Range> old = overlapping(source, asset, scope, first - 1, last + 1);
    std::optional<Range> left;
    std::optional<Range> right;
    std::vector<std::int64_t> failures;
    {
      auto del_lease = db.cached(
          "DELETE FROM partition_ranges WHERE source = ? AND asset = ? AND scope = ? AND "
          "first = ?");
      Statement& del = *del_lease;
      for (const Range& r : old) {
        del.reset();
        bind_dataset(del, source, asset, scope);
        del.bind_int(4, r.first);
        del.step();
        if (r.cell.failure != 0) failures.push_back(r.cell.failure);
        if (r.first < first) left = Range{r.first, std::min(r.last, first - 1), r.cell};
        if (r.last > last) right = Range{std::max(r.first, last + 1), r.last, r.cell};
      }
    }
    Range merged{first, last, cell.value_or(Cell{})};
    if (left && left->last + 1 == first && left->cell == cell) {
      merged.first = left->first;
      left.reset();
    }
    if (right && right->first == last + 1 && right->cell == cell) {
      merged.last = right->last;
      right.reset();
    }
    if (left) insert_range(source, asset, scope, *left);
    if (cell) insert_range(source, asset, scope, merged);
    if (right) insert_range(source, asset, scope, *right);
    drop_unreferenced(failures);
  }

  // Sets the state of one key; returns the failure it referred to before (0 for none).
  std::int64_t assign_key(std::string_view source, std::string_view asset, const std::string& scope,
                          const std::string& key, const Cell& cell) {
    std::int64_t before = 0;
    {
      auto get_lease = db.cached(
          "SELECT failure FROM partition_keys WHERE source = ? AND asset = ? AND scope = ? AND "
          "key = ?");
      Statement& get = *get_lease;
      bind_dataset(get, source, asset, scope);
      get.bind_text(4, key, false);
      if (get.step() && !get.column_is_null(0)) before = get.column_int(0);
    }
    auto stmt_lease = db.cached(
        "INSERT OR REPLACE INTO partition_keys (source, asset, scope, key, status, failure, "
        "definition) VALUES (?, ?, ?, ?, ?, ?, ?)");
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, source, asset, scope);
    stmt.bind_text(4, key, false);
    bind_cell(stmt, 5, cell);
    stmt.step();
    return before;
  }

  std::optional<Cell> key_cell(const DatasetRef& dataset, const std::string& scope,
                               const std::string& key) {
    auto stmt_lease = db.cached(
        "SELECT status, failure, definition FROM partition_keys WHERE source = ? AND asset = ? AND "
        "scope = ? AND key = ?");
    Statement& stmt = *stmt_lease;
    bind_dataset(stmt, dataset.source, dataset.asset, scope);
    stmt.bind_text(4, key, false);
    if (!stmt.step()) return std::nullopt;
    return cell_from(stmt, 0);
  }

  // Binds (source, asset, scope, key, first, last, owner) as parameters 1 to 7 of a claims
  // statement.
  static void bind_claim(Statement& stmt, const DatasetRef& dataset, const std::string& scope,
                         const detail::ClaimSpan& span, std::string_view owner) {
    bind_dataset(stmt, dataset.source, dataset.asset, scope);
    stmt.bind_text(4, span.key, false);
    stmt.bind_int(5, span.first);
    stmt.bind_int(6, span.last);
    stmt.bind_text(7, owner, false);
  }

  // The live claim of another owner overlapping `span`, if any.
  std::optional<Claim> held_by_other(const DatasetRef& dataset, const std::string& scope,
                                     const detail::ClaimSpan& span, std::string_view owner,
                                     TimePoint now) {
    auto stmt_lease = db.cached(
        "SELECT owner, expires FROM claims WHERE source = ?1 AND asset = ?2 AND scope = ?3 AND "
        "key = ?4 AND first <= ?6 AND last >= ?5 AND owner != ?7 AND expires > ?8 LIMIT 1");
    Statement& stmt = *stmt_lease;
    bind_claim(stmt, dataset, scope, span, owner);
    stmt.bind_int(8, now.seconds().time_since_epoch().count());
    if (!stmt.step()) return std::nullopt;
    return Claim{stmt.column_text(0), TimePoint::from_epoch_seconds(stmt.column_int(1))};
  }

  void drop_own(const DatasetRef& dataset, const std::string& scope, const detail::ClaimSpan& span,
                std::string_view owner) {
    auto stmt_lease = db.cached(
        "DELETE FROM claims WHERE source = ?1 AND asset = ?2 AND scope = ?3 AND key = ?4 AND "
        "first <= ?6 AND last >= ?5 AND owner = ?7");
    Statement& stmt = *stmt_lease;
    bind_claim(stmt, dataset, scope, span, owner);
    stmt.step();
  }

  // Converts the tables of the first file format (one row per record, every row carrying its
  // record) into states, then drops them. Runs inside the opening transaction.
  // Stores of version 4 kept no definitions: their partitions get "" (unknown, never stale).
  void add_definition_columns() {
    for (const char* table : {"partition_ranges", "partition_keys"}) {
      Statement columns(db, fmt::format("SELECT count(*) FROM pragma_table_info('{}') WHERE "
                                        "name = 'definition'",
                                        table)
                                .c_str());
      if (columns.step() && columns.column_int(0) == 0) {
        db.exec(fmt::format("ALTER TABLE {} ADD COLUMN definition TEXT NOT NULL DEFAULT ''", table)
                    .c_str());
      }
    }
  }

  void migrate_from_records() {
    bool old_ranges = false;
    bool old_keys = false;
    {
      Statement tables(db,
                       "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
                       "('materialization_ranges', 'materialization_keys')");
      while (tables.step()) {
        (tables.column_text(0) == "materialization_ranges" ? old_ranges : old_keys) = true;
      }
    }
    auto old_record = [](Statement& stmt, int at) {
      MaterializationRecord r;
      r.status = status_from(stmt.column_text(at));
      r.rows = stmt.column_int(at + 1);
      r.run_id = stmt.column_text(at + 2);
      r.started = TimePoint::parse(stmt.column_text(at + 3));
      r.finished = TimePoint::parse(stmt.column_text(at + 4));
      r.error = stmt.column_text(at + 5);
      r.asset = stmt.column_text(at + 6);
      return r;
    };
    if (old_ranges) {
      Statement rows(db,
                     "SELECT source, asset, scope, first, last, status, rows, run_id, started, "
                     "finished, error, asset_name FROM materialization_ranges ORDER BY source, "
                     "asset, scope, first");
      while (rows.step()) {
        const MaterializationRecord r = old_record(rows, 5);
        assign_range(rows.column_text(0), rows.column_text(1), rows.column_text(2),
                     rows.column_int(3), rows.column_int(4), cell_for(r));
      }
    }
    if (old_keys) {
      Statement rows(db,
                     "SELECT source, asset, scope, key, status, rows, run_id, started, "
                     "finished, error, asset_name FROM materialization_keys");
      while (rows.step()) {
        const MaterializationRecord r = old_record(rows, 4);
        assign_key(rows.column_text(0), rows.column_text(1), rows.column_text(2),
                   rows.column_text(3), cell_for(r));
      }
    }
    if (old_ranges) db.exec("DROP TABLE materialization_ranges");
    if (old_keys) db.exec("DROP TABLE materialization_keys");
  }
};

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

std::optional<Claim> SqliteStore::claim(const std::vector<DatasetRef>& datasets,
                                        const PartitionWindow* window, const Claim& claim,
                                        TimePoint now) {
  const auto covered = detail::claim_spans(window);
  const std::string& scope = covered.first;
  const std::vector<detail::ClaimSpan>& spans = covered.second;
  std::lock_guard lock(state_->mutex);
  sqlite::Transaction transaction(state_->db);
  {
    auto expired = state_->db.cached("DELETE FROM claims WHERE expires <= ?");
    expired->bind_int(1, now.seconds().time_since_epoch().count());
    expired->step();
  }
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : spans) {
      if (auto held = state_->held_by_other(dataset, scope, span, claim.owner, now)) return held;
    }
  }
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : spans) {
      state_->drop_own(dataset, scope, span, claim.owner);
      auto insert = state_->db.cached(
          "INSERT INTO claims (source, asset, scope, key, first, last, owner, expires) VALUES "
          "(?, ?, ?, ?, ?, ?, ?, ?)");
      State::bind_claim(*insert, dataset, scope, span, claim.owner);
      insert->bind_int(8, claim.expires.seconds().time_since_epoch().count());
      insert->step();
    }
  }
  transaction.commit();
  return std::nullopt;
}

void SqliteStore::release(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
                          std::string_view owner) {
  const auto covered = detail::claim_spans(window);
  const std::string& scope = covered.first;
  const std::vector<detail::ClaimSpan>& spans = covered.second;
  std::lock_guard lock(state_->mutex);
  sqlite::Transaction transaction(state_->db);
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : spans) state_->drop_own(dataset, scope, span, owner);
  }
  transaction.commit();
}

void SqliteStore::renew(std::string_view owner, TimePoint expires) {
  std::lock_guard lock(state_->mutex);
  auto stmt = state_->db.cached("UPDATE claims SET expires = ? WHERE owner = ?");
  stmt->bind_int(1, expires.seconds().time_since_epoch().count());
  stmt->bind_text(2, owner, false);
  stmt->step();
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

void SqliteStore::record_run(const RunRecord& run, std::size_t keep) {
  std::lock_guard lock(state_->mutex);
  sqlite::Transaction transaction(state_->db);
  {
    auto stmt = state_->db.cached(
        "INSERT INTO runs (run_id, pipeline, command_line, window, started, finished, state, "
        "partitions, succeeded, failed, skipped) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
        "?10, ?11) ON CONFLICT (run_id) DO UPDATE SET pipeline = ?2, command_line = ?3, "
        "window = ?4, started = ?5, finished = ?6, state = ?7, partitions = ?8, succeeded = ?9, "
        "failed = ?10, skipped = ?11");
    stmt->bind_text(1, run.run_id);
    stmt->bind_text(2, run.pipeline);
    stmt->bind_text(3, run.command_line);
    stmt->bind_text(4, run.window);
    stmt->bind_text(5, run.started.to_string());
    stmt->bind_text(6, run.finished.to_string());
    stmt->bind_text(7, run_state_name(run.state));
    stmt->bind_int(8, run.partitions);
    stmt->bind_int(9, run.succeeded);
    stmt->bind_int(10, run.failed);
    stmt->bind_int(11, run.skipped);
    stmt->step();
  }
  {
    auto stmt = state_->db.cached(
        "DELETE FROM runs WHERE pipeline = ?1 AND id NOT IN (SELECT id FROM runs WHERE "
        "pipeline = ?1 ORDER BY id DESC LIMIT ?2)");
    stmt->bind_text(1, run.pipeline);
    stmt->bind_int(2, static_cast<std::int64_t>(std::max<std::size_t>(keep, 1)));
    stmt->step();
  }
  transaction.commit();
}

std::vector<RunRecord> SqliteStore::runs(std::string_view pipeline, std::size_t last) {
  std::lock_guard lock(state_->mutex);
  auto stmt = state_->db.cached(
      "SELECT run_id, pipeline, command_line, window, started, finished, state, partitions, "
      "succeeded, failed, skipped FROM runs WHERE ?1 = '' OR pipeline = ?1 ORDER BY id DESC "
      "LIMIT ?2");
  stmt->bind_text(1, pipeline, false);
  stmt->bind_int(2, static_cast<std::int64_t>(std::min<std::size_t>(last, INT64_MAX)));
  std::vector<RunRecord> out;
  while (stmt->step()) {
    RunRecord r;
    r.run_id = stmt->column_text(0);
    r.pipeline = stmt->column_text(1);
    r.command_line = stmt->column_text(2);
    r.window = stmt->column_text(3);
    r.started = TimePoint::parse(stmt->column_text(4));
    r.finished = TimePoint::parse(stmt->column_text(5));
    const std::string state = stmt->column_text(6);
    r.state = state == "succeeded"     ? RunState::succeeded
              : state == "failed"      ? RunState::failed
              : state == "interrupted" ? RunState::interrupted
                                       : RunState::running;
    r.partitions = stmt->column_int(7);
    r.succeeded = stmt->column_int(8);
    r.failed = stmt->column_int(9);
    r.skipped = stmt->column_int(10);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<std::string> store_file(std::string_view path) {
  if (path == "memory://" || path == "memory:") return std::nullopt;
  auto fail = [&](std::string_view why) {
    throw DestinationError(
        fmt::format("store '{}': {} (write a path, sqlite:///absolute/path.db, "
                    "sqlite:relative/path.db, postgresql://... or memory://)",
                    path, why));
  };
  std::string_view file = path;
  // A scheme is letters, digits, '+', '-' and '.' before a ':', starting with a letter.
  std::size_t colon = file.find(':');
  bool scheme = colon != std::string_view::npos && colon > 0 &&
                std::isalpha(static_cast<unsigned char>(file[0])) != 0;
  for (std::size_t i = 0; scheme && i < colon; ++i) {
    const char c = file[i];
    scheme = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
  }
  if (scheme) {
    const std::string_view name = file.substr(0, colon);
    if (name == "postgresql" || name == "postgres") fail("a server's URL names no file");
    if (name != "sqlite") fail(fmt::format("unknown scheme '{}'", name));
    file.remove_prefix(colon + 1);
    if (file.rfind("//", 0) == 0) {
      file.remove_prefix(2);
      if (!file.empty() && file[0] != '/' && file[0] != '.') {
        fail(fmt::format("'{}' would be a host", file.substr(0, file.find('/'))));
      }
    }
  }
  if (file.empty()) fail("no path");
  return std::string(file);
}

namespace {
bool is_server_url(std::string_view path) {
  return path.rfind("postgresql://", 0) == 0 || path.rfind("postgres://", 0) == 0;
}
}  // namespace

std::unique_ptr<MaterializationStore> open_store(std::string_view path) {
  if (is_server_url(path)) return std::make_unique<PostgresStore>(path);
  std::optional<std::string> file = store_file(path);
  if (!file) return std::make_unique<MemoryStore>();
  return std::make_unique<SqliteStore>(*file);
}

std::unique_ptr<MaterializationStore> open_store_read_only(std::string_view path) {
  // A server enforces its own permissions; only a file needs opening read-only.
  if (is_server_url(path)) return std::make_unique<PostgresStore>(path);
  std::optional<std::string> file = store_file(path);
  if (!file) return std::make_unique<MemoryStore>();
  try {
    return std::make_unique<SqliteStore>(*file, true);
  } catch (const NotYetAStore&) {
    return std::make_unique<MemoryStore>();  // being created by a writer: nothing stored yet
  }
}

}  // namespace interloper
