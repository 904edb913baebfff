// The destination contract as a value-parameterized suite, for every Destination kind.
//
// The tests themselves live in destination_contract.cpp (compiled once into destination_test);
// a destination kind joins the suite from its own test file with one line:
//
//   IL_INSTANTIATE_DESTINATION_CONTRACT(Sqlite, [](const std::string& dir) {
//     return std::make_shared<il::SqliteDestination>(dir + "/warehouse.db");
//   });
//
// The factory receives a fresh empty temporary directory per test (removed afterwards).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "interloper/destination.hpp"

namespace interloper_test {

using interloper::Destination;

using DestinationFactory = std::function<std::shared_ptr<Destination>(const std::string& temp_dir)>;

struct DestinationCase {
  std::string name;  // the test-name suffix: letters, digits and underscores only
  DestinationFactory make;
};

class DestinationContract : public ::testing::TestWithParam<DestinationCase> {
 protected:
  void SetUp() override;
  void TearDown() override;

  Destination& destination() { return *destination_; }
  const std::filesystem::path& temp_dir() const { return temp_dir_; }

 private:
  std::filesystem::path temp_dir_;
  std::shared_ptr<Destination> destination_;
};

}  // namespace interloper_test

// Use at file scope. NAME is an identifier; it prefixes the test names and names the case.
#define IL_INSTANTIATE_DESTINATION_CONTRACT(NAME, FACTORY)                             \
  namespace interloper_test {                                                          \
  INSTANTIATE_TEST_SUITE_P(NAME, DestinationContract,                                  \
                           ::testing::Values(DestinationCase{#NAME, FACTORY}),         \
                           [](const ::testing::TestParamInfo<DestinationCase>& info) { \
                             return info.param.name;                                   \
                           });                                                         \
  }
