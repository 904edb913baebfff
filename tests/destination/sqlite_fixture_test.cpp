// A SQLite destination file written by interloper before the SQL destination was one
// (tests/fixtures/sqlite_destination_v1.db): it is read, and updated in place, as it was.
//
// The file was made by the first test below with IL_WRITE_SQLITE_FIXTURE=PATH set, at the commit
// that added it; without the variable that test does nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "destination/layout_fixtures.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"

namespace interloper {
namespace {

using testing::TempDir;

TEST(SqliteFixture, WritesTheFixtureWhenAsked) {
  const char* out = std::getenv("IL_WRITE_SQLITE_FIXTURE");
  if (out == nullptr || *out == '\0') GTEST_SKIP() << "IL_WRITE_SQLITE_FIXTURE is not set";
  std::filesystem::remove(out);
  {
    SqliteDestination destination(out);
    testing::write_layout_fixture(destination);
  }
  // One file, nothing beside it: the write-ahead log is folded in when the last connection goes.
  EXPECT_FALSE(std::filesystem::exists(std::string(out) + "-wal"));
}

TEST(SqliteFixture, AFileOfTheEarlierLayoutIsReadAndUpdatedInPlace) {
  TempDir dir;
  const std::string path = dir / "warehouse.db";
  std::filesystem::copy_file(
      std::string(IL_TEST_SOURCE_DIR) + "/tests/fixtures/sqlite_destination_v1.db", path);
  SqliteDestination destination(path);
  testing::check_layout_fixture(destination,
                                [&] { return std::make_unique<SqliteDestination>(path); });
}

}  // namespace
}  // namespace interloper
