// The PostgreSQL server the tests run against: scripts/with-postgres starts a throw-away cluster
// on loopback and exports IL_TEST_POSTGRES_URL (and IL_TEST_POSTGRES_CTL, a script that stops
// and restarts that server). Without the URL the PostgreSQL tests skip with a message, except
// under CI=true, where a missing server is a failure.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper::testing {

// The server's URL, or nothing when no server was given.
inline std::optional<std::string> postgres_url() {
  const char* url = std::getenv("IL_TEST_POSTGRES_URL");
  if (url == nullptr || *url == '\0') return std::nullopt;
  return std::string(url);
}

// The script that stops (`stop`) and restarts (`start`) the test server, when there is one.
inline std::optional<std::string> postgres_ctl() {
  const char* ctl = std::getenv("IL_TEST_POSTGRES_CTL");
  if (ctl == nullptr || *ctl == '\0') return std::nullopt;
  return std::string(ctl);
}

// A schema name no other test (nor another run of the same test binary) uses, so that tests
// share one database without seeing each other's tables: "il_<stem>_<random>_<count>".
inline std::string fresh_schema(std::string_view stem) {
  static std::atomic<int> counter{0};
  std::random_device device;
  return "il_" + std::string(stem) + "_" + std::to_string(device() % 1000000000u) + "_" +
         std::to_string(++counter);
}

// `url` with its `schema` query parameter set to `schema`.
inline std::string with_schema(const std::string& url, const std::string& schema) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "schema=" + schema;
}

inline bool postgres_required() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// Rows of `query` run with `schema` first on the search path, each row's columns joined by '|'
// (NULL as an empty column).
inline std::vector<std::string> schema_rows(postgres::Connection& connection,
                                            const std::string& schema, const std::string& query) {
  connection.exec("SET search_path TO " + sql::quote_identifier(schema));
  postgres::Result result = connection.exec(query);
  std::vector<std::string> rows;
  for (int i = 0; i < result.rows(); ++i) {
    std::string row;
    for (int c = 0; c < result.columns(); ++c) {
      if (c > 0) row += '|';
      row += std::string(result.value(i, c));
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace interloper::testing

// Inside a test (or a function returning void): the server's URL, or a skip (a failure under CI).
#define IL_REQUIRE_POSTGRES(url)                                                              \
  auto url##_found = ::interloper::testing::postgres_url();                                   \
  if (!url##_found) {                                                                         \
    if (::interloper::testing::postgres_required()) {                                         \
      FAIL() << "CI=true but IL_TEST_POSTGRES_URL is unset: scripts/with-postgres did not "   \
                "start a server";                                                             \
    }                                                                                         \
    GTEST_SKIP() << "no PostgreSQL server: run under scripts/with-postgres (or set "          \
                    "IL_TEST_POSTGRES_URL) to test PostgreSQL";                               \
  }                                                                                           \
  const std::string& url = *url##_found
