// SqliteStore's claims on partitions and its run history.
#include "interloper/store/sqlite_store_state.hpp"

namespace interloper {

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
          "INSERT INTO claims (source, asset, scope, key, first, last, owner, expires, process) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
      State::bind_claim(*insert, dataset, scope, span, claim.owner);
      insert->bind_int(8, claim.expires.seconds().time_since_epoch().count());
      insert->bind_text(9, detail::this_process(), false);
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

void SqliteStore::record_run(const RunRecord& run, std::size_t keep) {
  std::lock_guard lock(state_->mutex);
  sqlite::Transaction transaction(state_->db);
  {
    auto stmt = state_->db.cached(
        "INSERT INTO runs (run_id, pipeline, command_line, window, started, finished, state, "
        "partitions, succeeded, failed, skipped, canceled) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
        "?8, ?9, ?10, ?11, ?12) ON CONFLICT (run_id) DO UPDATE SET pipeline = ?2, "
        "command_line = ?3, window = ?4, started = ?5, finished = ?6, state = ?7, "
        "partitions = ?8, succeeded = ?9, failed = ?10, skipped = ?11, canceled = ?12");
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
    stmt->bind_int(12, run.canceled);
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
  // A file of version 7 and earlier, opened read-only, counted no canceled tasks.
  auto stmt = state_->db.cached(
      state_->has_run_canceled
          ? "SELECT run_id, pipeline, command_line, window, started, finished, state, "
            "partitions, succeeded, failed, skipped, canceled FROM runs WHERE ?1 = '' OR "
            "pipeline = ?1 ORDER BY id DESC LIMIT ?2"
          : "SELECT run_id, pipeline, command_line, window, started, finished, state, "
            "partitions, succeeded, failed, skipped, 0 FROM runs WHERE ?1 = '' OR "
            "pipeline = ?1 ORDER BY id DESC LIMIT ?2");
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
    r.state = run_state_from(stmt->column_text(6));
    r.partitions = stmt->column_int(7);
    r.succeeded = stmt->column_int(8);
    r.failed = stmt->column_int(9);
    r.skipped = stmt->column_int(10);
    r.canceled = stmt->column_int(11);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace interloper
