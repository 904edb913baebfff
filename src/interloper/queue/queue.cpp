// The PostgreSQL task queue: three tables (backfills, tasks, edges) in one schema, and the
// statements that claim, renew, complete and fail tasks. Every state change is one transaction,
// and those a worker makes for each task are one statement each (data-modifying WITH clauses),
// prepared once per connection: a task costs a worker two round trips to the server.
#include "interloper/queue/queue_state.hpp"

namespace interloper::queue {

Queue::Queue(const Locator& url) : state_(std::make_unique<State>(url)) {}
Queue::~Queue() = default;

const std::string& Queue::display() const { return state_->pool.url().redacted; }

std::int64_t Queue::enqueue(const Plan& plan, const BackfillSpec& spec) {
  auto conn = state_->pool.acquire();
  postgres::Transaction tx(*conn);
  Params p;
  put_text(p, spec.pipeline);
  put_text(p, spec.pipeline_hash);
  put_text(p, spec.request.window_text());
  put_text(p, join_lines(spec.request.asset_names()));
  put_int(p, spec.request.options.max_attempts);
  put_int(p, static_cast<std::int64_t>(plan.to_run()));
  put_text(p, spec.request.to_json());
  Result r = conn->exec(fmt::format("INSERT INTO {} (pipeline, pipeline_hash, request, assets,"
                                    " max_attempts, tasks, request_json)"
                                    " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
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
      fmt::format("SELECT {} FROM {} b WHERE id = $1", kBackfillColumns, state_->backfills), p);
  if (r.rows() == 0) return std::nullopt;
  return read_backfill(r, 0);
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

}  // namespace interloper::queue
