// interloper/dag.hpp — assets wired by name.
//
// A DAG is built once from sources (and loose assets) and is immutable afterwards. Building
// it checks the wiring: every dependency names a known asset, names are unique, there is no
// cycle, and every partitioned edge can be mapped (edge_allowed).
//
//   il::DAG dag({ads, sales});
//   for (const il::Asset* asset : dag.order()) std::cout << asset->name() << "\n";
//
// Thread safety: a built DAG is read-only and safe to share between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "interloper/asset.hpp"

namespace interloper {

// Whether an edge `upstream -> downstream` between two partitioned assets can be mapped
// partition to partition. Two time partitionings always can, whatever their granularities: a
// downstream partition reads the upstream partitions overlapping its bounds. Two partitionings of
// another kind (list) can only when they are the same (same column and values, in the same
// order), and a partition then reads the same partition. Time and list never mix.
bool edge_allowed(const PartitionConfig& upstream, const PartitionConfig& downstream);

class DAG {
 public:
  // Throws DagError naming the problem: an unknown dependency ("asset 'b' depends on
  // unknown asset 'x'"), a duplicate name, a cycle (naming its assets in order, "a -> b ->
  // a"), or a partitioned edge edge_allowed() refuses (naming both assets and both
  // partitionings); DagError::asset() and dependency() say which declaration is at fault.
  // Building costs O(assets + edges) (log factors aside), whatever the shape of the graph.
  explicit DAG(std::vector<Source> sources, std::vector<Asset> loose_assets = {});

  // Copies rebuild their own order (it points into the copy's assets); moves keep it.
  DAG(const DAG& other);
  DAG& operator=(const DAG& other);
  DAG(DAG&&) noexcept = default;
  DAG& operator=(DAG&&) noexcept = default;

  // All assets, in a topological order (upstreams before downstreams; ties in declaration
  // order).
  const std::vector<const Asset*>& order() const { return order_; }
  std::size_t size() const { return order_.size(); }
  // Throws DagError naming an unknown asset.
  const Asset& asset(std::string_view name) const;
  const Asset* find(std::string_view name) const;  // nullptr when unknown
  const std::vector<Source>& sources() const { return sources_; }
  // Assets given to the constructor outside any source, in declaration order.
  const std::vector<Asset>& loose_assets() const { return loose_; }

  // The asset's destination: its own, else its source's. nullptr when neither has one.
  Destination* destination_of(const Asset& asset) const;

  // Direct upstreams / downstreams of `name`, in topological order.
  std::vector<const Asset*> upstream(std::string_view name) const;
  std::vector<const Asset*> downstream(std::string_view name) const;

  // A DAG of the named assets only (plus, when `with_upstream`, everything they depend on).
  // Dependencies outside the selection are kept as names and read from their destinations.
  // Throws DagError naming an unknown asset.
  DAG select(const std::vector<std::string>& names, bool with_upstream = false) const;

  // After select(): a dependency outside the selection, kept (with its destination resolved)
  // so that its rows can be read but never executed. nullptr when `name` is not one.
  const Asset* external(std::string_view name) const;
  // The names of those dependencies, in first-seen order (empty for an unselected DAG).
  const std::vector<std::string>& external_names() const { return external_; }

 private:
  DAG() = default;
  void build();

  std::vector<Source> sources_;
  std::vector<Asset> loose_;
  std::vector<Asset> external_assets_;  // dependencies outside a selection, never executed
  std::vector<const Asset*> order_;
  std::vector<std::string> external_;  // their names
  // Name -> position in order_ / in external_assets_; keys view the assets' own names.
  std::unordered_map<std::string_view, std::size_t> by_name_;
  std::unordered_map<std::string_view, std::size_t> external_index_;
};

}  // namespace interloper
