// The queue's connection pool, its statements and the helpers its files share, private to the
// queue layer.
#pragma once

#include <fmt/format.h>

#include <algorithm>

#include "interloper/postgres/postgres.hpp"
#include "interloper/queue/queue.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper::queue {

namespace detail {

using postgres::Params;
using postgres::Result;

inline void put_int(Params& p, std::int64_t v) { p.text(std::to_string(v), postgres::oid::int8); }
inline void put_text(Params& p, std::string_view v) { p.text(std::string(v), postgres::oid::text); }

// One value of COPY's text format: backslash, tab, newline and carriage return escaped.
inline void put_copy_text(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
}

inline std::string join_lines(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    if (!out.empty()) out += '\n';
    out += name;
  }
  return out;
}

inline std::vector<std::string> split_lines(std::string_view text) {
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
inline void for_each_upstream(const Plan& plan, std::size_t task, F&& f) {
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

// The columns of a backfill (table alias b) that read_backfill reads, in its order.
constexpr const char* kBackfillColumns =
    "b.id, b.pipeline, b.pipeline_hash, b.request, b.assets, b.max_attempts, b.tasks,"
    " b.canceled, b.created::text, b.request_json";

// The backfill of row `row` of a result whose first columns are kBackfillColumns: its typed
// request, or for a backfill enqueued before requests were typed, the request its window text and
// asset names describe.
inline BackfillInfo read_backfill(const Result& r, int row) {
  BackfillInfo info;
  info.id = r.int_value(row, 0);
  info.spec.pipeline = r.value(row, 1);
  info.spec.pipeline_hash = r.value(row, 2);
  if (r.is_null(row, 9)) {
    info.spec.request = BackfillRequest::legacy(std::string(r.value(row, 3)),
                                                split_lines(r.value(row, 4)),
                                                static_cast<int>(r.int_value(row, 5)));
  } else {
    info.spec.request = BackfillRequest::from_json(r.value(row, 9));
  }
  info.tasks = r.int_value(row, 6);
  info.canceled = r.value(row, 7) == "t";
  info.created = r.value(row, 8);
  return info;
}

}  // namespace detail

using namespace detail;

struct Queue::State {
  explicit State(const Locator& url)
      : pool(postgres::parse_url(url, {"schema"})),
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
        // The typed request (request.hpp), as JSON; NULL in a backfill enqueued before requests
        // were typed, which `request` and `assets` describe as text.
        " request_json text,"
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
    add_request_column(*conn);
  }

  // A queue created before requests were typed gets their column. Checked first, and altered in
  // a transaction of its own that holds no other lock: ALTER TABLE locks the backfills table
  // against every claim, which must never wait on a lock this transaction holds.
  void add_request_column(postgres::Connection& conn) const {
    Params p;
    put_text(p, schema);
    Result found = conn.exec(
        "SELECT count(*) FROM information_schema.columns WHERE table_schema = $1"
        " AND table_name = 'backfills' AND column_name = 'request_json'",
        p);
    if (found.int_value(0, 0) > 0) return;
    conn.exec(fmt::format("ALTER TABLE {} ADD COLUMN IF NOT EXISTS request_json text", backfills));
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

}  // namespace interloper::queue
