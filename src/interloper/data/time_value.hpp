// The time a cell carries, for scoping rows by time bounds.
#pragma once

#include <optional>
#include <stdexcept>

#include "interloper/data.hpp"
#include "interloper/time.hpp"

namespace interloper::detail {

// Dates as they are; a timestamp as the second that holds it (its floor, so that a half-open
// range of whole seconds holds it exactly when it holds the timestamp: 23:59:59.5 belongs to
// its day); strings parsed as ISO dates or timestamps. nullopt for null, other types and
// strings that are not ISO dates or timestamps.
inline std::optional<TimePoint> value_time(const Value& value) {
  switch (value.type()) {
    case DataType::date:
      return TimePoint(value.as_date());
    case DataType::timestamp:
      return TimePoint(std::chrono::floor<std::chrono::seconds>(value.as_timestamp()));
    case DataType::string:
      try {
        return TimePoint::parse(value.as_string());
      } catch (const std::invalid_argument&) {
        // A fraction or a zone offset, which TimePoint's keys never have.
        if (auto t = parse_timestamp(value.as_string()))
          return TimePoint(std::chrono::floor<std::chrono::seconds>(*t));
        return std::nullopt;
      }
    default:
      return std::nullopt;
  }
}

}  // namespace interloper::detail
