#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <interloper/data.hpp>
#include <string>

namespace interloper::testing {

// Expects `f` to throw DataError whose message contains every one of `parts`.
inline void expect_data_error(const std::function<void()>& f,
                              std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "expected DataError";
  } catch (const DataError& e) {
    std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

}  // namespace interloper::testing
