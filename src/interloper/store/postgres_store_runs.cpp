// PostgresStore's claims on partitions and its run history.
#include "interloper/store/postgres_store_state.hpp"

namespace interloper {

std::optional<Claim> PostgresStore::claim(const std::vector<DatasetRef>& datasets,
                                          const PartitionWindow* window, const Claim& claim,
                                          TimePoint now) {
  const auto covered = detail::claim_spans(window);
  const std::string& scope = covered.first;
  const std::vector<detail::ClaimSpan>& spans = covered.second;
  std::lock_guard lock(state_->mutex);
  postgres::Transaction tx(state_->db());
  state_->lock(state_->claims_lock());  // all or nothing across processes
  {
    Params p;
    put_int(p, now.seconds().time_since_epoch().count());
    state_->db().exec("DELETE FROM " + state_->t("claims") + " WHERE expires <= $1", p);
    state_->drop_claims_of_closed_sessions();
  }
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : spans) {
      if (auto held = state_->held_by_other(dataset, scope, span, claim.owner, now)) {
        tx.commit();  // keep the lapsed claims' removal
        return held;
      }
    }
  }
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : spans) {
      state_->drop_own(dataset, scope, span, claim.owner);
      Params p = State::claim_params(dataset, scope, span, claim.owner);
      put_int(p, claim.expires.seconds().time_since_epoch().count());
      state_->db().exec("INSERT INTO " + state_->t("claims") +
                            " (source, asset, scope, key, first, last, owner, expires, backend) "
                            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, " +
                            State::kSession + ")",
                        p);
    }
  }
  tx.commit();
  if (std::find(state_->owners.begin(), state_->owners.end(), claim.owner) ==
      state_->owners.end()) {
    state_->owners.push_back(claim.owner);
  }
  return std::nullopt;
}

void PostgresStore::release(const std::vector<DatasetRef>& datasets, const PartitionWindow* window,
                            std::string_view owner) {
  const auto covered = detail::claim_spans(window);
  std::lock_guard lock(state_->mutex);
  postgres::Transaction tx(state_->db());
  state_->lock(state_->claims_lock());
  for (const DatasetRef& dataset : datasets) {
    for (const detail::ClaimSpan& span : covered.second) {
      state_->drop_own(dataset, covered.first, span, owner);
    }
  }
  tx.commit();
}

void PostgresStore::renew(std::string_view owner, TimePoint expires) {
  std::lock_guard lock(state_->mutex);
  Params p;
  put_int(p, expires.seconds().time_since_epoch().count());
  p.text(std::string(owner), postgres::oid::text);
  state_->db().exec("UPDATE " + state_->t("claims") +
                        " SET expires = $1, backend = " + State::kSession + " WHERE owner = $2",
                    p);
}

void PostgresStore::record_run(const RunRecord& run, std::size_t keep) {
  std::lock_guard lock(state_->mutex);
  postgres::Transaction tx(state_->db());
  state_->lock("interloper runs " + state_->schema + " " + run.pipeline);
  Params p;
  for (const std::string* s : {&run.run_id, &run.pipeline, &run.command_line, &run.window}) {
    p.text(*s, postgres::oid::text);
  }
  p.text(run.started.to_string(), postgres::oid::text);
  p.text(run.finished.to_string(), postgres::oid::text);
  p.text(std::string(run_state_name(run.state)), postgres::oid::text);
  for (std::int64_t n : {run.partitions, run.succeeded, run.failed, run.skipped, run.canceled}) {
    put_int(p, n);
  }
  state_->db().exec(
      "INSERT INTO " + state_->t("runs") +
          " (run_id, pipeline, command_line, \"window\", started, finished, state, partitions, "
          "succeeded, failed, skipped, canceled) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
          "$11, $12) ON CONFLICT (run_id) DO UPDATE SET pipeline = $2, command_line = $3, "
          "\"window\" = $4, started = $5, finished = $6, state = $7, partitions = $8, "
          "succeeded = $9, failed = $10, skipped = $11, canceled = $12",
      p);
  Params trim;
  trim.text(run.pipeline, postgres::oid::text);
  put_int(trim, static_cast<std::int64_t>(std::max<std::size_t>(keep, 1)));
  state_->db().exec("DELETE FROM " + state_->t("runs") +
                        " WHERE pipeline = $1 AND id NOT IN (SELECT id FROM " + state_->t("runs") +
                        " WHERE pipeline = $1 ORDER BY id DESC LIMIT $2)",
                    trim);
  tx.commit();
}

std::vector<RunRecord> PostgresStore::runs(std::string_view pipeline, std::size_t last) {
  std::lock_guard lock(state_->mutex);
  Params p;
  p.text(std::string(pipeline), postgres::oid::text);
  put_int(p, static_cast<std::int64_t>(std::min<std::size_t>(last, INT64_MAX)));
  Result r = state_->db().exec(
      "SELECT run_id, pipeline, command_line, \"window\", started, finished, state, partitions, "
      "succeeded, failed, skipped, canceled FROM " +
          state_->t("runs") + " WHERE $1 = '' OR pipeline = $1 ORDER BY id DESC LIMIT $2",
      p);
  std::vector<RunRecord> out;
  for (int i = 0; i < r.rows(); ++i) {
    RunRecord run;
    run.run_id = std::string(r.value(i, 0));
    run.pipeline = std::string(r.value(i, 1));
    run.command_line = std::string(r.value(i, 2));
    run.window = std::string(r.value(i, 3));
    run.started = TimePoint::parse(std::string(r.value(i, 4)));
    run.finished = TimePoint::parse(std::string(r.value(i, 5)));
    run.state = run_state_from(r.value(i, 6));
    run.partitions = r.int_value(i, 7);
    run.succeeded = r.int_value(i, 8);
    run.failed = r.int_value(i, 9);
    run.skipped = r.int_value(i, 10);
    run.canceled = r.int_value(i, 11);
    out.push_back(std::move(run));
  }
  return out;
}

}  // namespace interloper
