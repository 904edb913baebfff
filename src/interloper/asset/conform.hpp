// What the asset layer's files share: whether a batch needs conforming to a declared schema.
#pragma once

#include "interloper/data.hpp"

namespace interloper::detail {

// Whether conforming `schema` to `declared` would change it.
inline bool needs_conform(const Schema& schema, const Schema& declared) {
  for (const Field& f : declared.fields()) {
    auto c = schema.find(f.name);
    if (!c || schema.field(*c).type != f.type) return true;
  }
  return false;
}

}  // namespace interloper::detail
