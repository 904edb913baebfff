#include "interloper/serve/api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "interloper/destination.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/queue/queue_json.hpp"
#include "interloper/run/asset_status.hpp"
#include "interloper/run/report_json.hpp"
#include "interloper/serve/status_json.hpp"

namespace interloper::serve {

namespace {

using json = nlohmann::ordered_json;

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

// The state of one partition (or of an unpartitioned asset) from its latest record.
std::string partition_state(const Asset& asset,
                            const std::optional<MaterializationRecord>& latest) {
  if (!latest) return "missing";
  if (latest->status == MaterializationStatus::failed) return "failed";
  const bool stale =
      !latest->definition.empty() && latest->definition != asset.definition_fingerprint();
  return stale ? "stale" : "materialized";
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
    if (path == "/api/status") return status(window);
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

std::unique_ptr<PartitionWindow> Api::window_of(const Asset& asset, const std::string& text,
                                                TimePoint at) const {
  if (!text.empty()) return status_window(asset, text, at, true);
  if (!options_.window.empty()) {
    // The server's --window, when the asset's partitioning takes it.
    if (auto shared = status_window(asset, options_.window, at, false)) return shared;
  }
  return status_window(asset, "", at, false);
}

Response Api::backfill(const std::string& name, const std::string& text, const StartBackfill& start,
                       std::size_t max_partitions) {
  std::lock_guard lock(mutex_);
  return answer([&]() -> Response {
    const Asset* asset = dag_.find(name);
    if (asset == nullptr) return error(400, fmt::format("unknown asset '{}'", name));
    std::string window;
    if (asset->partitioning() != nullptr) {
      const std::unique_ptr<PartitionWindow> shown = window_of(*asset, text, now());
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

Response Api::status(const std::string& text) {
  const std::vector<AssetStatus> report = status_report(
      *store_, dag_, {}, text.empty() ? options_.window : text, now(), StatusOptions());
  json out = json::array();
  for (const AssetStatus& shown : report) out.push_back(status_json(shown));
  return ok(out);
}

json Api::overview_entry(const Asset& asset, TimePoint at) {
  json entry{{"name", asset.name()},
             {"description", text_or_null(asset.description())},
             {"source", asset.source_name()},
             {"source_description", text_or_null(source_description(asset))},
             {"deps", asset.deps()},
             {"enabled", asset.enabled()},
             {"destination", destination_text(dag_, asset)},
             {"last_run", last_run_json(*store_, asset)}};
  const PartitionConfig* config = asset.partitioning();
  if (config == nullptr) {
    const AssetStatus shown = asset_status(*store_, dag_, asset, nullptr, StatusOptions());
    const bool stale = shown.state == "stale";
    entry["partitioning"] = nullptr;
    entry["window"] = nullptr;
    entry["partitions"] = 1;
    entry["materialized"] = shown.state == "materialized" || stale ? 1 : 0;
    entry["stale"] = stale ? 1 : 0;
    entry["failed"] = shown.state == "failed" ? 1 : 0;
    entry["missing"] = shown.state == "missing" ? 1 : 0;
    entry["last_failure"] = nullptr;
    if (shown.state == "failed") {
      const auto latest = store_->latest(asset.dataset(), nullptr);
      entry["last_failure"] = {{"partitions", ""},
                               {"run_id", latest ? latest->run_id : ""},
                               {"finished", latest ? latest->finished.to_string() : ""},
                               {"error", shown.error}};
    }
    return entry;
  }
  entry["partitioning"] = json::parse(config->to_definition());
  const AssetStatus shown =
      asset_status(*store_, dag_, asset, window_of(asset, "", at), StatusOptions());
  entry["window"] = shown.window->to_string();
  entry["partitions"] = shown.window->size();
  entry["materialized"] = shown.status.count(shown.status.materialized);
  entry["stale"] = shown.status.count(shown.stale);
  entry["failed"] = shown.status.count(shown.status.failed);
  entry["missing"] = shown.status.count(shown.status.missing);
  entry["last_failure"] = last_failure_json(shown);
  return entry;
}

Response Api::overview() {
  const TimePoint at = now();
  json assets = json::array();
  for (const Asset* asset : dag_.order()) assets.push_back(overview_entry(*asset, at));
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
    const AssetStatus shown = asset_status(*store_, dag_, *asset, nullptr, StatusOptions());
    out["kind"] = nullptr;
    out["window"] = nullptr;
    out["partitions"] = 1;
    out["cells"] = json::array({{{"key", ""}, {"state", shown.state}}});
    return ok(out);
  }
  StatusOptions options;
  options.max_failures = kShownFailures;
  const AssetStatus shown =
      asset_status(*store_, dag_, *asset, window_of(*asset, window_text, now()), options);
  const PartitionWindow& window = *shown.window;
  const WindowStatus& status = shown.status;
  const auto time = window.as_time_window();
  out["kind"] = config->kind();
  out["granularity"] = time ? json(time->granularity().name()) : json(nullptr);
  out["window"] = window.to_string();
  out["partitions"] = window.size();
  out["counts"] = {{"materialized", status.count(status.materialized)},
                   {"stale", status.count(shown.stale)},
                   {"failed", status.count(status.failed)},
                   {"missing", status.count(status.missing)}};
  out["ranges"] = {{"materialized", ranges_json(status.materialized)},
                   {"stale", ranges_json(shown.stale)},
                   {"failed", ranges_json(status.failed)},
                   {"missing", ranges_json(status.missing)}};
  json failures = json::array();
  for (const FailedRange& f : shown.failures) failures.push_back(failure_json(window, f));
  out["failures"] = failures;
  if (window.size() <= kMaxCells) {
    out["cells"] = cells_json(shown);
  } else {
    out["buckets"] = buckets_json(shown);
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
           {"state", partition_state(*asset, latest)}};
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
