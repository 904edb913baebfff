// How destinations name a dataset in messages.
#pragma once

#include <string>

#include "interloper/dataset.hpp"

namespace interloper::detail {

// "source.asset", or "asset" without a source.
inline std::string dataset_name(const DatasetRef& dataset) {
  return dataset.source.empty() ? dataset.asset : dataset.source + "." + dataset.asset;
}

}  // namespace interloper::detail
