// The PostgreSQL task queue: three tables (backfills, tasks, edges) in one schema, and the
// statements that claim, renew, complete and fail tasks. Every state change is one transaction.
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
        "CREATE TABLE IF NOT EXISTS {2} ("
        " backfill bigint NOT NULL REFERENCES {1} (id) ON DELETE CASCADE,"
        " task bigint NOT NULL, asset text NOT NULL, partition text NOT NULL,"
        " recency bigint NOT NULL, waiting integer NOT NULL,"
        " state text NOT NULL DEFAULT 'queued', attempts integer NOT NULL DEFAULT 0,"
        " lease_owner text, lease_expires timestamptz, started timestamptz,"
        " finished timestamptz, last_error text, PRIMARY KEY (backfill, task));"
        "CREATE INDEX IF NOT EXISTS tasks_ready ON {2} (recency DESC, backfill, task)"
        " WHERE state = 'queued' AND waiting = 0;"
        "CREATE INDEX IF NOT EXISTS tasks_leases ON {2} (lease_expires)"
        " WHERE state = 'running';"
        "CREATE INDEX IF NOT EXISTS tasks_unfinished ON {2} (backfill)"
        " WHERE state IN ('queued', 'running');"
        "CREATE INDEX IF NOT EXISTS tasks_running_partitions ON {2} (asset, partition)"
        " WHERE state = 'running';"
        "CREATE TABLE IF NOT EXISTS {3} ("
        " backfill bigint NOT NULL REFERENCES {1} (id) ON DELETE CASCADE,"
        " upstream bigint NOT NULL, downstream bigint NOT NULL,"
        " PRIMARY KEY (backfill, upstream, downstream));",
        sql::quote_identifier(schema), backfills, tasks, edges));
    tx.commit();
  }

  // Cancels the queued tasks downstream of `task`, transitively.
  void cancel_downstream(postgres::Connection& conn, std::int64_t backfill, std::int64_t task,
                         std::string_view reason) {
    Params p;
    put_int(p, backfill);
    put_int(p, task);
    put_text(p, reason);
    conn.exec(fmt::format("WITH RECURSIVE down(task) AS ("
                          " SELECT downstream FROM {0} WHERE backfill = $1 AND upstream = $2"
                          " UNION SELECT e.downstream FROM {0} e JOIN down d"
                          " ON e.backfill = $1 AND e.upstream = d.task)"
                          " UPDATE {1} t SET state = 'canceled', last_error = $3,"
                          " finished = now() FROM down"
                          " WHERE t.backfill = $1 AND t.task = down.task AND t.state = 'queued'",
                          edges, tasks),
              p);
  }

  postgres::Pool pool;
  std::string schema;
  std::string backfills, tasks, edges;
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

std::optional<ClaimedTask> Queue::claim(std::string_view pipeline, std::string_view owner,
                                        std::chrono::seconds lease) {
  auto conn = state_->pool.acquire();
  Params p;
  put_text(p, pipeline);
  put_text(p, owner);
  put_int(p, lease.count());
  // SKIP LOCKED: a task another worker is claiming right now is passed over, not waited for.
  // A task whose partition another backfill's task is running is passed over too: it would
  // only wait for the partition's lock (lock_partition, which closes the race this leaves).
  Result r = conn->exec(
      fmt::format("WITH next AS (SELECT t.backfill, t.task FROM {0} t JOIN {1} b"
                  " ON b.id = t.backfill WHERE t.state = 'queued' AND t.waiting = 0"
                  " AND b.pipeline = $1 AND NOT EXISTS (SELECT 1 FROM {0} r"
                  " WHERE r.state = 'running' AND r.asset = t.asset"
                  " AND r.partition = t.partition)"
                  " ORDER BY t.recency DESC, t.backfill, t.task"
                  " LIMIT 1 FOR UPDATE OF t SKIP LOCKED)"
                  " UPDATE {0} t SET state = 'running', attempts = t.attempts + 1,"
                  " lease_owner = $2, lease_expires = now() + $3 * interval '1 second',"
                  " started = now() FROM next, {1} b"
                  " WHERE t.backfill = next.backfill AND t.task = next.task AND b.id = t.backfill"
                  " RETURNING t.backfill, t.task, t.asset, t.partition, t.attempts,"
                  " b.pipeline_hash",
                  state_->tasks, state_->backfills),
      p);
  if (r.rows() == 0) return std::nullopt;
  ClaimedTask task;
  task.backfill = r.int_value(0, 0);
  task.task = r.int_value(0, 1);
  task.asset = r.value(0, 2);
  task.partition = r.value(0, 3);
  task.attempts = static_cast<int>(r.int_value(0, 4));
  task.pipeline_hash = r.value(0, 5);
  return task;
}

void Queue::renew(std::string_view owner, std::chrono::seconds lease) {
  auto conn = state_->pool.acquire();
  Params p;
  put_text(p, owner);
  put_int(p, lease.count());
  conn->exec(fmt::format("UPDATE {} SET lease_expires = now() + $2 * interval '1 second'"
                         " WHERE state = 'running' AND lease_owner = $1",
                         state_->tasks),
             p);
}

bool Queue::complete(const ClaimedTask& task, std::string_view owner) {
  auto conn = state_->pool.acquire();
  postgres::Transaction tx(*conn);
  Params p;
  put_int(p, task.backfill);
  put_int(p, task.task);
  put_text(p, owner);
  Result done = conn->exec(
      fmt::format("UPDATE {} SET state = 'succeeded', finished = now(), lease_owner = NULL,"
                  " lease_expires = NULL, last_error = NULL"
                  " WHERE backfill = $1 AND task = $2 AND state = 'running' AND lease_owner = $3"
                  " RETURNING task",
                  state_->tasks),
      p);
  if (done.rows() == 0) return false;
  Params q;
  put_int(q, task.backfill);
  put_int(q, task.task);
  conn->exec(fmt::format("UPDATE {0} t SET waiting = t.waiting - 1 FROM {1} e"
                         " WHERE e.backfill = $1 AND e.upstream = $2 AND t.backfill = $1"
                         " AND t.task = e.downstream",
                         state_->tasks, state_->edges),
             q);
  tx.commit();
  return true;
}

bool Queue::fail(const ClaimedTask& task, std::string_view owner, std::string_view error) {
  auto conn = state_->pool.acquire();
  postgres::Transaction tx(*conn);
  Params p;
  put_int(p, task.backfill);
  put_int(p, task.task);
  put_text(p, owner);
  put_text(p, error);
  Result r = conn->exec(
      fmt::format("UPDATE {0} t SET state = CASE WHEN t.attempts >= b.max_attempts"
                  " THEN 'failed' ELSE 'queued' END, last_error = $4, lease_owner = NULL,"
                  " lease_expires = NULL, finished = now() FROM {1} b"
                  " WHERE b.id = t.backfill AND t.backfill = $1 AND t.task = $2"
                  " AND t.state = 'running' AND t.lease_owner = $3 RETURNING t.state",
                  state_->tasks, state_->backfills),
      p);
  const bool failed = r.rows() == 1 && r.value(0, 0) == "failed";
  if (failed) {
    state_->cancel_downstream(
        *conn, task.backfill, task.task,
        fmt::format("upstream asset '{}' failed for {}", task.asset, task.partition));
  }
  tx.commit();
  return failed;
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
  postgres::Transaction tx(*conn);
  Result r = conn->exec(fmt::format(
      "WITH expired AS (SELECT backfill, task FROM {0} WHERE state = 'running'"
      " AND lease_expires < now() FOR UPDATE SKIP LOCKED)"
      " UPDATE {0} t SET state = CASE WHEN t.attempts >= b.max_attempts THEN 'failed'"
      " ELSE 'queued' END, last_error = 'the lease of worker ' || t.lease_owner ||"
      " ' expired (the worker stopped renewing it)', lease_owner = NULL, lease_expires = NULL,"
      " finished = now() FROM expired, {1} b"
      " WHERE t.backfill = expired.backfill AND t.task = expired.task AND b.id = t.backfill"
      " RETURNING t.backfill, t.task, t.state, t.asset, t.partition",
      state_->tasks, state_->backfills));
  for (int i = 0; i < r.rows(); ++i) {
    if (r.value(i, 2) != "failed") continue;
    state_->cancel_downstream(
        *conn, r.int_value(i, 0), r.int_value(i, 1),
        fmt::format("upstream asset '{}' failed for {}", r.value(i, 3), r.value(i, 4)));
  }
  tx.commit();
  return static_cast<std::size_t>(r.rows());
}

struct Queue::PartitionLock::Held {
  postgres::Pool::Lease conn;
  std::string key;
};

Queue::PartitionLock::PartitionLock(std::unique_ptr<Held> held) : held_(std::move(held)) {}

Queue::PartitionLock::~PartitionLock() {
  try {
    Params p;
    put_text(p, held_->key);
    held_->conn->exec("SELECT pg_advisory_unlock(hashtext('interloper queue'), hashtext($1))", p);
  } catch (...) {
    // A connection that broke has lost its locks with its session.
  }
}

std::unique_ptr<Queue::PartitionLock> Queue::lock_partition(std::string_view asset,
                                                            std::string_view partition) {
  auto held = std::make_unique<PartitionLock::Held>(
      PartitionLock::Held{state_->pool.acquire(), fmt::format("{}\x1f{}", asset, partition)});
  Params p;
  put_text(p, held->key);
  Result r = held->conn->exec(
      "SELECT pg_try_advisory_lock(hashtext('interloper queue'), hashtext($1))", p);
  if (r.value(0, 0) != "t") return nullptr;
  return std::make_unique<PartitionLock>(std::move(held));
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
  Result r = conn->exec(
      fmt::format("SELECT t.backfill, t.asset, t.partition, t.lease_owner, t.attempts,"
                  " extract(epoch FROM now() - t.started)::float8"
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
    t.lease_age = std::stod(std::string(r.value(i, 5)));
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
