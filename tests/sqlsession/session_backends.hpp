// The engines every SqlSession test runs on: a SQLite file in a fresh directory, and a fresh
// schema of the PostgreSQL test server (scripts/with-postgres), made the session's search path
// so that unqualified names mean the same on both.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sqlsession/postgres_session.hpp"
#include "interloper/sqlsession/sqlite_session.hpp"
#include "support/postgres.hpp"
#include "support/temp_dir.hpp"

namespace interloper::testing {

class SessionBackend {
 public:
  explicit SessionBackend(const std::string& engine) : engine_(engine) {}

  // Whether the engine can be tested here; sets `why` when not.
  bool available(std::string& why) {
    if (engine_ == "sqlite") return true;
    auto url = postgres_url();
    if (!url) {
      why = "no PostgreSQL server: run under scripts/with-postgres";
      return false;
    }
    schema_ = fresh_schema("session");
    pool_ = std::make_unique<postgres::Pool>(postgres::parse_url(*url, {"schema"}));
    pool_->acquire()->exec("CREATE SCHEMA " + sql::quote_identifier(schema_));
    return true;
  }

  // A new session (each its own connection).
  std::unique_ptr<sql::SqlSession> open() {
    if (engine_ == "sqlite") return std::make_unique<sql::SqliteSession>(dir_ / "test.db");
    auto session = std::make_unique<sql::PostgresSession>(pool_->acquire());
    session->execute("SET search_path TO " + sql::quote_identifier(schema_));
    return session;
  }

  const std::string& schema() const { return schema_; }

  ~SessionBackend() {
    if (pool_) {
      try {
        pool_->acquire()->exec("DROP SCHEMA " + sql::quote_identifier(schema_) + " CASCADE");
      } catch (const std::exception&) {
      }
    }
  }

 private:
  std::string engine_;
  TempDir dir_{"il-session"};
  std::string schema_;
  std::unique_ptr<postgres::Pool> pool_;
};

// The fixture of tests run once per engine (the parameter).
class SessionTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = std::make_unique<SessionBackend>(GetParam());
    std::string why;
    if (!backend_->available(why)) {
      if (postgres_required()) FAIL() << why;
      GTEST_SKIP() << why;
    }
    db_ = backend_->open();
  }
  sql::SqlSession& db() { return *db_; }
  SessionBackend& backend() { return *backend_; }

  std::unique_ptr<SessionBackend> backend_;
  std::unique_ptr<sql::SqlSession> db_;
};

}  // namespace interloper::testing
