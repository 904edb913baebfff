// Shared fixtures for the storage tests: temporary directories and sample rows.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "interloper/data.hpp"
#include "support/temp_dir.hpp"

namespace interloper::testing {

inline std::chrono::year_month_day day(int y, unsigned m, unsigned d) {
  return std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d};
}

inline std::chrono::sys_seconds at(int y, unsigned m, unsigned d, int hour, int minute = 0) {
  return std::chrono::sys_days(day(y, m, d)) + std::chrono::hours{hour} +
         std::chrono::minutes{minute};
}

}  // namespace interloper::testing
