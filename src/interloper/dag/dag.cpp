// DAG construction: name resolution, wiring checks, topological order, selection.
#include "interloper/dag.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "interloper/dataset.hpp"

namespace interloper {

DAG::DAG(std::vector<Source> sources, std::vector<Asset> loose_assets)
    : sources_(std::move(sources)), loose_(std::move(loose_assets)) {
  build();
}

DAG::DAG(const DAG& other)
    : sources_(other.sources_),
      loose_(other.loose_),
      external_assets_(other.external_assets_),
      external_(other.external_) {
  build();
}

DAG& DAG::operator=(const DAG& other) {
  if (this != &other) {
    DAG copy(other);
    *this = std::move(copy);
  }
  return *this;
}

void DAG::build() {
  order_.clear();
  std::vector<const Asset*> declared;
  std::unordered_map<std::string_view, std::size_t> index;
  auto add = [&](const Asset& asset) {
    auto [it, inserted] = index.emplace(asset.name(), declared.size());
    if (!inserted) {
      const Asset& first = *declared[it->second];
      throw DagError(fmt::format("duplicate asset name '{}' (in source '{}' and source '{}')",
                                 asset.name(), first.source_name(), asset.source_name()));
    }
    declared.push_back(&asset);
  };
  for (const Source& source : sources_) {
    for (const Asset& asset : source.assets()) add(asset);
  }
  for (const Asset& asset : loose_) add(asset);

  // Dependencies: known names (or externals of a selection), compatible partitionings.
  std::vector<std::vector<std::size_t>> downstream(declared.size());
  std::vector<std::size_t> pending(declared.size(), 0);
  for (std::size_t i = 0; i < declared.size(); ++i) {
    const Asset& asset = *declared[i];
    for (const std::string& dep : asset.deps()) {
      const Asset* upstream = nullptr;
      auto it = index.find(dep);
      if (it != index.end()) {
        upstream = declared[it->second];
        downstream[it->second].push_back(i);
        ++pending[i];
      } else {
        upstream = external(dep);
        if (upstream == nullptr) {
          throw DagError(
              fmt::format("asset '{}' depends on unknown asset '{}'", asset.name(), dep));
        }
      }
      const PartitionConfig* up = upstream->partitioning();
      const PartitionConfig* down = asset.partitioning();
      if (up != nullptr && down != nullptr && !(up->compatible(*down) && down->compatible(*up))) {
        throw DagError(fmt::format(
            "asset '{}' (partitioned {}) depends on asset '{}' (partitioned {}): the two "
            "partitionings do not accept the same windows",
            asset.name(), down->to_definition(), upstream->name(), up->to_definition()));
      }
    }
  }

  // Kahn's algorithm; the smallest declaration index goes first among ready assets.
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < declared.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<std::size_t> remaining = pending;
  while (!ready.empty()) {
    std::size_t i = ready.top();
    ready.pop();
    order_.push_back(declared[i]);
    for (std::size_t d : downstream[i]) {
      if (--remaining[d] == 0) ready.push(d);
    }
  }
  if (order_.size() == declared.size()) return;

  // Some assets never became ready: find one cycle among them and name it, upstream first.
  std::vector<int> color(declared.size(), 0);  // 0 unseen, 1 on the path, 2 done
  std::vector<std::size_t> path;
  std::vector<std::size_t> cycle;
  std::function<bool(std::size_t)> visit = [&](std::size_t i) {
    color[i] = 1;
    path.push_back(i);
    for (std::size_t d : downstream[i]) {
      if (color[d] == 1) {
        auto start = std::find(path.begin(), path.end(), d);
        cycle.assign(start, path.end());
        cycle.push_back(d);
        return true;
      }
      if (color[d] == 0 && visit(d)) return true;
    }
    path.pop_back();
    color[i] = 2;
    return false;
  };
  for (std::size_t i = 0; i < declared.size() && cycle.empty(); ++i) {
    if (remaining[i] > 0 && color[i] == 0) visit(i);
  }
  std::string names;
  for (std::size_t i : cycle) {
    if (!names.empty()) names += " -> ";
    names += declared[i]->name();
  }
  throw DagError(fmt::format("dependency cycle: {}", names));
}

const Asset* DAG::find(std::string_view name) const {
  for (const Asset* asset : order_) {
    if (asset->name() == name) return asset;
  }
  return nullptr;
}

const Asset& DAG::asset(std::string_view name) const {
  const Asset* found = find(name);
  if (found == nullptr) throw DagError(fmt::format("unknown asset '{}'", name));
  return *found;
}

const Asset* DAG::external(std::string_view name) const {
  for (const Asset& asset : external_assets_) {
    if (asset.name() == name) return &asset;
  }
  return nullptr;
}

Destination* DAG::destination_of(const Asset& asset) const {
  if (asset.destination()) return asset.destination().get();
  for (const Source& source : sources_) {
    if (source.name() == asset.source_name()) return source.destination().get();
  }
  return nullptr;
}

std::vector<const Asset*> DAG::upstream(std::string_view name) const {
  const Asset& target = asset(name);
  std::vector<const Asset*> result;
  for (const Asset* candidate : order_) {
    const auto& deps = target.deps();
    if (std::find(deps.begin(), deps.end(), candidate->name()) != deps.end()) {
      result.push_back(candidate);
    }
  }
  return result;
}

std::vector<const Asset*> DAG::downstream(std::string_view name) const {
  const Asset& target = asset(name);
  std::vector<const Asset*> result;
  for (const Asset* candidate : order_) {
    const auto& deps = candidate->deps();
    if (std::find(deps.begin(), deps.end(), target.name()) != deps.end()) {
      result.push_back(candidate);
    }
  }
  return result;
}

DAG DAG::select(const std::vector<std::string>& names, bool with_upstream) const {
  std::unordered_set<std::string> chosen;
  std::vector<std::string> todo;
  for (const std::string& name : names) {
    asset(name);  // throws on an unknown name
    if (chosen.insert(name).second) todo.push_back(name);
  }
  while (with_upstream && !todo.empty()) {
    std::string name = std::move(todo.back());
    todo.pop_back();
    const Asset* a = find(name);
    if (a == nullptr) continue;  // an external of this DAG stays external
    for (const std::string& dep : a->deps()) {
      if (find(dep) != nullptr && chosen.insert(dep).second) todo.push_back(dep);
    }
  }

  DAG result;
  for (const Source& source : sources_) {
    Source copy(source.name(), source.destination());
    for (const Asset& a : source.assets()) {
      if (chosen.count(a.name()) != 0) copy.add(a);
    }
    if (!copy.assets().empty()) result.sources_.push_back(std::move(copy));
  }
  for (const Asset& a : loose_) {
    if (chosen.count(a.name()) != 0) result.loose_.push_back(a);
  }
  // Dependencies left outside the selection are kept to be read, never run.
  for (const Asset* a : order_) {
    if (chosen.count(a->name()) == 0) continue;
    for (const std::string& dep : a->deps()) {
      if (chosen.count(dep) != 0 || result.external(dep) != nullptr) continue;
      const Asset* original = find(dep);
      if (original == nullptr) original = external(dep);
      Asset kept = *original;
      if (!kept.destination()) {
        Destination* resolved = destination_of(*original);
        if (resolved != nullptr) {
          // Share ownership with the source that holds it.
          for (const Source& source : sources_) {
            if (source.destination().get() == resolved) {
              kept.destination(source.destination());
              break;
            }
          }
        }
      }
      result.external_assets_.push_back(std::move(kept));
      result.external_.push_back(dep);
    }
  }
  result.build();
  return result;
}

}  // namespace interloper
