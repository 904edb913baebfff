#include "interloper/serve/api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "interloper/destination.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/run/queue.hpp"
#include "interloper/run/report_json.hpp"

namespace interloper::serve {

namespace {

using json = nlohmann::ordered_json;

// The overview counts over the last this-many partitions when the asset has no start.
constexpr std::size_t kRecent = 90;
constexpr std::size_t kBuckets = 1000;
constexpr std::size_t kShownRuns = 50;
constexpr std::size_t kShownBackfills = 50;
constexpr std::size_t kShownFailures = 20;

Response error(int status, const std::string& message) {
  return {status, json{{"error", message}}.dump()};
}

// What `body` answers, or 400 with the message of a bad partition or window, or 500.
template <typename Body>
Response answer(Body body) {
  try {
    return body();
  } catch (const PartitionError& e) {
    return error(400, e.what());
  } catch (const std::invalid_argument& e) {
    return error(400, e.what());
  } catch (const std::exception& e) {
    return error(500, e.what());
  }
}

Response ok(const json& body) {
  return {200, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}

std::string destination_text(const DAG& dag, const Asset& asset) {
  Destination* destination = dag.destination_of(asset);
  return destination != nullptr ? postgres::redact(destination->url()) : std::string();
}

json run_json(const RunRecord& r) {
  return json{{"run_id", r.run_id},
              {"command_line", r.command_line},
              {"window", r.window.empty() ? json(nullptr) : json(r.window)},
              {"started", r.started.to_string()},
              {"finished", r.finished.to_string()},
              {"status", run_state_name(r.state)},
              {"partitions", r.partitions},
              {"succeeded", r.succeeded},
              {"failed", r.failed},
              {"canceled", r.canceled},
              {"skipped", r.skipped},
              {"seconds", (r.finished.seconds() - r.started.seconds()).count()}};
}

json ranges_json(const std::vector<PartitionRange>& ranges) {
  json out = json::array();
  for (const PartitionRange& r : ranges) out.push_back({r.first, r.last});
  return out;
}

// The window an asset is shown over: the one asked for, or its default at `now`.
std::unique_ptr<PartitionWindow> shown_window(const Asset& asset, const std::string& text,
                                              TimePoint now) {
  const PartitionConfig& config = *asset.partitioning();
  if (!text.empty()) {
    try {
      return config.parse_window(text);
    } catch (const std::exception& e) {
      throw PartitionError(
          fmt::format("asset '{}': bad window '{}': {}", asset.name(), text, e.what()));
    }
  }
  auto window = config.default_window(now, kRecent);
  if (!window) {
    throw PartitionError(
        fmt::format("asset '{}': {} partitioning has no default window; pass window", asset.name(),
                    config.kind()));
  }
  return window;
}

// Counts of each state per bucket of consecutive partitions, from the ranges alone.
json buckets_json(const PartitionWindow& window, const WindowStatus& status) {
  const std::size_t n = window.size();
  const std::size_t width = (n + kBuckets - 1) / kBuckets;
  const std::size_t count = (n + width - 1) / width;
  std::vector<std::array<std::size_t, 3>> counts(count, {0, 0, 0});
  auto add = [&](const std::vector<PartitionRange>& ranges, std::size_t state) {
    for (const PartitionRange& r : ranges) {
      for (std::size_t b = r.first / width; b <= r.last / width; ++b) {
        const std::size_t lo = std::max(r.first, b * width);
        const std::size_t hi = std::min(r.last, b * width + width - 1);
        counts[b][state] += hi - lo + 1;
      }
    }
  };
  add(status.materialized, 0);
  add(status.failed, 1);
  add(status.missing, 2);
  json out = json::array();
  for (std::size_t b = 0; b < count; ++b) {
    const std::size_t last = std::min(n - 1, b * width + width - 1);
    out.push_back({{"first", window.partition_at(b * width)->key()},
                   {"last", window.partition_at(last)->key()},
                   {"materialized", counts[b][0]},
                   {"failed", counts[b][1]},
                   {"missing", counts[b][2]}});
  }
  return out;
}

// One cell per partition: key and state.
json cells_json(const PartitionWindow& window, const WindowStatus& status) {
  std::vector<char> state(window.size(), 'x');
  for (const auto& r : status.materialized)
    std::fill(state.begin() + r.first, state.begin() + r.last + 1, 'm');
  for (const auto& r : status.failed)
    std::fill(state.begin() + r.first, state.begin() + r.last + 1, 'f');
  json out = json::array();
  const std::vector<std::string> keys = window.keys();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out.push_back({{"key", keys[i]},
                   {"state", state[i] == 'm'   ? "materialized"
                             : state[i] == 'f' ? "failed"
                                               : "missing"}});
  }
  return out;
}

json failure_json(const PartitionWindow& window, const FailedRange& f) {
  const std::string first = window.partition_at(f.range.first)->key();
  return {{"partitions", f.range.first == f.range.last
                             ? first
                             : first + ".." + window.partition_at(f.range.last)->key()},
          {"run_id", f.record.run_id},
          {"finished", f.record.finished.to_string()},
          {"error", f.record.error}};
}

// The failure of `window` that ended last, or null. Costs what the window's failed stretches
// cost: the store keeps no time for materialized partitions, only for failed ones.
json last_failure_json(MaterializationStore& store, const Asset& asset,
                       const PartitionWindow& window) {
  const std::vector<FailedRange> failures =
      store.failures(asset.dataset(), window, std::numeric_limits<std::size_t>::max());
  const auto last = std::max_element(failures.begin(), failures.end(),
                                     [](const FailedRange& a, const FailedRange& b) {
                                       return a.record.finished < b.record.finished;
                                     });
  return last == failures.end() ? json(nullptr) : failure_json(window, *last);
}

// What last ran the asset, any partition, or null.
json last_run_json(MaterializationStore& store, const Asset& asset) {
  const std::optional<MaterializationRecord> last = store.last_record(asset.dataset());
  if (!last) return nullptr;
  json out{
      {"run_id", last->run_id},
      {"status", last->status == MaterializationStatus::materialized ? "materialized" : "failed"},
      {"rows", last->rows},
      {"started", last->started.to_string()},
      {"finished", last->finished.to_string()}};
  if (last->status == MaterializationStatus::failed) out["error"] = last->error;
  return out;
}

json text_or_null(const std::string& text) { return text.empty() ? json(nullptr) : json(text); }

std::string unpartitioned_state(const std::optional<MaterializationRecord>& latest) {
  if (!latest) return "missing";
  return latest->status == MaterializationStatus::materialized ? "materialized" : "failed";
}

// The backfills of `pipeline` in `q` (nullptr: no queue), newest first.
json queue_json(queue::Queue* q, const std::string& pipeline) {
  if (q == nullptr) return nullptr;
  json out{{"url", q->display()}, {"pipeline", pipeline}};
  // The queue lives on another server: when it fails, the page still shows the store's runs.
  try {
    const std::vector<queue::BackfillStatus> found = q->status(pipeline);
    const std::vector<queue::RunningTask> running = q->running(pipeline);
    json backfills = json::array();
    for (auto it = found.rbegin(); it != found.rend() && backfills.size() < kShownBackfills; ++it) {
      backfills.push_back(queue::backfill_json(*it, running));
    }
    out["backfills"] = backfills;
  } catch (const std::exception& e) {
    out["error"] = e.what();
  }
  return out;
}

}  // namespace

ApiOptions::ApiOptions() = default;
ApiOptions::~ApiOptions() = default;
ApiOptions::ApiOptions(ApiOptions&&) noexcept = default;
ApiOptions& ApiOptions::operator=(ApiOptions&&) noexcept = default;

Api::Api(const DAG& dag, std::shared_ptr<MaterializationStore> store, ApiOptions options)
    : dag_(dag), store_(std::move(store)), options_(std::move(options)) {
  for (const Source& source : dag_.sources()) {
    if (!source.description().empty()) {
      source_descriptions_.emplace(source.name(), source.description());
    }
  }
}

const std::string& Api::source_description(const Asset& asset) const {
  static const std::string none;
  const auto found = source_descriptions_.find(asset.source_name());
  return found != source_descriptions_.end() ? found->second : none;
}

Api::~Api() = default;

TimePoint Api::now() const {
  return options_.clock != nullptr ? options_.clock->now() : SystemClock().now();
}

Response Api::get(const std::string& path, const std::string& window) {
  std::lock_guard lock(mutex_);
  return answer([&]() -> Response {
    if (path == "/api/overview") return overview();
    if (path == "/api/lineage") return lineage();
    if (path == "/api/runs") return runs();
    const std::string prefix = "/api/assets/";
    if (path.rfind(prefix, 0) == 0) {
      const std::string rest = path.substr(prefix.size());
      const auto slash = rest.find('/');
      const std::string name = rest.substr(0, slash);
      if (slash == std::string::npos) return grid(name, window);
      const std::string tail = rest.substr(slash + 1);
      const std::string partitions = "partitions/";
      if (tail.rfind(partitions, 0) == 0) return partition(name, tail.substr(partitions.size()));
    }
    return error(404, fmt::format("no such path '{}'", path));
  });
}

Response Api::backfill(const std::string& name, const std::string& text, const StartBackfill& start,
                       std::size_t max_partitions) {
  std::lock_guard lock(mutex_);
  return answer([&]() -> Response {
    const Asset* asset = dag_.find(name);
    if (asset == nullptr) return error(400, fmt::format("unknown asset '{}'", name));
    std::string window;
    if (asset->partitioning() != nullptr) {
      const std::unique_ptr<PartitionWindow> shown = shown_window(*asset, text, now());
      window = shown->to_string();
      if (shown->size() > max_partitions) {
        return error(422, fmt::format("asset '{}': window {} has {} partitions, more than the {} "
                                      "a run started from this page may cover (serve "
                                      "--max-run-partitions); choose a smaller window, or run "
                                      "`interloper backfill`",
                                      name, window, shown->size(), max_partitions));
      }
    }
    if (!start(name, window)) {
      return error(409, fmt::format("asset '{}': the backfill started from this page earlier "
                                    "still runs; start another once it has finished",
                                    name));
    }
    return ok({{"asset", name}, {"window", window}, {"started", true}});
  });
}

Response Api::overview() {
  const TimePoint at = now();
  json assets = json::array();
  for (const Asset* asset : dag_.order()) {
    json entry{{"name", asset->name()},
               {"description", text_or_null(asset->description())},
               {"source", asset->source_name()},
               {"source_description", text_or_null(source_description(*asset))},
               {"deps", asset->deps()},
               {"enabled", asset->enabled()},
               {"destination", destination_text(dag_, *asset)},
               {"last_run", last_run_json(*store_, *asset)}};
    const PartitionConfig* config = asset->partitioning();
    if (config == nullptr) {
      const auto latest = store_->latest(asset->dataset(), nullptr);
      const std::string state = unpartitioned_state(latest);
      entry["partitioning"] = nullptr;
      entry["window"] = nullptr;
      entry["partitions"] = 1;
      entry["materialized"] = state == "materialized" ? 1 : 0;
      entry["failed"] = state == "failed" ? 1 : 0;
      entry["missing"] = state == "missing" ? 1 : 0;
      entry["last_failure"] = state == "failed" ? json{{"partitions", ""},
                                                       {"run_id", latest->run_id},
                                                       {"finished", latest->finished.to_string()},
                                                       {"error", latest->error}}
                                                : json(nullptr);
    } else {
      entry["partitioning"] = json::parse(config->to_definition());
      std::unique_ptr<PartitionWindow> window;
      try {
        window = shown_window(*asset, options_.window, at);
      } catch (const PartitionError&) {
        window = shown_window(*asset, "", at);  // the window given is another asset's kind
      }
      const WindowStatus status = store_->status(asset->dataset(), *window);
      entry["window"] = window->to_string();
      entry["partitions"] = window->size();
      entry["materialized"] = status.count(status.materialized);
      entry["failed"] = status.count(status.failed);
      entry["missing"] = status.count(status.missing);
      entry["last_failure"] =
          status.failed.empty() ? json(nullptr) : last_failure_json(*store_, *asset, *window);
    }
    assets.push_back(entry);
  }
  const std::vector<RunRecord> last = store_->runs(options_.pipeline, 1);
  return ok({{"pipeline", options_.pipeline},
             {"assets", assets},
             {"last_run", last.empty() ? json(nullptr) : run_json(last.front())}});
}

Response Api::grid(const std::string& name, const std::string& window_text) {
  const Asset* asset = dag_.find(name);
  if (asset == nullptr) return error(400, fmt::format("unknown asset '{}'", name));
  json out{{"asset", name},
           {"description", text_or_null(asset->description())},
           {"source", asset->source_name()},
           {"source_description", text_or_null(source_description(*asset))},
           {"destination", destination_text(dag_, *asset)}};
  const PartitionConfig* config = asset->partitioning();
  if (config == nullptr) {
    const std::string state = unpartitioned_state(store_->latest(asset->dataset(), nullptr));
    out["kind"] = nullptr;
    out["window"] = nullptr;
    out["partitions"] = 1;
    out["cells"] = json::array({{{"key", ""}, {"state", state}}});
    return ok(out);
  }
  const std::unique_ptr<PartitionWindow> window = shown_window(*asset, window_text, now());
  const WindowStatus status = store_->status(asset->dataset(), *window);
  const auto time = window->as_time_window();
  out["kind"] = config->kind();
  out["granularity"] = time ? json(time->granularity().name()) : json(nullptr);
  out["window"] = window->to_string();
  out["partitions"] = window->size();
  out["counts"] = {{"materialized", status.count(status.materialized)},
                   {"failed", status.count(status.failed)},
                   {"missing", status.count(status.missing)}};
  out["ranges"] = {{"materialized", ranges_json(status.materialized)},
                   {"failed", ranges_json(status.failed)},
                   {"missing", ranges_json(status.missing)}};
  json failures = json::array();
  for (const FailedRange& f : store_->failures(asset->dataset(), *window, kShownFailures)) {
    failures.push_back(failure_json(*window, f));
  }
  out["failures"] = failures;
  if (window->size() <= kMaxCells) {
    out["cells"] = cells_json(*window, status);
  } else {
    out["buckets"] = buckets_json(*window, status);
  }
  return ok(out);
}
Response Api::partition(const std::string& name, const std::string& key) {
  const Asset* asset = dag_.find(name);
  if (asset == nullptr) return error(400, fmt::format("unknown asset '{}'", name));
  std::unique_ptr<Partition> partition;
  if (asset->partitioning() != nullptr) {
    try {
      partition = asset->partitioning()->partition(key);
    } catch (const std::exception& e) {
      return error(400, fmt::format("asset '{}': bad partition '{}': {}", name, key, e.what()));
    }
  }
  const auto latest = store_->latest(asset->dataset(), partition.get());
  json out{{"asset", name},
           {"key", partition ? partition->key() : ""},
           {"state", unpartitioned_state(latest)}};
  // The store keeps details (run id, rows, times, error) of failures only: a materialized
  // partition shares one stored range with its neighbours.
  if (latest && !latest->run_id.empty()) {
    out["rows"] = latest->rows;
    out["run_id"] = latest->run_id;
    out["started"] = latest->started.to_string();
    out["finished"] = latest->finished.to_string();
    out["error"] = latest->error;
  }
  return ok(out);
}

Response Api::lineage() {
  // Layered: an asset sits one layer below its deepest dependency.
  std::unordered_map<std::string, int> layer;
  json nodes = json::array();
  json edges = json::array();
  for (const Asset* asset : dag_.order()) {
    int depth = 0;
    for (const std::string& dep : asset->deps()) {
      depth = std::max(depth, layer[dep] + 1);
      edges.push_back({{"from", dep}, {"to", asset->name()}});
    }
    layer[asset->name()] = depth;
    nodes.push_back({{"name", asset->name()}, {"source", asset->source_name()}, {"layer", depth}});
  }
  return ok({{"nodes", nodes}, {"edges", edges}});
}

Response Api::runs() {
  json history = json::array();
  for (const RunRecord& r : store_->runs(options_.pipeline, kShownRuns)) {
    history.push_back(run_json(r));
  }
  const TimePoint at = now();
  json jobs = json::array();
  for (const Job& job : options_.jobs) {
    json fires = json::array();
    TimePoint fire = at;
    for (std::size_t i = 0; i < kShownFires; ++i) {
      fire = job.next_fire(fire);
      fires.push_back(fire_json(job, fire));
    }
    jobs.push_back({{"name", job.name},
                    {"cron", job.cron.text()},
                    {"time_zone", job.time_zone},
                    {"assets", job.assets},
                    {"mode", job_mode_name(job.mode)},
                    {"next_fires", fires}});
  }
  return ok({{"runs", history},
             {"jobs", jobs},
             {"queue", queue_json(options_.queue.get(), options_.queue_pipeline)}});
}

}  // namespace interloper::serve
