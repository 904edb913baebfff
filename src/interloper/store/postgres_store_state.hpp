// PostgresStore's connection and the statements behind it, private to the run layer: the
// store's files see these helpers unqualified.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "interloper/postgres/postgres.hpp"
#include "interloper/store/range_map.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/store.hpp"

namespace interloper {

namespace detail::postgres_store_rows {

using detail::Scope;
using detail::scope_of;
using postgres::Params;
using postgres::Result;

inline const char* status_text(MaterializationStatus s) {
  return s == MaterializationStatus::materialized ? "materialized" : "failed";
}

inline MaterializationStatus status_from(std::string_view text) {
  return text == "failed" ? MaterializationStatus::failed : MaterializationStatus::materialized;
}

struct Cell {
  MaterializationStatus status = MaterializationStatus::materialized;
  std::int64_t failure = 0;
  std::string definition;  // of a materialized partition: its asset's definition fingerprint
  friend bool operator==(const Cell&, const Cell&) = default;
};

struct Range {
  std::int64_t first = 0;
  std::int64_t last = 0;
  Cell cell;
};

inline void put_int(Params& p, std::int64_t v) { p.text(std::to_string(v), postgres::oid::int8); }

// (source, asset, scope) as $1..$3, the start of most statements' parameters.
inline Params dataset_params(std::string_view source, std::string_view asset,
                             const std::string& scope) {
  Params p;
  p.text(std::string(source), postgres::oid::text);
  p.text(std::string(asset), postgres::oid::text);
  p.text(scope, postgres::oid::text);
  return p;
}

inline void put_cell(Params& p, const Cell& cell) {
  p.text(status_text(cell.status), postgres::oid::text);
  if (cell.failure == 0) {
    p.null(postgres::oid::int8);
  } else {
    put_int(p, cell.failure);
  }
  p.text(cell.definition, postgres::oid::text);
}

inline Cell cell_from(const Result& r, int row, int at) {
  return {status_from(r.value(row, at)), r.is_null(row, at + 1) ? 0 : r.int_value(row, at + 1),
          std::string(r.value(row, at + 2))};
}

}  // namespace detail::postgres_store_rows

using namespace detail::postgres_store_rows;

struct PostgresStore::State {
  explicit State(std::string_view text)
      : url(postgres::parse_url(text, {"schema"})), schema(url.get("schema", "public")) {
    if (schema.empty()) {
      throw DestinationError(fmt::format("postgresql URL '{}': schema is empty", url.redacted));
    }
    shared_url = std::make_shared<const postgres::Url>(url);
    conn = std::make_unique<postgres::Connection>(shared_url);
    create_tables();
  }

  postgres::Url url;
  std::string schema;
  std::shared_ptr<const postgres::Url> shared_url;
  std::unique_ptr<postgres::Connection> conn;
  std::mutex mutex;
  std::vector<std::string> owners;  // whose claims this store took: stamped again on reconnect

  // The session that runs a claim's owner, as `backend` records it: the server process and its
  // start, so that a process id the server uses again names another session.
  static constexpr const char* kSession =
      "(SELECT pid::text || ' ' || extract(epoch FROM backend_start)::text FROM "
      "pg_stat_activity WHERE pid = pg_backend_pid())";

  std::string t(const char* name) const {
    return sql::quote_identifier(schema) + "." +
           sql::quote_identifier(std::string("interloper_") + name);
  }

  // The connection, opened again when the server went away since the last use.
  postgres::Connection& db() {
    if (conn->ok()) return *conn;
    conn = std::make_unique<postgres::Connection>(shared_url);
    // A run outliving its session (the server restarted) still holds its claims.
    for (const std::string& owner : owners) {
      Params p;
      p.text(owner, postgres::oid::text);
      conn->exec("UPDATE " + t("claims") + " SET backend = " + kSession + " WHERE owner = $1", p);
    }
    return *conn;
  }

  void create_tables() {
    postgres::Transaction tx(*conn);
    Params lock;
    lock.text("interloper store " + schema);
    conn->exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
    conn->exec(fmt::format(
        "CREATE SCHEMA IF NOT EXISTS {schema};"
        "CREATE TABLE IF NOT EXISTS {failures} (id bigserial PRIMARY KEY, asset_name text NOT "
        "NULL, rows bigint NOT NULL, run_id text NOT NULL, started text NOT NULL, finished text "
        "NOT NULL, error text NOT NULL);"
        "CREATE TABLE IF NOT EXISTS {ranges} (source text NOT NULL, asset text NOT NULL, scope "
        "text NOT NULL, first bigint NOT NULL, last bigint NOT NULL, status text NOT NULL, "
        "failure bigint, PRIMARY KEY (source, asset, scope, first));"
        "CREATE INDEX IF NOT EXISTS interloper_ranges_failure ON {ranges} (failure) WHERE "
        "failure IS NOT NULL;"
        "CREATE TABLE IF NOT EXISTS {keys} (source text NOT NULL, asset text NOT NULL, scope "
        "text NOT NULL, key text NOT NULL, status text NOT NULL, failure bigint, PRIMARY KEY "
        "(source, asset, scope, key));"
        "CREATE INDEX IF NOT EXISTS interloper_keys_failure ON {keys} (failure) WHERE failure "
        "IS NOT NULL;"
        "CREATE TABLE IF NOT EXISTS {claims} (source text NOT NULL, asset text NOT NULL, scope "
        "text NOT NULL, key text NOT NULL, first bigint NOT NULL, last bigint NOT NULL, owner "
        "text NOT NULL, expires bigint NOT NULL);"
        "CREATE INDEX IF NOT EXISTS interloper_claims_partition ON {claims} (source, asset, "
        "scope, key, first);"
        "CREATE INDEX IF NOT EXISTS interloper_claims_owner ON {claims} (owner);"
        "CREATE TABLE IF NOT EXISTS {runs} (id bigserial PRIMARY KEY, run_id text NOT NULL "
        "UNIQUE, pipeline text NOT NULL, command_line text NOT NULL, \"window\" text NOT NULL, "
        "started text NOT NULL, finished text NOT NULL, state text NOT NULL, partitions bigint "
        "NOT NULL, succeeded bigint NOT NULL, failed bigint NOT NULL, skipped bigint NOT NULL);"
        "CREATE INDEX IF NOT EXISTS interloper_runs_pipeline ON {runs} (pipeline, id);"
        "CREATE TABLE IF NOT EXISTS {last} (source text NOT NULL, asset text NOT NULL, status "
        "text NOT NULL, rows bigint NOT NULL, run_id text NOT NULL, started text NOT NULL, "
        "finished text NOT NULL, error text NOT NULL, PRIMARY KEY (source, asset));"
        // Stores created before definitions were kept: "" is an unknown definition.
        "ALTER TABLE {ranges} ADD COLUMN IF NOT EXISTS definition text NOT NULL DEFAULT '';"
        "ALTER TABLE {keys} ADD COLUMN IF NOT EXISTS definition text NOT NULL DEFAULT '';"
        // Stores created before claims named their session: "" is unknown, lapses by lease.
        "ALTER TABLE {claims} ADD COLUMN IF NOT EXISTS backend text NOT NULL DEFAULT '';"
        // Stores created before runs counted their canceled tasks: 0.
        "ALTER TABLE {runs} ADD COLUMN IF NOT EXISTS canceled bigint NOT NULL DEFAULT 0",
        fmt::arg("schema", sql::quote_identifier(schema)), fmt::arg("failures", t("failures")),
        fmt::arg("ranges", t("partition_ranges")), fmt::arg("keys", t("partition_keys")),
        fmt::arg("claims", t("claims")), fmt::arg("runs", t("runs")),
        fmt::arg("last", t("last_records"))));
    tx.commit();
  }

  // Serializes the read-modify-write of one dataset scope (or of all claims) across processes.
  void lock(std::string_view what) {
    Params p;
    p.text(std::string(what), postgres::oid::text);
    db().exec("SELECT pg_advisory_xact_lock(hashtext($1))", p);
  }

  std::vector<Range> overlapping(std::string_view source, std::string_view asset,
                                 const std::string& scope, std::int64_t first, std::int64_t last) {
    Params p = dataset_params(source, asset, scope);
    put_int(p, first);
    put_int(p, last);
    Result r = db().exec(
        "SELECT first, last, status, failure, definition FROM " + t("partition_ranges") +
            " WHERE source = $1 AND asset = $2 AND scope = $3 AND first >= coalesce((SELECT "
            "max(first) FROM " +
            t("partition_ranges") +
            " WHERE source = $1 AND asset = $2 AND scope = $3 AND first <= $4), $4) AND first <= "
            "$5 AND last >= $4 ORDER BY first",
        p);
    std::vector<Range> out;
    for (int i = 0; i < r.rows(); ++i)
      out.push_back({r.int_value(i, 0), r.int_value(i, 1), cell_from(r, i, 2)});
    return out;
  }

  void set_last_record(const DatasetRef& dataset, const MaterializationRecord& rec) {
    Params p;
    p.text(dataset.source, postgres::oid::text);
    p.text(dataset.asset, postgres::oid::text);
    p.text(status_text(rec.status), postgres::oid::text);
    put_int(p, rec.rows);
    p.text(rec.run_id, postgres::oid::text);
    p.text(rec.started.to_string(), postgres::oid::text);
    p.text(rec.finished.to_string(), postgres::oid::text);
    p.text(bound_error(rec.error), postgres::oid::text);
    db().exec("INSERT INTO " + t("last_records") +
                  " (source, asset, status, rows, run_id, started, finished, error) VALUES ($1, "
                  "$2, $3, $4, $5, $6, $7, $8) ON CONFLICT (source, asset) DO UPDATE SET status "
                  "= $3, rows = $4, run_id = $5, started = $6, finished = $7, error = $8",
              p);
  }

  std::int64_t insert_failure(const MaterializationRecord& rec) {
    Params p;
    p.text(rec.asset, postgres::oid::text);
    put_int(p, rec.rows);
    p.text(rec.run_id, postgres::oid::text);
    p.text(rec.started.to_string(), postgres::oid::text);
    p.text(rec.finished.to_string(), postgres::oid::text);
    p.text(bound_error(rec.error), postgres::oid::text);
    return db()
        .exec("INSERT INTO " + t("failures") +
                  " (asset_name, rows, run_id, started, finished, error) VALUES ($1, $2, $3, $4, "
                  "$5, $6) RETURNING id",
              p)
        .int_value(0, 0);
  }

  Cell cell_for(const MaterializationRecord& r) {
    if (r.status == MaterializationStatus::materialized) return {r.status, 0, r.definition};
    return {r.status, insert_failure(r), ""};
  }

  void drop_unreferenced(const std::vector<std::int64_t>& failures) {
    for (std::int64_t id : failures) {
      Params p;
      put_int(p, id);
      db().exec("DELETE FROM " + t("failures") + " WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM " +
                    t("partition_ranges") + " WHERE failure = $1) AND NOT EXISTS (SELECT 1 FROM " +
                    t("partition_keys") + " WHERE failure = $1)",
                p);
    }
  }

  std::optional<MaterializationRecord> failure(std::int64_t id) {
    Params p;
    put_int(p, id);
    Result r = db().exec("SELECT asset_name, rows, run_id, started, finished, error FROM " +
                             t("failures") + " WHERE id = $1",
                         p);
    if (r.rows() == 0) return std::nullopt;
    MaterializationRecord rec;
    rec.asset = std::string(r.value(0, 0));
    rec.status = MaterializationStatus::failed;
    rec.rows = r.int_value(0, 1);
    rec.run_id = std::string(r.value(0, 2));
    rec.started = TimePoint::parse(std::string(r.value(0, 3)));
    rec.finished = TimePoint::parse(std::string(r.value(0, 4)));
    rec.error = std::string(r.value(0, 5));
    return rec;
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
    Params p = dataset_params(source, asset, scope);
    put_int(p, range.first);
    put_int(p, range.last);
    put_cell(p, range.cell);
    db().exec("INSERT INTO " + t("partition_ranges") +
                  " (source, asset, scope, first, last, status, failure, definition) VALUES ($1, "
                  "$2, $3, $4, $5, $6, $7, $8)",
              p);
  }

  // As SqliteStore: the overlapped parts of earlier ranges go, same-state neighbours merge.
  void assign_range(std::string_view source, std::string_view asset, const std::string& scope,
                    std::int64_t first, std::int64_t last, const std::optional<Cell>& cell) {
    std::vector<Range> old = overlapping(source, asset, scope, first - 1, last + 1);
    std::optional<Range> left;
    std::optional<Range> right;
    std::vector<std::int64_t> failures;
    for (const Range& r : old) {
      Params p = dataset_params(source, asset, scope);
      put_int(p, r.first);
      db().exec("DELETE FROM " + t("partition_ranges") +
                    " WHERE source = $1 AND asset = $2 AND scope = $3 AND first = $4",
                p);
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
    if (left) insert_range(source, asset, scope, *left);
    if (cell) insert_range(source, asset, scope, merged);
    if (right) insert_range(source, asset, scope, *right);
    drop_unreferenced(failures);
  }

  std::int64_t assign_key(std::string_view source, std::string_view asset, const std::string& scope,
                          const std::string& key, const Cell& cell) {
    Params p = dataset_params(source, asset, scope);
    p.text(key, postgres::oid::text);
    Result before = db().exec("SELECT failure FROM " + t("partition_keys") +
                                  " WHERE source = $1 AND asset = $2 AND scope = $3 AND key = $4",
                              p);
    put_cell(p, cell);
    db().exec("INSERT INTO " + t("partition_keys") +
                  " (source, asset, scope, key, status, failure, definition) VALUES ($1, $2, $3, "
                  "$4, $5, $6, $7) ON CONFLICT (source, asset, scope, key) DO UPDATE SET status = "
                  "excluded.status, failure = excluded.failure, definition = excluded.definition",
              p);
    return before.rows() > 0 && !before.is_null(0, 0) ? before.int_value(0, 0) : 0;
  }

  std::optional<Cell> key_cell(const DatasetRef& dataset, const std::string& scope,
                               const std::string& key) {
    Params p = dataset_params(dataset.source, dataset.asset, scope);
    p.text(key, postgres::oid::text);
    Result r = db().exec("SELECT status, failure, definition FROM " + t("partition_keys") +
                             " WHERE source = $1 AND asset = $2 AND scope = $3 AND key = $4",
                         p);
    if (r.rows() == 0) return std::nullopt;
    return cell_from(r, 0, 0);
  }

  // (source, asset, scope, key, first, last, owner) as $1..$7 of a claims statement.
  static Params claim_params(const DatasetRef& dataset, const std::string& scope,
                             const detail::ClaimSpan& span, std::string_view owner) {
    Params p = dataset_params(dataset.source, dataset.asset, scope);
    p.text(span.key, postgres::oid::text);
    put_int(p, span.first);
    put_int(p, span.last);
    p.text(std::string(owner), postgres::oid::text);
    return p;
  }

  std::optional<Claim> held_by_other(const DatasetRef& dataset, const std::string& scope,
                                     const detail::ClaimSpan& span, std::string_view owner,
                                     TimePoint now) {
    Params p = claim_params(dataset, scope, span, owner);
    put_int(p, now.seconds().time_since_epoch().count());
    Result r = db().exec("SELECT owner, expires, backend FROM " + t("claims") +
                             " WHERE source = $1 AND asset = $2 AND scope = $3 AND key = $4 AND "
                             "first <= $6 AND last >= $5 AND owner != $7 AND expires > $8 LIMIT 1",
                         p);
    if (r.rows() == 0) return std::nullopt;
    Claim held{std::string(r.value(0, 0)), TimePoint::from_epoch_seconds(r.int_value(0, 1))};
    const std::string_view backend = r.value(0, 2);
    held.holder = backend.empty() ? fmt::format(
                                        "its session cannot be checked (a claim of an earlier "
                                        "version); the claim lapses at {}",
                                        held.expires.to_string())
                                  : fmt::format(
                                        "its session with the store's server (server process {}) "
                                        "is open",
                                        backend.substr(0, backend.find(' ')));
    return held;
  }

  // Deletes the claims whose owner's session with the server is gone (the owner died, or the
  // server restarted under it): they are taken over at once.
  void drop_claims_of_closed_sessions() {
    db().exec("DELETE FROM " + t("claims") +
              " c WHERE c.backend <> '' AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE "
              "a.pid::text || ' ' || extract(epoch FROM a.backend_start)::text = c.backend)");
  }

  void drop_own(const DatasetRef& dataset, const std::string& scope, const detail::ClaimSpan& span,
                std::string_view owner) {
    db().exec("DELETE FROM " + t("claims") +
                  " WHERE source = $1 AND asset = $2 AND scope = $3 AND key = $4 AND first <= $6 "
                  "AND last >= $5 AND owner = $7",
              claim_params(dataset, scope, span, owner));
  }

  std::string scope_lock(const DatasetRef& dataset, const std::string& scope) const {
    return "interloper store " + schema + " " + dataset.source + "\x1f" + dataset.asset + "\x1f" +
           scope;
  }
  std::string claims_lock() const { return "interloper claims " + schema; }
};

}  // namespace interloper
