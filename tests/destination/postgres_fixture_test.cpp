// A PostgreSQL destination schema in the layout interloper wrote before the SQL destination was
// one (tests/fixtures/postgres_destination_v1.sql, a pg_dump of it with its schema named
// il_fixture_schema): loaded into a fresh schema, it is read, and updated in place, as it was.
//
// The script was made by the first test below with IL_WRITE_POSTGRES_FIXTURE=PATH set, at the
// commit that added it; without the variable that test does nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "destination/layout_fixtures.hpp"
#include "interloper/destination.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"
#include "support/postgres.hpp"

namespace interloper {
namespace {

constexpr const char* kFixtureSchema = "il_fixture_schema";

// A dataset whose table name is longer than PostgreSQL keeps, with a long column name too.
DatasetRef long_named() {
  static const std::string asset(70, 'a');
  return {"shop", asset, nullptr};
}

Table long_rows() {
  Table t;
  t.append({{std::string(80, 'c'), 1}, {"short", "x"}});
  return t;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(PostgresFixture, WritesTheFixtureWhenAsked) {
  const char* out = std::getenv("IL_WRITE_POSTGRES_FIXTURE");
  if (out == nullptr || *out == '\0') GTEST_SKIP() << "IL_WRITE_POSTGRES_FIXTURE is not set";
  IL_REQUIRE_POSTGRES(url);
  postgres::Pool pool(postgres::parse_url(url, {"schema"}));
  pool.acquire()->exec(std::string("DROP SCHEMA IF EXISTS ") + kFixtureSchema + " CASCADE");
  {
    PostgresDestination destination(testing::with_schema(url, kFixtureSchema));
    testing::write_layout_fixture(destination);
    destination.write(long_named(), nullptr, long_rows());
  }
  const std::string command =
      "pg_dump --no-owner --no-privileges --inserts --schema=" + std::string(kFixtureSchema) +
      " '" + url + "' > '" + out + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  pool.acquire()->exec(std::string("DROP SCHEMA ") + kFixtureSchema + " CASCADE");
}

TEST(PostgresFixture, ASchemaOfTheEarlierLayoutIsReadAndUpdatedInPlace) {
  IL_REQUIRE_POSTGRES(url);
  std::ifstream in(std::string(IL_TEST_SOURCE_DIR) + "/tests/fixtures/postgres_destination_v1.sql");
  ASSERT_TRUE(in) << "the fixture script is missing";
  // Lines of psql commands (pg_dump's \\restrict) are not SQL: left out.
  std::string text, line;
  while (std::getline(in, line)) {
    if (line.rfind("\\", 0) != 0) text += line + "\n";
  }
  const std::string schema = testing::fresh_schema("fixture");
  postgres::Pool pool(postgres::parse_url(url, {"schema"}));
  // pg_dump empties the search path for its session; the next statements name their schema.
  pool.acquire()->exec(replace_all(text, kFixtureSchema, schema));
  const std::string located = testing::with_schema(url, schema);
  {
    PostgresDestination destination(located);
    EXPECT_EQ(destination.read(long_named(), nullptr), long_rows());
    testing::check_layout_fixture(destination,
                                  [&] { return std::make_unique<PostgresDestination>(located); });
  }
  pool.acquire()->exec("DROP SCHEMA " + sql::quote_identifier(schema) + " CASCADE");
}

}  // namespace
}  // namespace interloper
