// Sources: named groups of assets sharing a destination.
#include <fmt/format.h>

#include <utility>

#include "interloper/asset.hpp"

namespace interloper {

// ---- Source ------------------------------------------------------------------------------

Source::Source(std::string name, std::shared_ptr<Destination> destination)
    : name_(std::move(name)), destination_(std::move(destination)) {}

Source& Source::description(std::string text) {
  description_ = std::move(text);
  return *this;
}

void Source::reserve(std::size_t count) {
  assets_.reserve(count);
  names_.reserve(count);
}

Asset& Source::add(Asset asset) {
  if (!names_.insert(asset.name()).second) {
    throw DagError(fmt::format("source '{}': duplicate asset name '{}'", name_, asset.name()),
                   asset.name());
  }
  asset.source_name(name_);
  asset.source_destination_ = destination_;
  assets_.push_back(std::move(asset));
  return assets_.back();
}

}  // namespace interloper
