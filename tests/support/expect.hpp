// Test helpers shared by the layer test binaries.
#pragma once

#include <gtest/gtest.h>

#include <string>

// Runs `statement`, expects it to throw `exception` whose what() contains `text`.
#define IL_EXPECT_THROW_WITH(statement, exception, text)                                 \
  do {                                                                                   \
    try {                                                                                \
      statement;                                                                         \
      ADD_FAILURE() << "expected " #exception " from: " #statement;                      \
    } catch (const exception& il_e_) {                                                   \
      EXPECT_NE(std::string(il_e_.what()).find(text), std::string::npos)                 \
          << "message '" << il_e_.what() << "' does not contain '" << (text) << "'";     \
    }                                                                                    \
  } while (false)
