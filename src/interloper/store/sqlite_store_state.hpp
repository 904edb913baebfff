// SqliteStore's connection and the statements behind it, private to the run layer: the store's
// files see these helpers unqualified.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "interloper/store/owner_process.hpp"
#include "interloper/store/range_map.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/store.hpp"

namespace interloper {

namespace detail::sqlite_store_rows {

using sqlite::Statement;

using detail::Scope;
using detail::scope_of;

inline const char* status_text(MaterializationStatus s) {
  return s == MaterializationStatus::materialized ? "materialized" : "failed";
}

inline MaterializationStatus status_from(const std::string& text) {
  return text == "failed" ? MaterializationStatus::failed : MaterializationStatus::materialized;
}

// A record whose rows, run id, start, finish and error are the columns `first` to `first + 4`
// of the row `stmt` stands on.
inline MaterializationRecord outcome_at(Statement& stmt, int first, std::string asset,
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
inline void bind_dataset(Statement& stmt, std::string_view source, std::string_view asset,
                         const std::string& scope) {
  stmt.bind_text(1, source, false);
  stmt.bind_text(2, asset, false);
  stmt.bind_text(3, scope, false);
}

inline void bind_cell(Statement& stmt, int at, const Cell& cell) {
  stmt.bind_text(at, status_text(cell.status), false);
  if (cell.failure == 0) {
    stmt.bind_null(at + 1);
  } else {
    stmt.bind_int(at + 1, cell.failure);
  }
  stmt.bind_text(at + 2, cell.definition, false);
}

inline Cell cell_from(Statement& stmt, int at) {
  return {status_from(stmt.column_text(at)),
          stmt.column_is_null(at + 1) ? 0 : stmt.column_int(at + 1), stmt.column_text(at + 2)};
}

constexpr int kSchemaVersion = 8;

// Thrown when a store opened read-only holds nothing yet: a writer has created the file and
// not yet committed its tables. A reader sees such a store as empty.
struct NotYetAStore : DestinationError {
  using DestinationError::DestinationError;
};

}  // namespace detail::sqlite_store_rows

using namespace detail::sqlite_store_rows;

struct SqliteStore::State {
  State(std::string p, bool read_only)
      : path(std::move(p)),
        db(path,
           read_only ? sqlite::Database::Mode::read_only : sqlite::Database::Mode::read_write) {
    if (schema_version() == kSchemaVersion) return;
    if (read_only && schema_version() >= 5 && schema_version() < kSchemaVersion) {
      // Version 5 lacks the last record per dataset, version 6 also the process of each claim,
      // version 7 only the canceled count of each run: readers take them as they are.
      has_last_records = schema_version() >= 6;
      has_run_canceled = false;
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
        " expires INTEGER NOT NULL, process TEXT NOT NULL DEFAULT '');"
        "CREATE INDEX IF NOT EXISTS claims_partition ON claims (source, asset, scope, key, first);"
        "CREATE INDEX IF NOT EXISTS claims_owner ON claims (owner);"
        "CREATE TABLE IF NOT EXISTS runs ("
        " id INTEGER PRIMARY KEY, run_id TEXT NOT NULL UNIQUE, pipeline TEXT NOT NULL,"
        " command_line TEXT NOT NULL, window TEXT NOT NULL, started TEXT NOT NULL,"
        " finished TEXT NOT NULL, state TEXT NOT NULL, partitions INTEGER NOT NULL,"
        " succeeded INTEGER NOT NULL, failed INTEGER NOT NULL, skipped INTEGER NOT NULL,"
        " canceled INTEGER NOT NULL DEFAULT 0);"
        "CREATE INDEX IF NOT EXISTS runs_pipeline ON runs (pipeline, id);"
        "CREATE TABLE IF NOT EXISTS last_records ("
        " source TEXT NOT NULL, asset TEXT NOT NULL, status TEXT NOT NULL, rows INTEGER NOT NULL,"
        " run_id TEXT NOT NULL, started TEXT NOT NULL, finished TEXT NOT NULL,"
        " error TEXT NOT NULL, PRIMARY KEY (source, asset)) WITHOUT ROWID;");
    // Files of version 4 kept no definitions: their partitions get "" (unknown, never stale).
    add_column("partition_ranges", "definition", "TEXT NOT NULL DEFAULT ''");
    add_column("partition_keys", "definition", "TEXT NOT NULL DEFAULT ''");
    // Files of version 6 did not record the process of a claim: "" (unknown, lapses by lease).
    add_column("claims", "process", "TEXT NOT NULL DEFAULT ''");
    // Files of version 7 did not count the canceled tasks of a run: 0.
    add_column("runs", "canceled", "INTEGER NOT NULL DEFAULT 0");
    migrate_from_records();
    db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str());
    transaction.commit();
  }

  std::string path;
  sqlite::Database db;
  std::mutex mutex;
  bool has_last_records = true;
  bool has_run_canceled = true;

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

  // The live claim of another owner overlapping `span`, if any. Claims of a process found dead
  // are deleted on the way (all of that process's claims): they are taken over at once.
  std::optional<Claim> held_by_other(const DatasetRef& dataset, const std::string& scope,
                                     const detail::ClaimSpan& span, std::string_view owner,
                                     TimePoint now) {
    std::vector<std::pair<Claim, std::string>> found;  // each claim in the way, with its process
    {
      auto stmt_lease = db.cached(
          "SELECT owner, expires, process FROM claims WHERE source = ?1 AND asset = ?2 AND "
          "scope = ?3 AND key = ?4 AND first <= ?6 AND last >= ?5 AND owner != ?7 AND "
          "expires > ?8");
      Statement& stmt = *stmt_lease;
      bind_claim(stmt, dataset, scope, span, owner);
      stmt.bind_int(8, now.seconds().time_since_epoch().count());
      while (stmt.step()) {
        found.push_back(
            {Claim{stmt.column_text(0), TimePoint::from_epoch_seconds(stmt.column_int(1))},
             stmt.column_text(2)});
      }
    }
    for (auto& [claim, process] : found) {
      switch (detail::process_state(process)) {
        case detail::ProcessState::dead: {
          auto drop = db.cached("DELETE FROM claims WHERE process = ?");
          drop->bind_text(1, process, false);
          drop->step();
          break;
        }
        case detail::ProcessState::running:
          claim.holder = "its " + detail::process_words(process) + " is running";
          return claim;
        case detail::ProcessState::unknown:
          claim.holder =
              fmt::format("its process cannot be checked from here ({}); the claim lapses at {}",
                          process.empty() ? "not recorded" : detail::process_words(process),
                          claim.expires.to_string());
          return claim;
      }
    }
    return std::nullopt;
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

  // Adds `column` to `table` (a file of an earlier version), unless it is there.
  void add_column(std::string_view table, std::string_view column, std::string_view definition);
  // Converts the tables of the first file format (one row per record, every row carrying its
  // record) into states, then drops them. Runs inside the opening transaction.
  void migrate_from_records();
};

}  // namespace interloper
