// The time a cell carries, for scoping rows by time bounds.
#pragma once

#include <optional>
#include <stdexcept>

#include "interloper/data.hpp"
#include "interloper/time.hpp"

namespace interloper::detail {

// Dates and timestamps as they are; strings parsed as ISO dates or timestamps. nullopt for
// null, other types and strings that are not ISO dates or timestamps.
inline std::optional<TimePoint> value_time(const Value& value) {
  switch (value.type()) {
    case DataType::date:
      return TimePoint(value.as_date());
    case DataType::timestamp:
      return TimePoint(value.as_timestamp());
    case DataType::string:
      try {
        return TimePoint::parse(value.as_string());
      } catch (const std::invalid_argument&) {
        return std::nullopt;
      }
    default:
      return std::nullopt;
  }
}

}  // namespace interloper::detail
