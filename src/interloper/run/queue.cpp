// The PostgreSQL task queue: three tables (backfills, tasks, edges) in one schema, and the
// statements that claim, renew, complete and fail tasks. Every state change is one transaction,
// and those a worker makes for each task are one statement each (data-modifying WITH clauses),
// prepared once per connection: a task costs a worker two round trips to the server.
#include "interloper/run/queue.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper::queue {

namespace {

using postgres::Params;
using postgres::Result;

void put_int(Params& p, std::int64_t v) { p.text(std::to_string(v), postgres::oid::int8); }
void put_text(Params& p, std::string_view v) { p.text(std::string(v), postgres::oid::text); }

// One value of COPY's text format: backslash, tab, newline and carriage return escaped.
void put_copy_text(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

std::string join_lines(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += '\n';
    out += name;
  }
  return out;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    out.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

// The running tasks of a plan below which `task`'s step reads, as (upstream task id) pairs.
template <typename F>
void for_each_upstream(const Plan& plan, std::size_t task, F&& f) {
  const Plan::Step& step = plan.steps()[plan.step_of(task)];
  for (std::size_t up : step.upstream) {
    std::optional<PartitionRange> reads = plan.related(task, up);
    if (!reads) continue;
    const std::size_t first = plan.steps()[up].first_task;
    for (std::size_t i = reads->first; i <= reads->last; ++i) {
      if (plan.runs(first + i)) f(first + i);
    }
  }
}

constexpr std::size_t kCopyChunk = 1 << 20;

}  // namespace

struct Queue::State {
  explicit State(std::string_view text)
      : pool(postgres::parse_url(text, {"schema"})),
        schema(pool.url().get("schema", "interloper_queue")) {
    if (schema.empty()) {
      throw DestinationError(
          fmt::format("postgresql URL '{}': schema is empty", pool.url().redacted));
    }
    const std::string s = sql::quote_identifier(schema);
    backfills = s + ".\"backfills\"";
    tasks = s + ".\"tasks\"";
    edges = s + ".\"edges\"";
    create_tables();
    write_statements();
  }

  void create_tables() {
    auto conn = pool.acquire();
    postgres::Transaction tx(*conn);
    // Several workers starting at once would race on CREATE ... IF NOT EXISTS.
    Params lock;
    put_text(lock, "interloper queue schema " + schema);
    conn->exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
    conn->exec(fmt::format(
        "CREATE SCHEMA IF NOT EXISTS {0};"
        "CREATE TABLE IF NOT EXISTS {1} ("
        " id bigserial PRIMARY KEY, pipeline text NOT NULL, pipeline_hash text NOT NULL,"
        " request text NOT NULL, assets text NOT NULL, max_attempts integer NOT NULL,"
        " tasks bigint NOT NULL, canceled boolean NOT NULL DEFAULT false,"
        " created timestamptz NOT NULL DEFAULT now());"
        // Tasks and edges name their backfill without a foreign key: only enqueue writes them,
        // with the backfill, and a key checked row by row would double the cost of COPY.
        "CREATE TABLE IF NOT EXISTS {2} ("
        " backfill bigint NOT NULL,"
        " task bigint NOT NULL, asset text NOT NULL, partition text NOT NULL,"
        " recency bigint NOT NULL, waiting integer NOT NULL,"
        " state text NOT NULL DEFAULT 'queued', attempts integer NOT NULL DEFAULT 0,"
        " lease_owner text, lease_expires timestamptz, started timestamptz,"
        " finished timestamptz, last_error text, PRIMARY KEY (backfill, task));"
        // Claims read it backwards (newest first, then plan order); a plan's tasks are written
        // oldest first, so each goes to the end of the index, which stays compact.
        "CREATE INDEX IF NOT EXISTS tasks_ready ON {2} (recency, backfill DESC, task DESC)"
        " WHERE state = 'queued' AND waiting = 0;"
        "CREATE INDEX IF NOT EXISTS tasks_leases ON {2} (lease_expires)"
        " WHERE state = 'running';"
        "CREATE INDEX IF NOT EXISTS tasks_unfinished ON {2} (backfill)"
        " WHERE state IN ('queued', 'running');"
        "CREATE INDEX IF NOT EXISTS tasks_running_partitions ON {2} (asset, partition)"
        " WHERE state = 'running';"
        "CREATE TABLE IF NOT EXISTS {3} ("
        " backfill bigint NOT NULL,"
        " upstream bigint NOT NULL, downstream bigint NOT NULL,"
        " PRIMARY KEY (backfill, upstream, downstream));",
        sql::quote_identifier(schema), backfills, tasks, edges));
    tx.commit();
  }

  // The statements workers run over and over, written once.
  void write_statements() {
    claim_sql = fmt::format(
        // SKIP LOCKED: a task another worker is claiming right now is passed over, not waited
        // for. A task whose partition another backfill's task is running is passed over too: it
        // would only wait for the partition's lock, which the claim then takes (closing the
        // race this check leaves: two claims of one partition in the same instant).
        "WITH next AS (SELECT t.backfill, t.task, b.pipeline_hash FROM {0} t JOIN {1} b"
        " ON b.id = t.backfill WHERE t.state = 'queued' AND t.waiting = 0"
        " AND b.pipeline = $1 AND NOT EXISTS (SELECT 1 FROM {0} r"
        " WHERE r.state = 'running' AND r.asset = t.asset AND r.partition = t.partition)"
        " ORDER BY t.recency DESC, t.backfill, t.task"
        " LIMIT 1 FOR UPDATE OF t SKIP LOCKED)"
        " UPDATE {0} t SET state = 'running', attempts = t.attempts + 1,"
        " lease_owner = $2, lease_expires = now() + $3 * interval '1 second',"
        " started = now() FROM next WHERE t.backfill = next.backfill AND t.task = next.task"
        " RETURNING t.backfill, t.task, t.asset, t.partition, t.attempts, next.pipeline_hash,"
        " pg_try_advisory_lock({2})",
        tasks, backfills, partition_lock("t.asset", "t.partition"));
    // The partition lock is the only session lock a claim's connection holds, so freeing all
    // of them frees it, and is harmless on a connection that holds none.
    complete_sql = fmt::format(
        "WITH done AS (UPDATE {0} SET state = 'succeeded', finished = now(),"
        " lease_owner = NULL, lease_expires = NULL, last_error = NULL"
        " WHERE backfill = $1 AND task = $2 AND state = 'running' AND lease_owner = $3"
        " RETURNING backfill, task),"
        " released AS (UPDATE {0} t SET waiting = t.waiting - 1 FROM done, {1} e"
        " WHERE e.backfill = done.backfill AND e.upstream = done.task"
        " AND t.backfill = done.backfill AND t.task = e.downstream)"
        " SELECT (SELECT count(*) FROM done), pg_advisory_unlock_all()",
        tasks, edges);
    fail_sql = fmt::format(
        "WITH RECURSIVE settled AS (UPDATE {0} t SET state = CASE WHEN t.attempts >="
        " b.max_attempts THEN 'failed' ELSE 'queued' END, last_error = $4, lease_owner = NULL,"
        " lease_expires = NULL, finished = now() FROM {1} b"
        " WHERE b.id = t.backfill AND t.backfill = $1 AND t.task = $2"
        " AND t.state = 'running' AND t.lease_owner = $3"
        " RETURNING t.backfill, t.task, t.state, t.asset, t.partition), {2}"
        " SELECT (SELECT state FROM settled), pg_advisory_unlock_all()",
        tasks, backfills, cancel_downstream("settled"));
    renew_sql = fmt::format(
        "UPDATE {} SET lease_expires = now() + $2 * interval '1 second'"
        " WHERE state = 'running' AND lease_owner = $1",
        tasks);
    requeue_sql = fmt::format(
        "WITH RECURSIVE expired AS (SELECT backfill, task FROM {0} WHERE state = 'running'"
        " AND lease_expires < now() FOR UPDATE SKIP LOCKED),"
        " settled AS (UPDATE {0} t SET state = CASE WHEN t.attempts >= b.max_attempts"
        " THEN 'failed' ELSE 'queued' END, last_error = 'the lease of worker ' ||"
        " t.lease_owner || ' expired (the worker stopped renewing it)', lease_owner = NULL,"
        " lease_expires = NULL, finished = now() FROM expired, {1} b"
        " WHERE t.backfill = expired.backfill AND t.task = expired.task AND b.id = t.backfill"
        " RETURNING t.backfill, t.task, t.state, t.asset, t.partition), {2}"
        " SELECT count(*) FROM settled",
        tasks, backfills, cancel_downstream("settled"));
    release_sql = fmt::format(
        "WITH back AS (UPDATE {} SET state = 'queued', attempts = attempts - 1,"
        " lease_owner = NULL, lease_expires = NULL"
        " WHERE backfill = $1 AND task = $2 AND state = 'running' AND lease_owner = $3"
        " RETURNING task) SELECT (SELECT count(*) FROM back), pg_advisory_unlock_all()",
        tasks);
  }

  // The advisory lock key of an (asset, partition), from two SQL expressions.
  static std::string partition_lock(std::string_view asset, std::string_view partition) {
    return fmt::format("hashtext('interloper queue'), hashtext({} || chr(31) || {})", asset,
                       partition);
  }

  // WITH clauses (after others, in a WITH RECURSIVE) that cancel the queued tasks downstream,
  // transitively, of each row of `settled` (backfill, task, state, asset, partition) whose state
  // is 'failed'.
  std::string cancel_downstream(std::string_view settled) const {
    return fmt::format(
        "down(backfill, task, reason) AS (SELECT e.backfill, e.downstream,"
        " format('upstream asset ''%s'' failed for %s', s.asset, s.partition)"
        " FROM {0} e JOIN {2} s ON e.backfill = s.backfill AND e.upstream = s.task"
        " WHERE s.state = 'failed'"
        " UNION SELECT e.backfill, e.downstream, d.reason FROM {0} e JOIN down d"
        " ON e.backfill = d.backfill AND e.upstream = d.task),"
        " canceled AS (UPDATE {1} t SET state = 'canceled', last_error = down.reason,"
        " finished = now() FROM down"
        " WHERE t.backfill = down.backfill AND t.task = down.task AND t.state = 'queued')",
        edges, tasks, settled);
  }

  postgres::Pool pool;
  std::string schema;
  std::string backfills, tasks, edges;
  std::string claim_sql, complete_sql, fail_sql, release_sql, renew_sql, requeue_sql;
};

Queue::Queue(std::string_view url) : state_(std::make_unique<State>(url)) {}
Queue::~Queue() = default;

const std::string& Queue::display() const { return state_->pool.url().redacted; }

std::int64_t Queue::enqueue(const Plan& plan, const BackfillSpec& spec) {
  auto conn = state_->pool.acquire();
  postgres::Transaction tx(*conn);
  Params p;
  put_text(p, spec.pipeline);
  put_text(p, spec.pipeline_hash);
  put_text(p, spec.window);
  put_text(p, join_lines(spec.assets));
  put_int(p, spec.max_attempts);
  put_int(p, static_cast<std::int64_t>(plan.to_run()));
  Result r = conn->exec(fmt::format("INSERT INTO {} (pipeline, pipeline_hash, request, assets,"
                                    " max_attempts, tasks) VALUES ($1, $2, $3, $4, $5, $6)"
                                    " RETURNING id",
                                    state_->backfills),
                        p);
  const std::int64_t id = r.int_value(0, 0);
  const std::string prefix = std::to_string(id) + '\t';

  std::string buffer;
  conn->copy_start(fmt::format(
      "COPY {} (backfill, task, asset, partition, recency, waiting) FROM STDIN", state_->tasks));
  for (std::size_t task = 0; task < plan.size(); ++task) {
    if (!plan.runs(task)) continue;
    std::size_t waiting = 0;
    for_each_upstream(plan, task, [&](std::size_t) { ++waiting; });
    const std::shared_ptr<const PartitionWindow> window = plan.window(task);
    buffer += prefix;
    buffer += std::to_string(task);
    buffer += '\t';
    put_copy_text(buffer, plan.steps()[plan.step_of(task)].asset->name());
    buffer += '\t';
    put_copy_text(buffer, window ? window->to_string() : std::string());
    buffer += fmt::format("\t{}\t{}\n", plan.recency(task), waiting);
    if (buffer.size() >= kCopyChunk) {
      conn->copy_put(buffer.data(), buffer.size());
      buffer.clear();
    }
  }
  if (!buffer.empty()) conn->copy_put(buffer.data(), buffer.size());
  buffer.clear();
  conn->copy_end();

  conn->copy_start(
      fmt::format("COPY {} (backfill, upstream, downstream) FROM STDIN", state_->edges));
  for (std::size_t task = 0; task < plan.size(); ++task) {
    if (!plan.runs(task)) continue;
    for_each_upstream(plan, task, [&](std::size_t up) {
      buffer += prefix;
      buffer += fmt::format("{}\t{}\n", up, task);
    });
    if (buffer.size() >= kCopyChunk) {
      conn->copy_put(buffer.data(), buffer.size());
      buffer.clear();
    }
  }
  if (!buffer.empty()) conn->copy_put(buffer.data(), buffer.size());
  conn->copy_end();
  tx.commit();
  return id;
}

std::optional<BackfillInfo> Queue::backfill(std::int64_t id) {
  auto conn = state_->pool.acquire();
  Params p;
  put_int(p, id);
  Result r = conn->exec(
      fmt::format("SELECT id, pipeline, pipeline_hash, request, assets, max_attempts, tasks,"
                  " canceled, created::text FROM {} WHERE id = $1",
                  state_->backfills),
      p);
  if (r.rows() == 0) return std::nullopt;
  BackfillInfo info;
  info.id = r.int_value(0, 0);
  info.spec.pipeline = r.value(0, 1);
  info.spec.pipeline_hash = r.value(0, 2);
  info.spec.window = r.value(0, 3);
  info.spec.assets = split_lines(r.value(0, 4));
  info.spec.max_attempts = static_cast<int>(r.int_value(0, 5));
  info.tasks = r.int_value(0, 6);
  info.canceled = r.value(0, 7) == "t";
  info.created = r.value(0, 8);
  return info;
}

std::vector<std::string> Queue::active_hashes(std::string_view pipeline) {
  auto conn = state_->pool.acquire();
  Params p;
  put_text(p, pipeline);
  Result r = conn->exec(
      fmt::format("SELECT DISTINCT b.pipeline_hash FROM {} b WHERE b.pipeline = $1 AND"
                  " NOT b.canceled AND EXISTS (SELECT 1 FROM {} t WHERE t.backfill = b.id"
                  " AND t.state IN ('queued', 'running'))",
                  state_->backfills, state_->tasks),
      p);
  std::vector<std::string> out;
  for (int i = 0; i < r.rows(); ++i) out.emplace_back(r.value(i, 0));
  return out;
}

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

std::int64_t Queue::unfinished(std::string_view pipeline) {
  auto conn = state_->pool.acquire();
  Params p;
  put_text(p, pipeline);
  Result r = conn->exec(fmt::format("SELECT count(*) FROM {} t JOIN {} b ON b.id = t.backfill"
                                    " WHERE b.pipeline = $1 AND t.state IN ('queued', 'running')",
                                    state_->tasks, state_->backfills),
                        p);
  return r.int_value(0, 0);
}

std::vector<BackfillStatus> Queue::status(std::string_view pipeline,
                                          std::optional<std::int64_t> id) {
  auto conn = state_->pool.acquire();
  Params p;
  put_text(p, pipeline);
  if (id) {
    put_int(p, *id);
  } else {
    p.null(postgres::oid::int8);
  }
  Result r = conn->exec(
      fmt::format("SELECT b.id, b.pipeline, b.pipeline_hash, b.request, b.assets, b.max_attempts,"
                  " b.tasks, b.canceled, b.created::text,"
                  " count(*) FILTER (WHERE t.state = 'queued'),"
                  " count(*) FILTER (WHERE t.state = 'running'),"
                  " count(*) FILTER (WHERE t.state = 'succeeded'),"
                  " count(*) FILTER (WHERE t.state = 'failed'),"
                  " count(*) FILTER (WHERE t.state = 'canceled')"
                  " FROM {} b LEFT JOIN {} t ON t.backfill = b.id"
                  " WHERE (b.pipeline = $1 OR $2::bigint IS NOT NULL)"
                  " AND ($2::bigint IS NULL OR b.id = $2) GROUP BY b.id ORDER BY b.id",
                  state_->backfills, state_->tasks),
      p);
  std::vector<BackfillStatus> out;
  for (int i = 0; i < r.rows(); ++i) {
    BackfillStatus s;
    s.info.id = r.int_value(i, 0);
    s.info.spec.pipeline = r.value(i, 1);
    s.info.spec.pipeline_hash = r.value(i, 2);
    s.info.spec.window = r.value(i, 3);
    s.info.spec.assets = split_lines(r.value(i, 4));
    s.info.spec.max_attempts = static_cast<int>(r.int_value(i, 5));
    s.info.tasks = r.int_value(i, 6);
    s.info.canceled = r.value(i, 7) == "t";
    s.info.created = r.value(i, 8);
    s.counts = {r.int_value(i, 9), r.int_value(i, 10), r.int_value(i, 11), r.int_value(i, 12),
                r.int_value(i, 13)};
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<RunningTask> Queue::running(std::string_view pipeline,
                                        std::optional<std::int64_t> id) {
  auto conn = state_->pool.acquire();
  Params p;
  put_text(p, pipeline);
  if (id) {
    put_int(p, *id);
  } else {
    p.null(postgres::oid::int8);
  }
  Result r =
      conn->exec(fmt::format("SELECT t.backfill, t.asset, t.partition, t.lease_owner, t.attempts,"
                             " extract(epoch FROM now() - t.started)::float8,"
                             " extract(epoch FROM t.lease_expires - now())::float8"
                             " FROM {} t JOIN {} b ON b.id = t.backfill WHERE t.state = 'running'"
                             " AND (b.pipeline = $1 OR $2::bigint IS NOT NULL)"
                             " AND ($2::bigint IS NULL OR b.id = $2) ORDER BY t.backfill, t.task",
                             state_->tasks, state_->backfills),
                 p);
  std::vector<RunningTask> out;
  for (int i = 0; i < r.rows(); ++i) {
    RunningTask t;
    t.backfill = r.int_value(i, 0);
    t.asset = r.value(i, 1);
    t.partition = r.value(i, 2);
    t.owner = r.value(i, 3);
    t.attempts = static_cast<int>(r.int_value(i, 4));
    t.seconds = std::stod(std::string(r.value(i, 5)));
    t.lease_left = std::stod(std::string(r.value(i, 6)));
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<FailedTask> Queue::failures(std::int64_t id, std::size_t limit) {
  auto conn = state_->pool.acquire();
  Params p;
  put_int(p, id);
  put_int(p, static_cast<std::int64_t>(limit));
  Result r = conn->exec(
      fmt::format("SELECT backfill, asset, partition, attempts, coalesce(last_error, '')"
                  " FROM {} WHERE backfill = $1 AND state = 'failed' ORDER BY task LIMIT $2",
                  state_->tasks),
      p);
  std::vector<FailedTask> out;
  for (int i = 0; i < r.rows(); ++i) {
    out.push_back({r.int_value(i, 0), std::string(r.value(i, 1)), std::string(r.value(i, 2)),
                   static_cast<int>(r.int_value(i, 3)), std::string(r.value(i, 4))});
  }
  return out;
}

std::int64_t Queue::cancel(std::int64_t id) {
  auto conn = state_->pool.acquire();
  postgres::Transaction tx(*conn);
  Params p;
  put_int(p, id);
  Result b = conn->exec(
      fmt::format("UPDATE {} SET canceled = true WHERE id = $1 RETURNING id", state_->backfills),
      p);
  if (b.rows() == 0) throw RunError(fmt::format("queue '{}': no backfill {}", display(), id));
  Result r = conn->exec(fmt::format("WITH done AS (UPDATE {} SET state = 'canceled',"
                                    " finished = now(), last_error = 'the backfill was canceled'"
                                    " WHERE backfill = $1 AND state = 'queued' RETURNING 1)"
                                    " SELECT count(*) FROM done",
                                    state_->tasks),
                        p);
  tx.commit();
  return r.int_value(0, 0);
}

std::string fingerprint(std::string_view text) { return interloper::fingerprint(text); }

}  // namespace interloper::queue
