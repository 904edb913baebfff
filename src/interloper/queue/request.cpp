// Backfill requests as values: their JSON document, the window they name, and the plan a worker
// runs from them.
#include "interloper/queue/request.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace interloper::queue {

using json = nlohmann::ordered_json;

namespace {

constexpr int kVersion = 1;

json window_json(const WindowValue& w) {
  if (w.empty()) return nullptr;
  json out = json::object();
  if (w.is_time()) {
    out["granularity"] = w.granularity;
  } else {
    out["kind"] = w.kind;
    out["column"] = w.column;
  }
  out["first"] = w.first;
  out["last"] = w.last;
  out["size"] = w.size;
  return out;
}

WindowValue window_from(const json& j) {
  WindowValue w;
  if (j.is_null()) return w;
  if (j.contains("granularity")) {
    w.granularity = j.at("granularity").get<std::string>();
  } else {
    w.kind = j.at("kind").get<std::string>();
    w.column = j.at("column").get<std::string>();
  }
  w.first = j.at("first").get<std::string>();
  w.last = j.at("last").get<std::string>();
  w.size = j.at("size").get<std::size_t>();
  if (w.first.empty() || w.last.empty()) throw std::invalid_argument("a window without keys");
  return w;
}

}  // namespace

std::string WindowValue::to_string() const {
  if (empty()) return "";
  return first == last ? first : first + ".." + last;
}

WindowValue window_value(const PartitionWindow& window, std::string_view column) {
  WindowValue out;
  out.size = window.size();
  if (const std::optional<TimePartitionWindow> time = window.as_time_window()) {
    const TimeGranularity& g = time->granularity();
    out.granularity = std::string(g.name());
    out.first = g.format(time->start());
    out.last = g.format(time->end());
    return out;
  }
  out.kind = std::string(window.kind());
  out.column = std::string(column);
  out.first = window.partition_at(0)->key();
  out.last = window.partition_at(window.size() - 1)->key();
  return out;
}

std::string BackfillRequest::window_text() const {
  return typed() ? window.to_string() : legacy_window;
}

std::vector<std::string> BackfillRequest::asset_names() const {
  std::vector<std::string> out;
  out.reserve(assets.size());
  for (const AssetShare& share : assets) out.push_back(share.asset);
  return out;
}

std::string BackfillRequest::to_json() const {
  json shares = json::array();
  for (const AssetShare& share : assets) {
    shares.push_back({{"asset", share.asset}, {"window", window_json(share.window)}});
  }
  const json out = {{"version", kVersion},
                    {"window", window_json(window)},
                    {"assets", shares},
                    {"options",
                     {{"missing", options.missing}, {"max_attempts", options.max_attempts}}},
                    {"plan", plan}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

BackfillRequest BackfillRequest::from_json(std::string_view text) {
  try {
    const json j = json::parse(text);
    const int version = j.at("version").get<int>();
    if (version != kVersion) {
      throw std::invalid_argument(
          fmt::format("version {} (this build reads version {})", version, kVersion));
    }
    BackfillRequest out;
    out.window = window_from(j.at("window"));
    for (const json& share : j.at("assets")) {
      out.assets.push_back({share.at("asset").get<std::string>(), window_from(share.at("window"))});
    }
    out.options.missing = j.at("options").at("missing").get<bool>();
    out.options.max_attempts = j.at("options").at("max_attempts").get<int>();
    out.plan = j.at("plan").get<std::string>();
    return out;
  } catch (const std::exception& e) {
    throw RunError(fmt::format("queue: a stored backfill request is malformed: {}", e.what()));
  }
}

BackfillRequest BackfillRequest::legacy(std::string window, const std::vector<std::string>& assets,
                                        int max_attempts) {
  BackfillRequest out;
  out.legacy_window = std::move(window);
  for (const std::string& name : assets) out.assets.push_back({name, {}});
  out.options.max_attempts = max_attempts;
  return out;
}

BackfillRequest make_request(const Plan& plan, const PartitionWindow& window,
                             RequestOptions options) {
  BackfillRequest out;
  std::string column;
  for (const Plan::Step& step : plan.steps()) {
    AssetShare share{step.asset->name(), {}};
    if (step.share) {
      share.window = window_value(*step.share, step.asset->partitioning()->column());
      if (column.empty()) column = step.asset->partitioning()->column();
    }
    out.assets.push_back(std::move(share));
  }
  out.window = window_value(window, column);
  out.options = options;
  out.plan = plan_fingerprint(plan);
  return out;
}

std::string plan_fingerprint(const Plan& plan) {
  std::string text;
  for (const Plan::Step& step : plan.steps()) {
    text += fmt::format("{}\x1f{}\x1f{}\x1f{}\x1e", step.asset->name(),
                        step.share ? step.share->to_string() : std::string(), step.first_task,
                        step.tasks);
  }
  return fingerprint(text);
}

namespace {

// A legacy request's text, read as `backfill` read it when it was enqueued: by the partitioning
// of the first partitioned asset (PartitionConfig::read_window), or as a time window of the
// keys' own granularity.
std::unique_ptr<PartitionWindow> read_text(const PartitionConfig& config, std::string_view text) {
  try {
    return config.read_window(text);
  } catch (const std::exception&) {
    return TimePartitionWindow::parse(text).clone();
  }
}

const PartitionConfig* first_partitioning(const DAG& dag, const BackfillRequest& request,
                                          bool of_window_kind) {
  for (const AssetShare& share : request.assets) {
    const Asset* asset = dag.find(share.asset);
    if (asset == nullptr) {
      throw RunError(fmt::format("the pipeline has no asset '{}'", share.asset));
    }
    if (asset->partitioning() == nullptr) continue;
    if (!of_window_kind || share.window.kind == request.window.kind) return asset->partitioning();
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<PartitionWindow> read_window(const DAG& dag, const BackfillRequest& request) {
  try {
    if (!request.typed()) {
      const PartitionConfig* config = first_partitioning(dag, request, false);
      if (config == nullptr) throw RunError("none of its assets is partitioned");
      return read_text(*config, request.legacy_window);
    }
    const WindowValue& w = request.window;
    if (w.empty()) throw RunError("it names no window");
    if (w.is_time()) {
      const TimeGranularity g = TimeGranularity::from_name(w.granularity);
      return TimePartitionWindow(g.parse(w.first), g.parse(w.last), g).clone();
    }
    const PartitionConfig* config = first_partitioning(dag, request, true);
    if (config == nullptr) {
      throw RunError(fmt::format("none of its assets is partitioned by {}", w.kind));
    }
    return config->window(w.first, w.last);
  } catch (const std::exception& e) {
    throw RunError(fmt::format("queue: cannot read the backfill window '{}': {}",
                               request.window_text(), e.what()));
  }
}

Plan plan_request(const DAG& dag, const BackfillRequest& request) {
  const std::unique_ptr<PartitionWindow> window = read_window(dag, request);
  PlanOptions options;
  options.scope = TaskScope::per_partition;
  options.assets = request.asset_names();
  Plan out = plan(dag, window.get(), options);
  if (request.typed() && plan_fingerprint(out) != request.plan) {
    const BackfillRequest again = make_request(out, *window, request.options);
    std::string difference = "its steps differ";
    for (std::size_t i = 0; i < again.assets.size() && i < request.assets.size(); ++i) {
      if (again.assets[i] != request.assets[i]) {
        difference = fmt::format("asset '{}' has {} here, {} in the queue",
                                 request.assets[i].asset, again.assets[i].window.to_string(),
                                 request.assets[i].window.to_string());
        break;
      }
    }
    throw RunError(fmt::format(
        "queue: the backfill of {} plans differently here (plan {} here, {} in the queue: {})",
        request.window_text(), again.plan, request.plan, difference));
  }
  return out;
}

}  // namespace interloper::queue
