// SqlStore's claims on partitions and its run history.
#include <algorithm>
#include <climits>

#include "interloper/store/sql_store_state.hpp"

namespace interloper {

using sql::Transaction;

namespace {

// The claim of another owner in the way of `claim` on `window` of `datasets`, if any. In a
// transaction holding the claims' lock.
std::optional<Claim> held(detail::SqlStoreState& s, const std::vector<DatasetRef>& datasets,
                          const PartitionWindow* window, const Claim& claim, TimePoint now) {
  const auto [scope, spans] = detail::claim_spans(window);
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : spans) {
      if (auto other = s.held_by_other(dataset, scope, span, claim.owner, now)) return other;
    }
  }
  return std::nullopt;
}

// Takes `claim` on `window` of `datasets`, replacing the owner's own claims there.
void take(detail::SqlStoreState& s, const std::vector<DatasetRef>& datasets,
          const PartitionWindow* window, const Claim& claim) {
  const auto [scope, spans] = detail::claim_spans(window);
  const std::string holder_column = s.db().dialect().quote(s.engine->holder_column());
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : spans) {
      s.drop_own(dataset, scope, span, claim.owner);
      std::vector<Value> params{dataset.source, dataset.asset,
                                scope,          span.key,
                                span.first,     span.last,
                                claim.owner,    claim.expires.seconds().time_since_epoch().count()};
      const std::string holder = s.engine->holder(params);
      s.run("INSERT INTO " + s.t("claims") +
                " (source, asset, scope, key, first, last, owner, expires, " + holder_column +
                ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, " + holder + ")",
            params);
    }
  }
}

// Gives up `owner`'s claims on `window` of `datasets`.
void give_up(detail::SqlStoreState& s, const std::vector<DatasetRef>& datasets,
             const PartitionWindow* window, std::string_view owner) {
  const auto [scope, spans] = detail::claim_spans(window);
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : spans) s.drop_own(dataset, scope, span, owner);
  }
}

// Begins a change of the claims: their lock, and the lapsed ones deleted.
void begin_claims(detail::SqlStoreState& s, TimePoint now) {
  s.lock("claims", "");  // all or nothing across processes
  s.run("DELETE FROM " + s.t("claims") + " WHERE expires <= ?",
        {now.seconds().time_since_epoch().count()});
  s.engine->drop_gone_holders(s);
}

}  // namespace

std::optional<Claim> SqlStore::claim(const std::vector<DatasetRef>& datasets,
                                     const PartitionWindow* window, const Claim& claim,
                                     TimePoint now) {
  detail::SqlStoreState& s = state();
  std::lock_guard lock(s.mutex);
  Transaction tx(s.db());
  begin_claims(s, now);
  if (auto other = held(s, datasets, window, claim, now)) {
    tx.commit();  // keep the lapsed claims' removal
    return other;
  }
  take(s, datasets, window, claim);
  tx.commit();
  s.engine->claimed(claim.owner);
  return std::nullopt;
}

std::vector<std::optional<Claim>> SqlStore::claim_all(const std::vector<ClaimRequest>& requests,
                                                      const Claim& claim, TimePoint now) {
  std::vector<std::optional<Claim>> out;
  if (requests.empty()) return out;
  detail::SqlStoreState& s = state();
  std::lock_guard lock(s.mutex);
  Transaction tx(s.db());
  begin_claims(s, now);
  bool any = false;
  for (const ClaimRequest& r : requests) {
    out.push_back(held(s, r.datasets, r.window.get(), claim, now));
    if (out.back()) continue;
    take(s, r.datasets, r.window.get(), claim);
    any = true;
  }
  tx.commit();
  if (any) s.engine->claimed(claim.owner);
  return out;
}

void SqlStore::release(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
                       std::string_view owner) {
  detail::SqlStoreState& s = state();
  std::lock_guard lock(s.mutex);
  Transaction tx(s.db());
  s.lock("claims", "");
  give_up(s, datasets, window, owner);
  tx.commit();
}

void SqlStore::release_all(const std::vector<ClaimRequest>& requests, std::string_view owner) {
  if (requests.empty()) return;
  detail::SqlStoreState& s = state();
  std::lock_guard lock(s.mutex);
  Transaction tx(s.db());
  s.lock("claims", "");
  for (const ClaimRequest& r : requests) give_up(s, r.datasets, r.window.get(), owner);
  tx.commit();
}

void SqlStore::renew(std::string_view owner, TimePoint expires) {
  detail::SqlStoreState& s = state();
  std::lock_guard lock(s.mutex);
  // The holder is stamped again: a run whose session was replaced keeps its claims.
  std::vector<Value> params{expires.seconds().time_since_epoch().count()};
  const std::string holder = s.engine->holder(params);
  params.emplace_back(std::string(owner));
  s.run("UPDATE " + s.t("claims") + " SET expires = ?, " +
            s.db().dialect().quote(s.engine->holder_column()) + " = " + holder + " WHERE owner = ?",
        params);
}

void SqlStore::record_run(const RunRecord& run, std::size_t keep) {
  detail::SqlStoreState& s = state();
  std::lock_guard lock(s.mutex);
  Transaction tx(s.db());
  s.lock("runs", run.pipeline);
  s.upsert("runs",
           {"run_id", "pipeline", "command_line", "window", "started", "finished", "state",
            "partitions", "succeeded", "failed", "skipped", "canceled"},
           1,
           {run.run_id, run.pipeline, run.command_line, run.window, run.started.to_string(),
            run.finished.to_string(), std::string(run_state_name(run.state)), run.partitions,
            run.succeeded, run.failed, run.skipped, run.canceled});
  const std::string runs = s.t("runs");
  s.run("DELETE FROM " + runs + " WHERE pipeline = ? AND id NOT IN (SELECT id FROM " + runs +
            " WHERE pipeline = ? ORDER BY id DESC LIMIT ?)",
        {run.pipeline, run.pipeline, static_cast<std::int64_t>(std::max<std::size_t>(keep, 1))});
  tx.commit();
}

std::vector<RunRecord> SqlStore::runs(std::string_view pipeline, std::size_t last) {
  detail::SqlStoreState& s = state();
  std::lock_guard lock(s.mutex);
  // A SQLite file of version 7 and earlier, opened read-only, counted no canceled tasks.
  const Table rows = s.query(
      std::string("SELECT run_id, pipeline, command_line, ") + s.db().dialect().quote("window") +
          ", started, finished, state, partitions, succeeded, failed, skipped, " +
          (s.has_run_canceled ? "canceled" : "0") + " FROM " + s.t("runs") +
          " WHERE ? = '' OR pipeline = ? ORDER BY id DESC LIMIT ?",
      {std::string(pipeline), std::string(pipeline),
       static_cast<std::int64_t>(std::min<std::size_t>(last, INT64_MAX))});
  std::vector<RunRecord> out;
  for (std::size_t i = 0; i < rows.num_rows(); ++i) {
    RunRecord r;
    r.run_id = detail::text_at(rows, i, 0);
    r.pipeline = detail::text_at(rows, i, 1);
    r.command_line = detail::text_at(rows, i, 2);
    r.window = detail::text_at(rows, i, 3);
    r.started = TimePoint::parse(detail::text_at(rows, i, 4));
    r.finished = TimePoint::parse(detail::text_at(rows, i, 5));
    r.state = run_state_from(detail::text_at(rows, i, 6));
    r.partitions = detail::int_at(rows, i, 7);
    r.succeeded = detail::int_at(rows, i, 8);
    r.failed = detail::int_at(rows, i, 9);
    r.skipped = detail::int_at(rows, i, 10);
    r.canceled = detail::int_at(rows, i, 11);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace interloper
