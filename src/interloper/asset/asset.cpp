// Assets: their settings, definition fingerprint, compute, run and materialize.
#include "interloper/asset.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "interloper/asset/conform.hpp"
#include "interloper/dataset.hpp"

namespace interloper {

// ---- Asset -------------------------------------------------------------------------------

Asset::Asset(std::string name, ComputeFn compute)
    : name_(std::move(name)), compute_(std::move(compute)) {
  if (name_.empty()) throw std::invalid_argument("asset name must not be empty");
  if (!compute_) {
    throw std::invalid_argument(fmt::format("asset '{}': compute callable is empty", name_));
  }
}

Asset::Asset(const Asset& other)
    : name_(other.name_),
      source_(other.source_),
      compute_(other.compute_),
      partitioning_(other.partitioning_ ? other.partitioning_->clone() : nullptr),
      deps_(other.deps_),
      mappings_(other.mappings_),
      enabled_(other.enabled_),
      schema_(other.schema_),
      min_rows_(other.min_rows_),
      definition_(other.definition_),
      version_(other.version_),
      adopt_(other.adopt_),
      require_upstream_(other.require_upstream_),
      description_(other.description_),
      destination_(other.destination_),
      source_destination_(other.source_destination_) {}

Asset& Asset::operator=(const Asset& other) {
  if (this != &other) {
    Asset copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Asset::~Asset() = default;

Asset& Asset::partitioning(const PartitionConfig& config) {
  partitioning_ = config.clone();
  return *this;
}

Asset& Asset::deps(std::vector<std::string> upstream_names) {
  deps_ = std::move(upstream_names);
  mappings_.assign(deps_.size(), DepMapping());
  return *this;
}

Asset& Asset::dep(std::string upstream, DepMapping mapping) {
  auto it = std::find(deps_.begin(), deps_.end(), upstream);
  if (it == deps_.end()) {
    deps_.push_back(std::move(upstream));
    mappings_.push_back(mapping);
  } else {
    mappings_[static_cast<std::size_t>(it - deps_.begin())] = mapping;
  }
  return *this;
}

const DepMapping& Asset::mapping(std::string_view upstream) const {
  static const DepMapping kOverlap;
  for (std::size_t i = 0; i < deps_.size(); ++i) {
    if (deps_[i] == upstream) return mappings_[i];
  }
  return kOverlap;
}

Asset& Asset::enabled(bool on) {
  enabled_ = on;
  return *this;
}

Asset& Asset::destination(std::shared_ptr<Destination> destination) {
  destination_ = std::move(destination);
  return *this;
}

Asset& Asset::schema(Schema declared) {
  schema_ = std::move(declared);
  return *this;
}

Asset& Asset::definition(std::string text) {
  definition_ = std::move(text);
  return *this;
}

Asset& Asset::version(std::string version) {
  version_ = std::move(version);
  return *this;
}

Asset& Asset::adopt(bool on) {
  adopt_ = on;
  return *this;
}

Asset& Asset::require_upstream(bool on) {
  require_upstream_ = on;
  return *this;
}

Asset& Asset::description(std::string text) {
  description_ = std::move(text);
  return *this;
}

std::string Asset::definition_fingerprint() const {
  // Length-prefixed parts, so that no two different definitions join into one text.
  std::string text;
  auto part = [&text](std::string_view piece) {
    text += std::to_string(piece.size());
    text += ':';
    text += piece;
  };
  part(definition_);
  part(version_);
  part(partitioning_ ? partitioning_->to_definition() : std::string());
  part(schema_.to_string());
  // Mappings other than the overlap, so that definitions from before mappings keep their hash.
  for (std::size_t i = 0; i < deps_.size(); ++i) {
    if (!mappings_[i].is_overlap()) part(deps_[i] + " " + mappings_[i].to_string());
  }
  return fingerprint(text);
}

std::string fingerprint(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return fmt::format("{:016x}", hash);
}

Asset& Asset::min_rows(std::int64_t rows) {
  if (rows < 0) {
    throw std::invalid_argument(fmt::format("asset '{}': min_rows must not be negative", name_));
  }
  min_rows_ = rows;
  return *this;
}

Asset& Asset::source_name(std::string name) {
  source_ = std::move(name);
  return *this;
}

void Asset::check(const PartitionWindow* window) const {
  if (!partitioning_) return;  // an unpartitioned asset serves any window
  if (window == nullptr) {
    throw PartitionError(fmt::format("asset '{}': partitioned by {} '{}' but the run has no window",
                                     name_, partitioning_->kind(), partitioning_->column()));
  }
  try {
    partitioning_->check(*window);
  } catch (const PartitionError& e) {
    throw PartitionError(fmt::format("asset '{}': {}", name_, e.what()));
  }
}

namespace {

// Counts the rows of each partition of a run (the whole run when unpartitioned, or without a
// window) and throws RunError when one got fewer than the asset's min_rows: replacing stored
// data with a short result is what the limit prevents.
class RowFloor {
 public:
  RowFloor(const Asset& asset, const PartitionWindow* window) : asset_(asset) {
    if (asset.partitioning() == nullptr || window == nullptr) {
      counts_.assign(1, 0);
      return;
    }
    for (std::size_t i = 0; i < window->size(); ++i) partitions_.push_back(window->partition_at(i));
    counts_.assign(partitions_.size(), 0);
  }

  void add(const Table& rows) {
    if (partitions_.empty()) {
      counts_[0] += static_cast<std::int64_t>(rows.num_rows());
      return;
    }
    const std::string& column = asset_.partitioning()->column();
    if (!rows.column_index(column)) return;
    for (std::size_t i = 0; i < partitions_.size(); ++i)
      counts_[i] +=
          static_cast<std::int64_t>(partitions_[i]->filter(column).apply(rows).num_rows());
  }

  void check() const {
    const std::int64_t need = asset_.min_rows();
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      if (counts_[i] >= need) continue;
      const std::string where =
          partitions_.empty() ? "the run" : "partition " + partitions_[i]->key();
      throw RunError(fmt::format(
          "asset '{}': {} got {} row{} but min_rows is {}; nothing was written, the stored "
          "rows are kept",
          asset_.name(), where, counts_[i], counts_[i] == 1 ? "" : "s", need));
    }
  }

 private:
  const Asset& asset_;
  std::vector<std::unique_ptr<Partition>> partitions_;
  std::vector<std::int64_t> counts_;
};

}  // namespace

Table Asset::compute(ExecutionContext& context) const {
  std::optional<RowFloor> floor;
  if (min_rows_ > 0) floor.emplace(*this, context.has_window() ? &context.window() : nullptr);
  context.declared_ = &schema_;
  if (floor) context.count_ = [&floor](const Table& batch) { floor->add(batch); };
  struct Reset {  // the hooks point into this frame; the context may outlive it
    ExecutionContext& context;
    ~Reset() {
      context.declared_ = nullptr;
      context.count_ = {};
    }
  } reset{context};
  Table rest = compute_(context);
  if (detail::needs_conform(rest.schema(), schema_))
    rest.conform(schema_, context.rows_emitted_ + 1);
  if (floor) {
    floor->add(rest);
    floor->check();
  }
  return context.finish(std::move(rest));
}

Table Asset::run(const PartitionWindow& window, Logger logger) const {
  check(&window);
  ExecutionContext context(name_, window.clone(), logger.for_asset(name_));
  return compute(context);
}

Table Asset::run(const Partition& partition, Logger logger) const {
  return run(*partition.as_window(), std::move(logger));
}

Table Asset::run(Logger logger) const {
  check(nullptr);
  ExecutionContext context(name_, nullptr, logger.for_asset(name_));
  return compute(context);
}

namespace {
Destination& require_destination(const Asset& asset) {
  if (!asset.resolved_destination()) {
    throw DestinationError(
        fmt::format("asset '{}': no destination to materialize into (set one on the asset or its "
                    "source)",
                    asset.name()));
  }
  return *asset.resolved_destination();
}
}  // namespace

// Computes into a writer of `destination`: emitted batches are written as they come, and the
// window is replaced only once the callable has returned.
std::int64_t Asset::write_into(Destination& destination, const PartitionWindow* window,
                               std::shared_ptr<const PartitionWindow> scope, Logger logger) const {
  std::unique_ptr<WindowWriter> writer = destination.open_writer(dataset(), window);
  ExecutionContext context(name_, std::move(scope), logger.for_asset(name_), {},
                           [&writer](const Table& batch) { writer->append(batch); });
  Table rest = compute(context);
  writer->append(rest);
  return writer->commit();
}

std::int64_t Asset::materialize(const PartitionWindow& window, Logger logger) const {
  Destination& destination = require_destination(*this);
  check(&window);
  return write_into(destination, partitioning_ ? &window : nullptr, window.clone(),
                    std::move(logger));
}

std::int64_t Asset::materialize(const Partition& partition, Logger logger) const {
  return materialize(*partition.as_window(), std::move(logger));
}

std::int64_t Asset::materialize(Logger logger) const {
  Destination& destination = require_destination(*this);
  check(nullptr);
  return write_into(destination, nullptr, nullptr, std::move(logger));
}

}  // namespace interloper
