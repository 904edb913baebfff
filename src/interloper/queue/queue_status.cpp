// What the queue holds: unfinished tasks, backfill counts, running tasks and failures.
#include "interloper/queue/queue_state.hpp"

namespace interloper::queue {

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
      fmt::format("SELECT {},"
                  " count(*) FILTER (WHERE t.state = 'queued'),"
                  " count(*) FILTER (WHERE t.state = 'running'),"
                  " count(*) FILTER (WHERE t.state = 'succeeded'),"
                  " count(*) FILTER (WHERE t.state = 'failed'),"
                  " count(*) FILTER (WHERE t.state = 'canceled')"
                  " FROM {} b LEFT JOIN {} t ON t.backfill = b.id"
                  " WHERE (b.pipeline = $1 OR $2::bigint IS NOT NULL)"
                  " AND ($2::bigint IS NULL OR b.id = $2) GROUP BY b.id ORDER BY b.id",
                  kBackfillColumns, state_->backfills, state_->tasks),
      p);
  std::vector<BackfillStatus> out;
  for (int i = 0; i < r.rows(); ++i) {
    BackfillStatus s;
    s.info = read_backfill(r, i);
    s.counts = {r.int_value(i, 10), r.int_value(i, 11), r.int_value(i, 12), r.int_value(i, 13),
                r.int_value(i, 14)};
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<RunningTask> Queue::running(std::string_view pipeline, std::optional<std::int64_t> id) {
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

}  // namespace interloper::queue
