// SqliteStore: bringing files of earlier versions up to the current tables.
#include "interloper/store/sqlite_store_state.hpp"

namespace interloper {

void SqliteStore::State::add_column(std::string_view table, std::string_view column,
                                    std::string_view definition) {
  Statement columns(db, "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2");
  columns.bind_text(1, table, false);
  columns.bind_text(2, column, false);
  if (columns.step() && columns.column_int(0) == 0) {
    db.exec(fmt::format("ALTER TABLE {} ADD COLUMN {} {}", sql::quote_identifier(table),
                        sql::quote_identifier(column), definition)
                .c_str());
  }
}

void SqliteStore::State::migrate_from_records() {
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
      assign_key(rows.column_text(0), rows.column_text(1), rows.column_text(2), rows.column_text(3),
                 cell_for(r));
    }
  }
  if (old_ranges) db.exec("DROP TABLE materialization_ranges");
  if (old_keys) db.exec("DROP TABLE materialization_keys");
}

}  // namespace interloper
