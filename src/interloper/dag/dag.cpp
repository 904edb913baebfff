// DAG construction: name resolution, wiring checks, topological order, selection.
#include "interloper/dag.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "interloper/dataset.hpp"
#include "interloper/mapping.hpp"

namespace interloper {

bool edge_allowed(const PartitionConfig& upstream, const PartitionConfig& downstream) {
  return !PartitionMapping::refusal(upstream, downstream);
}

namespace {

using NameIndex = std::unordered_map<std::string_view, std::size_t>;

// The graph between declared assets, by declaration index: the assets reading asset i are
// readers[first[i]] .. readers[first[i + 1] - 1]; pending[i] counts the declared assets i
// reads. Two flat arrays, rather than a vector per asset.
struct Edges {
  std::vector<std::size_t> first;
  std::vector<std::size_t> readers;
  std::vector<std::size_t> pending;

  std::size_t begin(std::size_t i) const { return first[i]; }
  std::size_t end(std::size_t i) const { return first[i + 1]; }
};

// Every asset of the sources, then the loose ones, in declaration order, and each name's index;
// a name declared twice is an error about its second declaration.
std::vector<const Asset*> declared_assets(const std::vector<Source>& sources,
                                          const std::vector<Asset>& loose, NameIndex& index) {
  std::size_t count = loose.size();
  for (const Source& source : sources) count += source.assets().size();
  std::vector<const Asset*> declared;
  declared.reserve(count);
  index.reserve(count);
  auto add = [&](const Asset& asset) {
    auto [it, inserted] = index.emplace(asset.name(), declared.size());
    if (!inserted) {
      const Asset& first = *declared[it->second];
      throw DagError(fmt::format("duplicate asset name '{}' (in source '{}' and source '{}')",
                                 asset.name(), first.source_name(), asset.source_name()),
                     asset.name());
    }
    declared.push_back(&asset);
  };
  for (const Source& source : sources) {
    for (const Asset& asset : source.assets()) add(asset);
  }
  for (const Asset& asset : loose) add(asset);
  return declared;
}

// Checks the edge from `upstream` to `asset` (its dependency `dep`): partitionings that map as
// the dependency's mapping says, and a dependency on itself that reads earlier partitions only.
void check_edge(const Asset& asset, const Asset& upstream, const std::string& dep) {
  const PartitionConfig* up = upstream.partitioning();
  const PartitionConfig* down = asset.partitioning();
  const DepMapping& declared = asset.mapping(dep);
  // A plain dependency on itself is left to the cycle check.
  const bool self = &upstream == &asset && !declared.is_overlap();
  const std::optional<std::string> refused = PartitionMapping::refusal(up, down, declared, self);
  if (!refused) return;
  if (self || !declared.is_overlap()) {
    throw DagError(fmt::format("asset '{}': dependency '{}' ({}): {}", asset.name(), dep,
                               declared.to_string(), *refused),
                   asset.name(), dep);
  }
  throw DagError(
      fmt::format("asset '{}' (partitioned {}) depends on asset '{}' (partitioned {}): {}",
                  asset.name(), down->to_definition(), upstream.name(), up->to_definition(),
                  *refused),
      asset.name(), dep);
}

// Resolves every dependency to a declared asset or an external one (`external` answers for
// names outside the declarations), checks each edge, and returns the graph.
template <typename External>
Edges dependency_edges(const std::vector<const Asset*>& declared, const NameIndex& index,
                       const External& external) {
  const std::size_t n = declared.size();
  Edges edges;
  edges.pending.assign(n, 0);
  edges.first.assign(n + 1, 0);
  std::vector<std::pair<std::size_t, std::size_t>> links;  // (upstream, reader)
  for (std::size_t i = 0; i < n; ++i) {
    const Asset& asset = *declared[i];
    for (const std::string& dep : asset.deps()) {
      const Asset* upstream = nullptr;
      // A declared mapping on itself is checked below; a plain one is a cycle of the graph.
      if (auto it = index.find(dep);
          it != index.end() && it->second == i && !asset.mapping(dep).is_overlap()) {
        upstream = &asset;  // reads its own earlier partitions: an order of tasks, not of assets
      } else if (it != index.end()) {
        upstream = declared[it->second];
        links.emplace_back(it->second, i);
        ++edges.first[it->second + 1];
        ++edges.pending[i];
      } else if ((upstream = external(dep)) == nullptr) {
        throw DagError(fmt::format("asset '{}' depends on unknown asset '{}'", asset.name(), dep),
                       asset.name(), dep);
      }
      check_edge(asset, *upstream, dep);
    }
  }
  for (std::size_t i = 0; i < n; ++i) edges.first[i + 1] += edges.first[i];
  // Readers in declaration order: links come sorted by reader.
  edges.readers.resize(links.size());
  std::vector<std::size_t> next(edges.first.begin(), edges.first.end() - 1);
  for (const auto& [upstream, reader] : links) edges.readers[next[upstream]++] = reader;
  return edges;
}

// Kahn's algorithm; the smallest declaration index goes first among ready assets. Fewer
// indexes than assets come back when some lie on or after a cycle; `remaining` then counts,
// per asset, the dependencies never done.
std::vector<std::size_t> topological_order(const Edges& edges,
                                           std::vector<std::size_t>& remaining) {
  const std::size_t n = edges.pending.size();
  remaining = edges.pending;
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (remaining[i] == 0) ready.push(i);
  }
  std::vector<std::size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (std::size_t e = edges.begin(i); e < edges.end(i); ++e) {
      const std::size_t d = edges.readers[e];
      if (--remaining[d] == 0) ready.push(d);
    }
  }
  return order;
}

// A cycle among the assets Kahn's algorithm left (remaining > 0), as indexes from an asset back
// to itself, following edges upstream -> downstream. Iterative, so a cycle through any number of
// assets fits in memory rather than on the stack.
std::vector<std::size_t> find_cycle(const Edges& edges, const std::vector<std::size_t>& remaining) {
  const std::size_t n = remaining.size();
  std::vector<std::uint8_t> color(n, 0);  // 0 unseen, 1 on the path, 2 done
  std::vector<std::size_t> position(n, 0);
  std::vector<std::pair<std::size_t, std::size_t>> path;  // (asset, next edge to follow)
  for (std::size_t root = 0; root < n; ++root) {
    if (remaining[root] == 0 || color[root] != 0) continue;
    path.emplace_back(root, edges.begin(root));
    color[root] = 1;
    while (!path.empty()) {
      auto& [i, edge] = path.back();
      if (edge == edges.end(i)) {
        color[i] = 2;
        path.pop_back();
        continue;
      }
      const std::size_t d = edges.readers[edge++];
      if (color[d] == 1) {
        std::vector<std::size_t> cycle;
        for (std::size_t k = position[d]; k < path.size(); ++k) cycle.push_back(path[k].first);
        cycle.push_back(d);
        return cycle;
      }
      if (color[d] == 0) {
        color[d] = 1;
        position[d] = path.size();
        path.emplace_back(d, edges.begin(d));
      }
    }
  }
  return {};  // unreachable when some asset remained: a remaining asset lies on or after a cycle
}

// The error naming one cycle among the assets left unordered, upstream first.
DagError cycle_error(const std::vector<const Asset*>& declared, const Edges& edges,
                     const std::vector<std::size_t>& remaining) {
  std::vector<std::size_t> cycle = find_cycle(edges, remaining);
  // A long cycle is named by its first assets and the one that closes it.
  constexpr std::size_t kNamed = 10;
  std::string names;
  for (std::size_t k = 0; k < cycle.size(); ++k) {
    if (cycle.size() > kNamed + 2 && k == kNamed) {
      names += fmt::format(" -> ... ({} more)", cycle.size() - kNamed - 2);
      k = cycle.size() - 2;
    }
    if (!names.empty()) names += " -> ";
    names += declared[cycle[k]]->name();
  }
  if (cycle.size() > kNamed + 2) {
    names = fmt::format("{} assets: {}", cycle.size() - 1, names);
  }
  // The first asset of the cycle depends on the one before it: the edge that closes the cycle.
  return DagError(fmt::format("dependency cycle: {}", names), declared[cycle.front()]->name(),
                  declared[cycle[cycle.size() - 2]]->name());
}

}  // namespace

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

// Names the assets, resolves and checks their dependencies, and orders them upstream first.
void DAG::build() {
  order_.clear();
  by_name_.clear();
  external_index_.clear();
  for (std::size_t i = 0; i < external_assets_.size(); ++i) {
    external_index_.emplace(external_assets_[i].name(), i);
  }
  NameIndex index;
  const std::vector<const Asset*> declared = declared_assets(sources_, loose_, index);
  const Edges edges =
      dependency_edges(declared, index, [this](std::string_view name) { return external(name); });
  std::vector<std::size_t> remaining;
  const std::vector<std::size_t> order = topological_order(edges, remaining);
  if (order.size() != declared.size()) throw cycle_error(declared, edges, remaining);

  // The index by name becomes the index into order_: same keys, positions renumbered.
  std::vector<std::size_t> position(declared.size());
  order_.reserve(order.size());
  for (std::size_t i : order) {
    position[i] = order_.size();
    order_.push_back(declared[i]);
  }
  for (auto& [name, i] : index) i = position[i];
  by_name_ = std::move(index);
}

const Asset* DAG::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : order_[it->second];
}

const Asset& DAG::asset(std::string_view name) const {
  const Asset* found = find(name);
  if (found == nullptr) throw DagError(fmt::format("unknown asset '{}'", name));
  return *found;
}

const Asset* DAG::external(std::string_view name) const {
  auto it = external_index_.find(name);
  return it == external_index_.end() ? nullptr : &external_assets_[it->second];
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
  std::vector<std::size_t> positions;
  for (const std::string& dep : target.deps()) {
    auto it = by_name_.find(dep);
    if (it != by_name_.end() && dep != target.name()) positions.push_back(it->second);
  }
  std::sort(positions.begin(), positions.end());
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  std::vector<const Asset*> result;
  for (std::size_t p : positions) result.push_back(order_[p]);
  return result;
}

std::vector<const Asset*> DAG::downstream(std::string_view name) const {
  const Asset& target = asset(name);
  std::vector<const Asset*> result;
  for (const Asset* candidate : order_) {
    const auto& deps = candidate->deps();
    if (candidate != &target && std::find(deps.begin(), deps.end(), target.name()) != deps.end()) {
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
