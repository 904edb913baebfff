#include "interloper/run/asset_status.hpp"

#include <fmt/format.h>

#include "interloper/plan.hpp"

namespace interloper {

using json = nlohmann::ordered_json;

std::string window_text_shape(const std::string& window_text) {
  const std::string first = window_text.substr(0, window_text.find(".."));
  if (auto g = TimeGranularity::infer(first)) return std::string(g->name());
  return "list";
}

std::unique_ptr<PartitionWindow> window_share(const PartitionConfig& config,
                                              const std::string& window_text) {
  return config.select_window(window_text);
}

std::unique_ptr<PartitionWindow> status_window(const Asset& asset, const std::string& window_text,
                                               TimePoint now, bool strict) {
  const PartitionConfig& config = *asset.partitioning();
  if (window_text.empty()) {
    auto window = config.default_window(now, kStatusRecentPeriods);
    if (!window) {
      throw PartitionError(
          fmt::format("asset '{}': {} partitioning has no default window; pass --window",
                      asset.name(), config.kind()));
    }
    return window;
  }
  try {
    return window_share(config, window_text);
  } catch (const std::exception& e) {
    if (strict) {
      throw PartitionError(
          fmt::format("asset '{}': bad window '{}': {}", asset.name(), window_text, e.what()));
    }
    return nullptr;  // another kind or granularity: not this asset's window
  }
}

namespace {

VerifiedPartitions verify_partitions(const DAG& dag, const Asset& asset,
                                     const PartitionWindow& window,
                                     const std::vector<PartitionRange>& materialized) {
  VerifiedPartitions out;
  if (materialized.empty()) return out;
  Destination* destination = dag.destination_of(asset);
  if (destination == nullptr) {
    out.gone = materialized;
    return out;
  }
  std::vector<PartitionCheck> checks = destination->check_partitions(asset.dataset(), window);
  for (const PartitionRange& range : materialized) {
    for (std::size_t i = range.first; i <= range.last && i < checks.size(); ++i) {
      if (checks[i].state == PartitionCheck::State::changed) {
        out.changed.push_back(std::move(checks[i]));
      } else if (checks[i].state == PartitionCheck::State::missing) {
        if (!out.gone.empty() && out.gone.back().last + 1 == i) {
          out.gone.back().last = i;
        } else {
          out.gone.push_back({i, i});
        }
      }
    }
  }
  return out;
}

void unpartitioned_state(MaterializationStore& store, const Asset& asset, AssetStatus& out) {
  const auto latest = store.latest(asset.dataset(), nullptr);
  if (!latest) {
    out.state = "missing";
  } else if (latest->status == MaterializationStatus::failed) {
    out.state = "failed";
    out.error = latest->error;
  } else if (!latest->definition.empty() && latest->definition != asset.definition_fingerprint()) {
    out.state = "stale";
  } else {
    out.state = "materialized";
  }
}

}  // namespace

AssetStatus asset_status(MaterializationStore& store, const DAG& dag, const Asset& asset,
                         std::unique_ptr<PartitionWindow> window, const StatusOptions& options) {
  AssetStatus out;
  out.asset = &asset;
  if (window == nullptr) {
    unpartitioned_state(store, asset, out);
    return out;
  }
  out.window = std::move(window);
  const PartitionWindow& w = *out.window;
  out.status = store.status(asset.dataset(), w);
  out.stale = out.status.stale(asset.definition_fingerprint());
  const std::size_t asked = options.max_failures == static_cast<std::size_t>(-1)
                                ? options.max_failures
                                : options.max_failures + 1;
  out.failures = store.failures(asset.dataset(), w, asked);
  if (out.failures.size() > options.max_failures) {
    out.more_failures = true;
    out.failures.resize(options.max_failures);
  }
  if (options.verify) out.verified = verify_partitions(dag, asset, w, out.status.materialized);
  return out;
}

std::vector<AssetStatus> status_report(MaterializationStore& store, const DAG& dag,
                                       const std::vector<const Asset*>& assets,
                                       const std::string& window_text, TimePoint now,
                                       const StatusOptions& options) {
  const bool named = !assets.empty();
  const std::vector<const Asset*> chosen = named ? assets : dag.order();
  std::vector<AssetStatus> out;
  bool any_window_accepted = window_text.empty();
  for (const Asset* asset : chosen) {
    std::unique_ptr<PartitionWindow> window;
    if (asset->partitioning() != nullptr) {
      window = status_window(*asset, window_text, now, named);
      if (!window) continue;
      any_window_accepted = true;
    }
    out.push_back(asset_status(store, dag, *asset, std::move(window), options));
  }
  if (!any_window_accepted) {
    throw PartitionError(fmt::format("no asset accepts window '{}'", window_text));
  }
  return out;
}

json status_ranges_json(const PartitionWindow& window, const std::vector<PartitionRange>& ranges) {
  json out = json::array();
  for (const auto& r : ranges) {
    std::string first = window.partition_at(r.first)->key();
    out.push_back(r.first == r.last ? first : first + ".." + window.partition_at(r.last)->key());
  }
  return out;
}

json status_json(const AssetStatus& r) {
  json entry;
  entry["asset"] = r.asset->name();
  if (!r.window) {
    entry["window"] = nullptr;
    entry["state"] = r.state;
    if (r.state == "failed") entry["error"] = r.error;
    return entry;
  }
  const PartitionWindow& w = *r.window;
  entry["window"] = w.to_string();
  entry["partitions"] = w.size();
  entry["materialized"] = status_ranges_json(w, r.status.materialized);
  entry["failed"] = status_ranges_json(w, r.status.failed);
  entry["missing"] = status_ranges_json(w, r.status.missing);
  entry["stale"] = status_ranges_json(w, r.stale);
  json failures = json::array();
  for (const FailedRange& f : r.failures) {
    failures.push_back({{"partitions", status_ranges_json(w, {f.range})[0]},
                        {"run_id", f.record.run_id},
                        {"finished", f.record.finished.to_string()},
                        {"error", f.record.error}});
  }
  entry["failures"] = failures;
  if (r.verified) {
    entry["gone"] = status_ranges_json(w, r.verified->gone);
    json changed = json::array();
    for (const PartitionCheck& c : r.verified->changed) {
      changed.push_back({{"partition", c.key}, {"object", c.object}, {"reason", c.reason}});
    }
    entry["changed"] = changed;
  }
  return entry;
}

}  // namespace interloper
