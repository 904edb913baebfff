// The statements of the SQL state store, the same on every engine: ranges, keys, failures, the
// last record per dataset and the claims in the way.
#include <fmt/format.h>

#include <algorithm>

#include "interloper/store/sql_store_state.hpp"

namespace interloper::detail {

namespace {

// `sql` with every `?` outside quoted text and identifiers written as `dialect`'s placeholder.
std::string with_placeholders(std::string_view sql, const sql::Dialect& dialect) {
  std::string out;
  out.reserve(sql.size() + 16);
  std::size_t index = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '?') {
      out += dialect.placeholder(++index);
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::int64_t int_at(const Table& rows, std::size_t row, std::size_t column) {
  const Value& v = rows.column(column)[row];
  return v.is_null() ? 0 : v.as_int();
}

std::string text_at(const Table& rows, std::size_t row, std::size_t column) {
  const Value& v = rows.column(column)[row];
  return v.is_null() ? std::string() : v.as_string();
}

Cell cell_at(const Table& rows, std::size_t row, std::size_t at) {
  return {status_from(rows.column(at)[row]), int_at(rows, row, at + 1), text_at(rows, row, at + 2)};
}

MaterializationRecord outcome_at(const Table& rows, std::size_t row, std::size_t at,
                                 std::string asset, MaterializationStatus status) {
  MaterializationRecord r;
  r.asset = std::move(asset);
  r.status = status;
  r.rows = int_at(rows, row, at);
  r.run_id = text_at(rows, row, at + 1);
  r.started = TimePoint::parse(text_at(rows, row, at + 2));
  r.finished = TimePoint::parse(text_at(rows, row, at + 3));
  r.error = text_at(rows, row, at + 4);
  return r;
}

Table SqlStoreState::query(std::string_view sql, const std::vector<Value>& params) {
  sql::SqlSession& session = db();
  return session.query(with_placeholders(sql, session.dialect()), params);
}

std::int64_t SqlStoreState::run(std::string_view sql, const std::vector<Value>& params) {
  sql::SqlSession& session = db();
  return session.run(with_placeholders(sql, session.dialect()), params);
}

// Upserts come with the dialect's placeholders: they go to the session as they are.
void SqlStoreState::upsert(std::string_view table, const std::vector<std::string>& columns,
                           std::size_t keys, const std::vector<Value>& params) {
  sql::SqlSession& session = db();
  session.run(session.dialect().upsert(t(table), columns, keys), params);
}

void SqlStoreState::lock(std::string_view table, std::string key) {
  const std::string keys[] = {std::move(key)};
  db().lock(t(table), keys);
}

// The ranges of one scope never overlap, so only the last range starting at or before `first`
// can reach into the span from the left; the primary key finds it and the ones starting inside
// directly.
std::vector<Range> SqlStoreState::overlapping(const DatasetRef& dataset, const std::string& scope,
                                              std::int64_t first, std::int64_t last) {
  const std::string ranges = t("partition_ranges");
  const Table rows = query(
      "SELECT first, last, status, failure, definition FROM " + ranges +
          " WHERE source = ? AND asset = ? AND scope = ? AND first >= coalesce((SELECT max(first) "
          "FROM " +
          ranges +
          " WHERE source = ? AND asset = ? AND scope = ? AND first <= ?), ?) AND first <= ? AND "
          "last >= ? ORDER BY first",
      {dataset.source, dataset.asset, scope, dataset.source, dataset.asset, scope, first, first,
       last, first});
  std::vector<Range> out;
  for (std::size_t i = 0; i < rows.num_rows(); ++i) {
    out.push_back({int_at(rows, i, 0), int_at(rows, i, 1), cell_at(rows, i, 2)});
  }
  return out;
}

std::int64_t SqlStoreState::insert_failure(const MaterializationRecord& r) {
  const Table id = query("INSERT INTO " + t("failures") +
                             " (asset_name, rows, run_id, started, finished, error) VALUES "
                             "(?, ?, ?, ?, ?, ?) RETURNING id",
                         {r.asset, r.rows, r.run_id, r.started.to_string(),
                          r.finished.to_string(), bound_error(r.error)});
  return int_at(id, 0, 0);
}

void SqlStoreState::set_last_record(const DatasetRef& dataset, const MaterializationRecord& r) {
  upsert("last_records",
         {"source", "asset", "status", "rows", "run_id", "started", "finished", "error"}, 2,
      {dataset.source, dataset.asset, status_text(r.status), r.rows, r.run_id,
       r.started.to_string(), r.finished.to_string(), bound_error(r.error)});
}

Cell SqlStoreState::cell_for(const MaterializationRecord& r) {
  if (r.status == MaterializationStatus::materialized) return {r.status, 0, r.definition};
  return {r.status, insert_failure(r), ""};
}

void SqlStoreState::drop_unreferenced(const std::vector<std::int64_t>& failures) {
  const std::string sql = "DELETE FROM " + t("failures") +
                          " WHERE id = ? AND NOT EXISTS (SELECT 1 FROM " + t("partition_ranges") +
                          " WHERE failure = ?) AND NOT EXISTS (SELECT 1 FROM " +
                          t("partition_keys") + " WHERE failure = ?)";
  for (std::int64_t id : failures) run(sql, {id, id, id});
}

std::optional<MaterializationRecord> SqlStoreState::failure(std::int64_t id) {
  const Table rows = query("SELECT asset_name, rows, run_id, started, finished, error FROM " +
                               t("failures") + " WHERE id = ?",
                           {id});
  if (rows.num_rows() == 0) return std::nullopt;
  return outcome_at(rows, 0, 1, text_at(rows, 0, 0), MaterializationStatus::failed);
}

MaterializationRecord SqlStoreState::record_of(std::string_view asset, const Cell& cell) {
  if (cell.failure != 0) {
    if (auto r = failure(cell.failure)) return *r;
  }
  MaterializationRecord r;
  r.asset = std::string(asset);
  r.status = cell.status;
  r.definition = cell.definition;
  return r;
}

namespace {
Value failure_value(const Cell& cell) { return cell.failure == 0 ? Value() : Value(cell.failure); }
}  // namespace

void SqlStoreState::insert_range(const DatasetRef& dataset, const std::string& scope,
                                 const Range& range) {
  run("INSERT INTO " + t("partition_ranges") +
          " (source, asset, scope, first, last, status, failure, definition) VALUES (?, ?, ?, ?, "
          "?, ?, ?, ?)",
      {dataset.source, dataset.asset, scope, range.first, range.last,
       status_text(range.cell.status), failure_value(range.cell), range.cell.definition});
}

void SqlStoreState::assign_range(const DatasetRef& dataset, const std::string& scope,
                                 std::int64_t first, std::int64_t last,
                                 const std::optional<Cell>& cell) {
  // The touching neighbours too: they may merge with the new range.
  const std::vector<Range> old = overlapping(dataset, scope, first - 1, last + 1);
  std::optional<Range> left;
  std::optional<Range> right;
  std::vector<std::int64_t> failures;
  const std::string del = "DELETE FROM " + t("partition_ranges") +
                          " WHERE source = ? AND asset = ? AND scope = ? AND first = ?";
  for (const Range& r : old) {
    run(del, {dataset.source, dataset.asset, scope, r.first});
    if (r.cell.failure != 0) failures.push_back(r.cell.failure);
    if (r.first < first) left = Range{r.first, std::min(r.last, first - 1), r.cell};
    if (r.last > last) right = Range{std::max(r.first, last + 1), r.last, r.cell};
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
  if (left) insert_range(dataset, scope, *left);
  if (cell) insert_range(dataset, scope, merged);
  if (right) insert_range(dataset, scope, *right);
  drop_unreferenced(failures);
}

std::int64_t SqlStoreState::assign_key(const DatasetRef& dataset, const std::string& scope,
                                       const std::string& key, const Cell& cell) {
  const std::optional<Cell> before = key_cell(dataset, scope, key);
  upsert("partition_keys",
         {"source", "asset", "scope", "key", "status", "failure", "definition"}, 4,
      {dataset.source, dataset.asset, scope, key, status_text(cell.status), failure_value(cell),
       cell.definition});
  return before ? before->failure : 0;
}

std::optional<Cell> SqlStoreState::key_cell(const DatasetRef& dataset, const std::string& scope,
                                            const std::string& key) {
  const Table rows = query("SELECT status, failure, definition FROM " + t("partition_keys") +
                               " WHERE source = ? AND asset = ? AND scope = ? AND key = ?",
                           {dataset.source, dataset.asset, scope, key});
  if (rows.num_rows() == 0) return std::nullopt;
  return cell_at(rows, 0, 0);
}

std::optional<Claim> SqlStoreState::held_by_other(const DatasetRef& dataset,
                                                  const std::string& scope, const ClaimSpan& span,
                                                  std::string_view owner, TimePoint now) {
  const std::string holder = std::string(engine->holder_column());
  const Table rows =
      query("SELECT owner, expires, " + db().dialect().quote(holder) + " FROM " + t("claims") +
                " WHERE source = ? AND asset = ? AND scope = ? AND key = ? AND first <= ? AND "
                "last >= ? AND owner <> ? AND expires > ?",
            {dataset.source, dataset.asset, scope, span.key, span.last, span.first,
             std::string(owner), now.seconds().time_since_epoch().count()});
  for (std::size_t i = 0; i < rows.num_rows(); ++i) {
    Claim claim{text_at(rows, i, 0), TimePoint::from_epoch_seconds(int_at(rows, i, 1))};
    const std::string token = text_at(rows, i, 2);
    if (std::optional<std::string> why = engine->holding(token, claim)) {
      claim.holder = std::move(*why);
      return claim;
    }
    run("DELETE FROM " + t("claims") + " WHERE " + db().dialect().quote(holder) + " = ?",
        {token});
  }
  return std::nullopt;
}

void SqlStoreState::drop_own(const DatasetRef& dataset, const std::string& scope,
                             const ClaimSpan& span, std::string_view owner) {
  run("DELETE FROM " + t("claims") +
          " WHERE source = ? AND asset = ? AND scope = ? AND key = ? AND first <= ? AND last >= ? "
          "AND owner = ?",
      {dataset.source, dataset.asset, scope, span.key, span.last, span.first,
       std::string(owner)});
}

}  // namespace interloper::detail
