// Claiming tasks: the lease, its renewal, and settling a task as done, failed or given back.
#include "interloper/queue/queue_state.hpp"

namespace interloper::queue {

struct Queue::Claim::Held {
  std::optional<postgres::Pool::Lease> conn;
  std::string owner;
};

Queue::Claim::Claim(ClaimedTask task, bool locked, std::unique_ptr<Held> held)
    : task_(std::move(task)), locked_(locked), held_(std::move(held)) {}
Queue::Claim::Claim(Claim&&) noexcept = default;

Queue::Claim::~Claim() {
  if (!held_ || !locked_ || !(*held_->conn)->ok()) return;
  try {
    (*held_->conn)->exec("SELECT pg_advisory_unlock_all()");
  } catch (...) {
    // A connection that broke has lost its locks with its session.
  }
}

std::optional<Queue::Claim> Queue::claim(std::string_view pipeline, std::string_view owner,
                                         std::chrono::seconds lease) {
  auto held =
      std::make_unique<Claim::Held>(Claim::Held{state_->pool.acquire(), std::string(owner)});
  postgres::Connection& conn = **held->conn;
  Params p;
  put_text(p, pipeline);
  put_text(p, owner);
  put_int(p, lease.count());
  Result r;
  try {
    r = conn.exec_prepared(state_->claim_sql, p);
  } catch (...) {
    // Should the statement fail after taking the lock, the connection must not go back to the
    // pool holding it.
    Claim unlocking({}, true, std::move(held));
    throw;
  }
  if (r.rows() == 0) return std::nullopt;
  ClaimedTask task;
  task.backfill = r.int_value(0, 0);
  task.task = r.int_value(0, 1);
  task.asset = r.value(0, 2);
  task.partition = r.value(0, 3);
  task.attempts = static_cast<int>(r.int_value(0, 4));
  task.pipeline_hash = r.value(0, 5);
  const bool locked = r.value(0, 6) == "t";
  return Claim(std::move(task), locked, std::move(held));
}

void Queue::renew(std::string_view owner, std::chrono::seconds lease) {
  auto conn = state_->pool.acquire();
  Params p;
  put_text(p, owner);
  put_int(p, lease.count());
  conn->exec_prepared(state_->renew_sql, p);
}

namespace {

// Runs one of the statements that settle a claimed task ($1 backfill, $2 task, $3 owner, then
// `extra`) on the claim's connection, which frees its partition. A connection that broke (the
// server restarted) is replaced by another: its lock went with it.
Result settle(postgres::Pool& pool, const ClaimedTask& task, Queue::Claim::Held& held,
              const std::string& sql, const std::vector<std::string>& extra) {
  if (!(*held.conn)->ok()) held.conn.emplace(pool.acquire());
  Params p;
  put_int(p, task.backfill);
  put_int(p, task.task);
  put_text(p, held.owner);
  for (const std::string& value : extra) put_text(p, value);
  return (*held.conn)->exec_prepared(sql, p);
}

}  // namespace

bool Queue::complete(Claim& claim) {
  Result r = settle(state_->pool, claim.task_, *claim.held_, state_->complete_sql, {});
  claim.locked_ = false;
  return r.int_value(0, 0) == 1;
}

bool Queue::fail(Claim& claim, std::string_view error) {
  Result r =
      settle(state_->pool, claim.task_, *claim.held_, state_->fail_sql, {std::string(error)});
  claim.locked_ = false;
  return r.value(0, 0) == "failed";
}

void Queue::release(Claim& claim) {
  settle(state_->pool, claim.task_, *claim.held_, state_->release_sql, {});
  claim.locked_ = false;
}

void Queue::release(const ClaimedTask& task, std::string_view owner) {
  auto conn = state_->pool.acquire();
  Params p;
  put_int(p, task.backfill);
  put_int(p, task.task);
  put_text(p, owner);
  conn->exec(fmt::format("UPDATE {} SET state = 'queued', attempts = attempts - 1,"
                         " lease_owner = NULL, lease_expires = NULL"
                         " WHERE backfill = $1 AND task = $2 AND state = 'running'"
                         " AND lease_owner = $3",
                         state_->tasks),
             p);
}

std::size_t Queue::requeue_expired() {
  auto conn = state_->pool.acquire();
  Result r = conn->exec_prepared(state_->requeue_sql, {});
  return static_cast<std::size_t>(r.int_value(0, 0));
}

}  // namespace interloper::queue
