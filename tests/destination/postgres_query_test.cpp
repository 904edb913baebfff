// PostgresDestination's scoped queries (what `sql:` assets run) against a real server: a query
// reads its dependencies and nothing else — no other asset's table, no other schema, no server
// file, no large object — whoever connects (a superuser, or an owner that may only create roles).
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "destination/postgres_fixtures.hpp"
#include "interloper/postgres/postgres.hpp"
#include "support/postgres.hpp"

namespace interloper {
namespace {

using testing::day;
using testing::fresh_schema;
using testing::with_schema;

// `url` logging in as `user` with `password` instead of its own user.
std::string as_user(const std::string& url, const std::string& user, const std::string& password) {
  const std::size_t start = url.find("://") + 3;
  return url.substr(0, start) + user + ":" + password + url.substr(url.find('@', start));
}

class PostgresQueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    IL_REQUIRE_POSTGRES(found);
    url = found;
    schema = fresh_schema("query");
    checker = std::make_unique<postgres::Pool>(postgres::parse_url(url, {}));
  }

  // Runs `sql` as the server's superuser; the first value as text ("" for none).
  std::string raw(const std::string& sql) { return testing::first_value(*checker, sql); }

  // Writes one row to `stats` and one to `other` through `destination`.
  void write_both(PostgresDestination& destination) {
    TimePartitionWindow window(day(2026, 1, 5), day(2026, 1, 5));
    Table rows;
    rows.append({{"date", day(2026, 1, 5)}, {"clicks", 7}});
    destination.write(stats, &window, rows);
    destination.write(other, &window, rows);
  }

  // The message of the DestinationError the scoped query `sql` throws ("" when none).
  std::string refusal(PostgresDestination& destination, const std::string& sql) {
    try {
      Table rows = destination.query(sql, {}, scope);
      ADD_FAILURE() << "ran: " << sql << " -> " << rows.num_rows() << " rows";
      return "";
    } catch (const DestinationError& e) {
      return e.what();
    }
  }

  std::string url;
  std::string schema;
  std::unique_ptr<postgres::Pool> checker;
  TimePartitionConfig daily{"date", {.granularity = TimeGranularity::DAY, .allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
  DatasetRef other{"ads", "other", &daily};
  QueryScope scope{.asset = "report", .datasets = {stats}};
};

TEST_F(PostgresQueryTest, AScopedQueryReadsItsDependenciesAndNothingElse) {
  PostgresDestination destination(with_schema(url, schema));
  write_both(destination);
  const std::string secret = fresh_schema("secret");
  raw("CREATE SCHEMA " + secret + "; CREATE TABLE " + secret +
      ".creds (password text); INSERT INTO " + secret + ".creds VALUES ('hunter2')");
  const std::string objects = raw("SELECT count(*) FROM pg_largeobject_metadata");

  // The declared dependency stays readable, with its parameters bound.
  Table mine =
      destination.query("SELECT clicks + :more AS n FROM ads__stats", {{":more", Value(1)}}, scope);
  ASSERT_EQ(mine.num_rows(), 1u);
  EXPECT_EQ(mine.at(0, "n"), Value(8));

  std::string why = refusal(destination, "SELECT clicks FROM ads__other");
  EXPECT_NE(why.find("asset 'report'"), std::string::npos) << why;
  // The server's words, not the statement sent (the pipeline shows the query as written).
  EXPECT_NE(why.find("': ERROR: permission denied"), std::string::npos) << why;
  EXPECT_EQ(why.find("DECLARE"), std::string::npos) << why;
  EXPECT_NE(why.find("permission denied for table ads__other"), std::string::npos) << why;
  EXPECT_NE(why.find("may read the tables of its declared dependencies and nothing else"),
            std::string::npos)
      << why;
  why = refusal(destination, "SELECT password FROM " + secret + ".creds");
  EXPECT_NE(why.find("permission denied for schema " + secret), std::string::npos) << why;
  why = refusal(destination, "SELECT pg_read_file('PG_VERSION') AS f");
  EXPECT_NE(why.find("permission denied for function pg_read_file"), std::string::npos) << why;
  why = refusal(destination, "SELECT lo_import('/etc/hostname') AS o");
  EXPECT_NE(why.find("permission denied for function lo_import"), std::string::npos) << why;
  // Taking back the connecting user's rights from inside the query is refused too.
  why = refusal(destination,
                "SELECT set_config('role', session_user, true) AS r, "
                "(SELECT count(*) FROM ads__other) AS n");
  EXPECT_NE(why.find("permission denied"), std::string::npos) << why;
  why = refusal(destination,
                "SELECT query_to_xml('SELECT set_config(''role'', session_user, true)', true, "
                "false, '')::text AS x");
  EXPECT_NE(why.find("cannot set parameter \"role\""), std::string::npos) << why;
  why = refusal(destination, "SELECT set_config('session_authorization', session_user, true) AS r");
  EXPECT_NE(why.find("cannot set parameter \"session_authorization\""), std::string::npos) << why;
  // A large object made by the query does not outlive it.
  EXPECT_EQ(destination.query("SELECT lo_from_bytea(0, 'x')::text AS o", {}, scope).num_rows(), 1u);
  EXPECT_EQ(raw("SELECT count(*) FROM pg_largeobject_metadata"), objects);
  // The query's own role never outlives it; the reader roles stay for the next query.
  EXPECT_EQ(raw("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'il\\_query\\_%'"), "0");
  EXPECT_EQ(destination.query("SELECT count(*) AS n FROM ads__stats", {}, scope).at(0, "n"),
            Value(1));
  // Unscoped queries (a program querying its own database) still read every dataset.
  EXPECT_EQ(destination.query("SELECT count(*) AS n FROM ads__other", {}).at(0, "n"), Value(1));
  raw("DROP SCHEMA " + secret + " CASCADE");
}

TEST_F(PostgresQueryTest, ConcurrentQueriesOfOneDependencyDoNotWaitForEachOther) {
  PostgresDestination destination(with_schema(url, schema));
  write_both(destination);
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  const auto started = std::chrono::steady_clock::now();
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      PostgresDestination mine(with_schema(url, schema));
      for (int i = 0; i < 10; ++i) {
        // Each query holds its transaction a moment, as a long query would.
        Table rows =
            mine.query("SELECT clicks, pg_sleep(0.05)::text AS s FROM ads__stats", {}, scope);
        if (rows.num_rows() == 1) ++done;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(done.load(), 40);
  // 40 queries of 50 ms on 4 connections: about 0.5 s when they overlap, 2 s when they queue.
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1500));
}

TEST_F(PostgresQueryTest, AnOwnerThatIsNotSuperuserNeedsOnlyCreaterole) {
  const std::string owner = fresh_schema("owner");
  const std::string plain = fresh_schema("plain");
  raw("CREATE ROLE " + owner + " LOGIN PASSWORD 'pw' CREATEROLE; CREATE ROLE " + plain +
      " LOGIN PASSWORD 'pw'; GRANT CREATE ON DATABASE " + raw("SELECT current_database()") +
      " TO " + owner + ", " + plain);
  {
    PostgresDestination destination(with_schema(as_user(url, owner, "pw"), schema));
    write_both(destination);
    EXPECT_EQ(destination.query("SELECT clicks FROM ads__stats", {}, scope).at(0, "clicks"),
              Value(7));
    std::string why = refusal(destination, "SELECT clicks FROM ads__other");
    EXPECT_NE(why.find("permission denied for table ads__other"), std::string::npos) << why;
  }
  {
    PostgresDestination destination(with_schema(as_user(url, plain, "pw"), fresh_schema("plain")));
    write_both(destination);
    std::string why = refusal(destination, "SELECT clicks FROM ads__stats");
    EXPECT_NE(why.find("user '" + plain + "' may not create roles"), std::string::npos) << why;
    EXPECT_NE(why.find("ALTER ROLE \"" + plain + "\" CREATEROLE"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace interloper
