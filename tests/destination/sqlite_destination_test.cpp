// SqliteDestination specifics: table naming, stored encoding, the registry, query().
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "destination/destination_contract.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "support/any_value_list.hpp"

IL_INSTANTIATE_DESTINATION_CONTRACT(Sqlite, [](const std::string& dir) {
  return std::make_shared<interloper::SqliteDestination>(dir + "/warehouse.db");
});

namespace interloper {
namespace {

using testing::at;
using testing::day;
using testing::TempDir;

// Reads one text cell straight from the file, bypassing the destination.
std::string raw_text(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  std::string out;
  if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0)) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class SqliteDestinationTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::string path = dir / "nested/dir/w.db";
  SqliteDestination destination{path};
  TimePartitionConfig daily{"date", {.granularity = TimeGranularity::DAY, .allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
};

// Every value type, and keys with a NUL byte, read back the same from a destination opened anew
// on the same file.
TEST_F(SqliteDestinationTest, ValuesAndKeysSurviveReopening) {
  const std::vector<std::string> values = {"eu", std::string("a\0b", 3), "../x"};
  interloper::testing::AnyValueList regions("region", values, true);
  DatasetRef sales{"shop", "sales", &regions};
  auto window = regions.window(values.front(), values.back());
  Table rows;
  for (std::size_t i = 0; i < values.size(); ++i) {
    rows.append({{"region", values[i]},
                 {"n", static_cast<int>(i)},
                 {"x", 0.1},
                 {"flag", i % 2 == 0},
                 {"ts", at(2026, 1, 1, 13, 5)},
                 {"gone", nullptr}});
  }
  destination.write(sales, &window, rows);
  SqliteDestination reopened(path);
  EXPECT_EQ(reopened.read(sales, &window), rows);
  EXPECT_EQ(reopened.schema(sales), rows.schema());
}

TEST_F(SqliteDestinationTest, TableNamesAndUrl) {
  EXPECT_EQ(SqliteDestination::table_name(stats), "ads__stats");
  EXPECT_EQ(SqliteDestination::table_name({"", "dims", nullptr}), "dims");
  EXPECT_EQ(destination.url(), "sqlite://" + path);
  EXPECT_EQ(destination.path(), path);
}

TEST_F(SqliteDestinationTest, StoresIsoTextAndIntegerBooleans) {
  TimePartitionWindow window(day(2026, 1, 5), day(2026, 1, 5));
  Table rows;
  rows.append({{"date", day(2026, 1, 5)}, {"ts", at(2026, 1, 5, 7, 30)}, {"ok", true}});
  destination.write(stats, &window, rows);
  EXPECT_EQ(raw_text(path, "SELECT \"date\" FROM ads__stats"), "2026-01-05");
  EXPECT_EQ(raw_text(path, "SELECT ts FROM ads__stats"), "2026-01-05T07:30:00");
  EXPECT_EQ(raw_text(path, "SELECT typeof(ok) || ok FROM ads__stats"), "integer1");
  EXPECT_EQ(raw_text(path, "SELECT type FROM _interloper_columns WHERE \"column\" = 'ts'"),
            "timestamp");
  EXPECT_EQ(raw_text(path, "SELECT rows FROM _interloper_partitions WHERE key = '2026-01-05'"),
            "1");
  EXPECT_NE(raw_text(path, "SELECT name FROM sqlite_master WHERE type = 'index'"), "");
}

TEST_F(SqliteDestinationTest, QuotedIdentifiers) {
  TimePartitionConfig odd{"the \"day\"", {.allow_window = true}};
  DatasetRef weird{"src\"x", "as set", &odd};
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 2));
  Table rows;
  rows.append({{"the \"day\"", day(2026, 1, 2)}, {"select", 1}});
  destination.write(weird, &window, rows);
  EXPECT_EQ(destination.read(weird, &window), rows);
}

TEST_F(SqliteDestinationTest, QueryBindsNamedParametersAndRestoresTypes) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 3));
  Table rows;
  for (unsigned d = 1; d <= 3; ++d) {
    rows.append({{"date", day(2026, 1, d)}, {"clicks", static_cast<int>(d * 10)}, {"ok", d != 2}});
  }
  destination.write(stats, &window, rows);
  Table result = destination.query(
      "SELECT \"date\", clicks, ok, clicks * 0.5 AS half, 'x' AS tag FROM ads__stats "
      "WHERE \"date\" >= :from ORDER BY \"date\"",
      {{"from", Value(day(2026, 1, 2))}});
  Table expected;
  expected.append(
      {{"date", day(2026, 1, 2)}, {"clicks", 20}, {"ok", false}, {"half", 10.0}, {"tag", "x"}});
  expected.append(
      {{"date", day(2026, 1, 3)}, {"clicks", 30}, {"ok", true}, {"half", 15.0}, {"tag", "x"}});
  EXPECT_EQ(result, expected);
  Table counted = destination.query("SELECT count(*) AS n FROM ads__stats", {});
  EXPECT_EQ(counted.at(0, "n"), Value(3));
}

TEST_F(SqliteDestinationTest, QueryErrorsCarrySqliteMessages) {
  try {
    destination.query("SELECT * FROM no_such_table", {});
    FAIL();
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("no such table"), std::string::npos) << e.what();
  }
  EXPECT_THROW(destination.query("SELECT :a", {{"b", Value(1)}}), DestinationError);
  EXPECT_THROW(destination.query("DELETE FROM _interloper_columns", {}), DestinationError);
}

// The message of the DestinationError `sql` raises when run as asset 'report' reading `stats`.
std::string refusal(SqliteDestination& destination, const DatasetRef& reads,
                    const std::string& sql) {
  try {
    destination.query(sql, {}, QueryScope{.asset = "report", .datasets = {reads}});
  } catch (const DestinationError& e) {
    return e.what();
  }
  return "(no error)";
}

class SqlIsolationTest : public SqliteDestinationTest {
 protected:
  void SetUp() override {
    TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 1));
    Table rows;
    rows.append({{"date", day(2026, 1, 1)}, {"clicks", 1}});
    destination.write(stats, &window, rows);
    destination.write(other, nullptr, rows);
  }
  // Writes still work on the destination after whatever the query tried.
  void expect_writes_work() {
    TimePartitionWindow window(day(2026, 1, 2), day(2026, 1, 2));
    Table rows;
    rows.append({{"date", day(2026, 1, 2)}, {"clicks", 2}});
    EXPECT_EQ(destination.write(stats, &window, rows), 1);
    TimePartitionWindow both(day(2026, 1, 1), day(2026, 1, 2));
    EXPECT_EQ(destination.read(stats, &both).num_rows(), 2u);
  }
  DatasetRef other{"ads", "secret", nullptr};
};

TEST_F(SqlIsolationTest, TransactionsAreDenied) {
  std::string error = refusal(destination, stats, "BEGIN");
  EXPECT_NE(error.find("asset 'report'"), std::string::npos) << error;
  EXPECT_NE(error.find("transaction control (BEGIN)"), std::string::npos) << error;
  expect_writes_work();
}

TEST_F(SqlIsolationTest, AttachIsDeniedAndCreatesNothing) {
  std::string target = dir / "elsewhere.db";
  std::string error = refusal(destination, stats, "ATTACH DATABASE '" + target + "' AS z");
  EXPECT_NE(error.find("asset 'report'"), std::string::npos) << error;
  EXPECT_NE(error.find("ATTACH of '" + target + "'"), std::string::npos) << error;
  EXPECT_FALSE(std::filesystem::exists(target));
  expect_writes_work();
}

TEST_F(SqlIsolationTest, PragmasAreDenied) {
  for (std::string pragma : {"writable_schema=1", "locking_mode=EXCLUSIVE", "synchronous=OFF"}) {
    std::string error = refusal(destination, stats, "PRAGMA " + pragma);
    EXPECT_NE(error.find("asset 'report'"), std::string::npos) << error;
    EXPECT_NE(error.find("PRAGMA " + pragma), std::string::npos) << error;
  }
  expect_writes_work();
}

TEST_F(SqlIsolationTest, TrailingStatementsAreRejected) {
  std::string error = refusal(destination, stats, "SELECT 1; DROP TABLE ads__stats");
  EXPECT_NE(error.find("asset 'report'"), std::string::npos) << error;
  EXPECT_NE(error.find("exactly one statement"), std::string::npos) << error;
  EXPECT_NE(error.find("DROP TABLE ads__stats"), std::string::npos) << error;
  // Blanks, comments and semicolons after the statement are no second statement.
  Table one = destination.query("SELECT 1 AS x; ; -- done\n/* really */", {},
                                QueryScope{.asset = "report", .datasets = {stats}});
  EXPECT_EQ(one.at(0, "x"), Value(1));
  expect_writes_work();
}

TEST_F(SqlIsolationTest, OnlyDeclaredDatasetsAreRead) {
  Table allowed = destination.query("SELECT count(*) AS n FROM ads__stats", {},
                                    QueryScope{.asset = "report", .datasets = {stats}});
  EXPECT_EQ(allowed.at(0, "n"), Value(1));
  std::string error = refusal(destination, stats, "SELECT * FROM ads__secret");
  EXPECT_NE(error.find("asset 'report'"), std::string::npos) << error;
  EXPECT_NE(error.find("reading table 'ads__secret'"), std::string::npos) << error;
  error = refusal(destination, stats, "SELECT * FROM sqlite_master");
  EXPECT_NE(error.find("reading table 'sqlite_master'"), std::string::npos) << error;
  error = refusal(destination, stats, "SELECT * FROM _interloper_columns");
  EXPECT_NE(error.find("reading table '_interloper_columns'"), std::string::npos) << error;
}

TEST_F(SqlIsolationTest, WritesAndExtensionsAreDenied) {
  std::string error = refusal(destination, stats, "DELETE FROM ads__stats");
  EXPECT_NE(error.find("writing (DELETE from 'ads__stats')"), std::string::npos) << error;
  error = refusal(destination, stats, "SELECT load_extension('/tmp/x')");
  EXPECT_NE(error.find("load_extension()"), std::string::npos) << error;
  error = refusal(destination, stats, "CREATE TABLE t (x)");
  EXPECT_NE(error.find("asset 'report'"), std::string::npos) << error;
  expect_writes_work();
}

TEST_F(SqliteDestinationTest, UnopenablePathNamesIt) {
  std::string blocker = dir / "file";
  { std::ofstream(blocker) << "x"; }
  try {
    SqliteDestination bad(blocker + "/sub/x.db");
    FAIL();
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find(blocker), std::string::npos) << e.what();
  }
}

TEST_F(SqliteDestinationTest, WidenedColumnsReadBackWidened) {
  TimePartitionWindow jan1(day(2026, 1, 1), day(2026, 1, 1));
  TimePartitionWindow jan2(day(2026, 1, 2), day(2026, 1, 2));
  Table ints;
  ints.append({{"date", day(2026, 1, 1)}, {"v", 1}});
  destination.write(stats, &jan1, ints);
  Table doubles;
  doubles.append({{"date", day(2026, 1, 2)}, {"v", 2.5}});
  destination.write(stats, &jan2, doubles);
  TimePartitionWindow both(day(2026, 1, 1), day(2026, 1, 2));
  Table back = destination.read(stats, &both);
  EXPECT_EQ(back.at(0, "v"), Value(1.0));
  EXPECT_EQ(back.at(1, "v"), Value(2.5));
}

// Runs `sql` on a connection of its own, as another program would.
void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST_F(SqliteDestinationTest, RefusesATableItDidNotCreate) {
  raw_exec(path,
           "CREATE TABLE ads__stats (\"date\" TEXT, n INTEGER);"
           "INSERT INTO ads__stats VALUES ('2026-01-05', 1), ('2026-01-06', 2)");
  TimePartitionWindow window(day(2026, 1, 5), day(2026, 1, 5));
  Table rows;
  rows.append({{"date", day(2026, 1, 5)}, {"n", 9}});
  try {
    destination.write(stats, &window, rows);
    FAIL() << "wrote into a foreign table";
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("table 'ads__stats' exists but was not created by "
                                         "interloper"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("adopt: true"), std::string::npos) << e.what();
  }
  EXPECT_THROW(destination.write({"ads", "stats", nullptr}, nullptr, rows), DestinationError);
  EXPECT_EQ(raw_text(path, "SELECT group_concat(n) FROM ads__stats"), "1,2");
  EXPECT_EQ(raw_text(path, "SELECT count(*) FROM _interloper_columns"), "0");
  EXPECT_EQ(destination.read(stats, &window), Table());
}

TEST_F(SqliteDestinationTest, AdoptingKeepsTheTablesColumnsAndTheRowsOutsideTheWindow) {
  raw_exec(path,
           "CREATE TABLE ads__stats (\"date\" DATE, n INTEGER, label VARCHAR(10));"
           "INSERT INTO ads__stats VALUES ('2026-01-05', 1, 'a'), ('2026-01-06', 2, 'b')");
  DatasetRef adopting{"ads", "stats", &daily, /*adopt=*/true};
  TimePartitionWindow jan5(day(2026, 1, 5), day(2026, 1, 5));
  Table rows;
  rows.append({{"date", day(2026, 1, 5)}, {"n", 9}, {"extra", 1.5}});
  EXPECT_EQ(destination.write(adopting, &jan5, rows), 1);
  EXPECT_EQ(raw_text(path,
                     "SELECT group_concat(\"column\" || ':' || type, ' ') FROM "
                     "(SELECT * FROM _interloper_columns ORDER BY position)"),
            "date:date n:int label:string extra:double");
  TimePartitionWindow both(day(2026, 1, 5), day(2026, 1, 6));
  Table back = destination.read(adopting, &both);
  ASSERT_EQ(back.num_rows(), 2u);
  EXPECT_EQ(back.at(0, "date"), Value(day(2026, 1, 5)));
  EXPECT_EQ(back.at(0, "n"), Value(9));
  EXPECT_EQ(back.at(0, "label"), Value());
  EXPECT_EQ(back.at(0, "extra"), Value(1.5));
  EXPECT_EQ(back.at(1, "date"), Value(day(2026, 1, 6)));
  EXPECT_EQ(back.at(1, "n"), Value(2));
  EXPECT_EQ(back.at(1, "label"), Value("b"));
  EXPECT_EQ(back.at(1, "extra"), Value());
  // Adopted, the table is the dataset's: later writes need no opt-in, and keep its types.
  Table clash;
  clash.append({{"date", day(2026, 1, 5)}, {"n", "nine"}});
  EXPECT_THROW(destination.write(stats, &jan5, clash), DestinationError);
  EXPECT_EQ(destination.write(stats, &jan5, rows), 1);
}

TEST_F(SqliteDestinationTest, AdoptingUnpartitionedReplacesTheRows) {
  raw_exec(path, "CREATE TABLE dims (k TEXT, v REAL); INSERT INTO dims VALUES ('old', 1)");
  DatasetRef dims{"", "dims", nullptr, /*adopt=*/true};
  Table rows;
  rows.append({{"k", "new"}, {"v", 2.0}});
  EXPECT_EQ(destination.write(dims, nullptr, rows), 1);
  EXPECT_EQ(destination.read(dims, nullptr), rows);
  EXPECT_EQ(raw_text(path, "SELECT group_concat(k) FROM dims"), "new");
}

// Switching a file to WAL needs an exclusive lock, and SQLite answers "database is locked" at
// once, without waiting, when another connection holds the write lock at that moment (as when
// another process is creating the same new database). Opening must wait for it instead.
TEST_F(SqliteDestinationTest, OpeningWaitsForAnotherConnectionsWriteLock) {
  const std::string file = dir / "locked.db";
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "CREATE TABLE t(x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  std::thread release([other] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  });
  try {
    SqliteDestination opened(file);
    Table rows;
    rows.append({{"x", 1}});
    opened.write({"src", "a", nullptr}, nullptr, rows);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  release.join();
  sqlite3_close(other);
}

}  // namespace
}  // namespace interloper

namespace interloper {
namespace {

// A window written without rows leaves a table a query reads, with the partition column,
// untyped until a row types it.
TEST_F(SqliteDestinationTest, AnEmptyWindowLeavesATableToQuery) {
  TimePartitionWindow empty(day(2026, 1, 2), day(2026, 1, 3));
  EXPECT_EQ(destination.write(stats, &empty, Table()), 0);
  QueryableDestination::Relation relation = destination.relation_of(stats, &empty, "w");
  Table none = destination.query("SELECT count(*) AS n FROM (" + relation.sql + ")",
                                 relation.params, {.asset = "report", .datasets = {stats}});
  EXPECT_EQ(none.at(0, "n"), Value(0));
  EXPECT_EQ(destination.schema(stats), Schema({{"date", DataType::null}}));
  TimePartitionWindow first(day(2026, 1, 1), day(2026, 1, 1));
  Table rows;
  rows.append({{"date", day(2026, 1, 1)}, {"clicks", 1}});
  EXPECT_EQ(destination.write(stats, &first, rows), 1);
  EXPECT_EQ(destination.schema(stats),
            Schema({{"date", DataType::date}, {"clicks", DataType::int64}}));
  EXPECT_TRUE(destination.retired_columns(stats).empty());
  TimePartitionWindow all(day(2026, 1, 1), day(2026, 1, 3));
  Table back = destination.read(stats, &all);
  ASSERT_EQ(back.num_rows(), 1u);
  EXPECT_EQ(back.at(0, "date"), Value(day(2026, 1, 1)));
}

// A query past its timeout is interrupted and fails saying so; the destination goes on.
TEST_F(SqliteDestinationTest, AQueryPastItsTimeoutIsInterrupted) {
  const auto start = std::chrono::steady_clock::now();
  try {
    destination.query(
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1e12) "
        "SELECT count(*) AS n FROM c",
        {}, {.asset = "runaway", .datasets = {}, .timeout_seconds = 0.5});
    FAIL() << "expected DestinationError";
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("asset 'runaway': "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("timed out after 0.5s"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  // No limit is left behind: a long query without one runs to its end.
  Table counted = destination.query(
      "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 300000) "
      "SELECT count(*) AS n FROM c",
      {}, {.asset = "next", .datasets = {}});
  EXPECT_EQ(counted.at(0, "n"), Value(300000));
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 1));
  Table rows;
  rows.append({{"date", day(2026, 1, 1)}, {"clicks", 1}});
  EXPECT_EQ(destination.write(stats, &window, rows), 1);
}

}  // namespace
}  // namespace interloper

namespace interloper {
namespace {

// A recursive CTE, which SQLite reports as a read of a table of the CTE's name, is the query's
// own; the tables the database stores stay refused, in any case of their names.
TEST_F(SqlIsolationTest, RecursiveQueriesReadTheirOwnTables) {
  Table counted = destination.query(
      "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 10) "
      "SELECT count(*) AS n FROM c, ads__stats",
      {}, QueryScope{.asset = "report", .datasets = {stats}});
  EXPECT_EQ(counted.at(0, "n"), Value(10));
  std::string error = refusal(destination, stats, "SELECT count(*) FROM ADS__SECRET");
  EXPECT_NE(error.find("reading table 'ADS__SECRET'"), std::string::npos) << error;
  error = refusal(destination, stats, "SELECT * FROM pragma_table_list");
  EXPECT_NE(error.find("asset 'report'"), std::string::npos) << error;
  error = refusal(destination, stats, "SELECT * FROM dbstat");
  EXPECT_NE(error.find("sql may not use"), std::string::npos) << error;
  expect_writes_work();
}

}  // namespace
}  // namespace interloper

namespace interloper {
namespace {

// A write past the memory bound is staged: the rows kept so far and every later batch go through
// the staging table, a column added and a date widened to a timestamp on the way, in order; the
// next write of the connection reuses the staging table.
TEST_F(SqliteDestinationTest, WritesPastTheMemoryBoundAreStagedInOrder) {
  TimePartitionWindow window(day(2026, 2, 1), day(2026, 2, 2));
  const std::string pad(1000, 'x');
  auto batch = [&](int first, bool widened) {
    Table t;
    for (int i = first; i < first + 600; ++i) {
      if (widened) {
        t.append({{"date", day(2026, 2, 2)},
                  {"when", at(2026, 2, 2, 6)},
                  {"pad", pad},
                  {"n", i},
                  {"extra", i}});
      } else {
        t.append({{"date", day(2026, 2, 1)}, {"when", day(2026, 2, 1)}, {"pad", pad}, {"n", i}});
      }
    }
    return t;
  };
  for (int round = 0; round < 2; ++round) {
    auto writer = destination.open_writer(stats, &window);
    writer->append(batch(0, false));     // kept in memory
    writer->append(batch(600, false));   // past the bound: both staged
    writer->append(batch(1200, true));   // staged, with a new column and a wider type
    EXPECT_EQ(writer->commit(), 1800);
    Table back = destination.read(stats, &window);
    ASSERT_EQ(back.num_rows(), 1800u);
    EXPECT_EQ(back.schema().field(*back.schema().find("when")).type, DataType::timestamp);
    for (std::size_t r = 0; r < back.num_rows(); ++r) {
      ASSERT_EQ(back.at(r, "n"), Value(static_cast<int>(r)));
    }
    EXPECT_EQ(back.at(0, "when"), Value(at(2026, 2, 1, 0)));
    EXPECT_TRUE(back.at(0, "extra").is_null());
    EXPECT_EQ(back.at(1799, "extra"), Value(1799));
  }
}

}  // namespace
}  // namespace interloper
