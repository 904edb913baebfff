// Run ids: "run-YYYYMMDDTHHMMSS-SALT-COUNTER".
#pragma once

#include <string>

#include "interloper/time.hpp"

namespace interloper::detail {

// A new unique id stamped with clock.now(). Thread-safe.
std::string generate_run_id(const Clock& clock);

}  // namespace interloper::detail
