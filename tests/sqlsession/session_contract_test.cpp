// The contract every SqlSession keeps, run on every engine.
#include <gtest/gtest.h>

#include <chrono>

#include "interloper/sqlsession/faulty_session.hpp"
#include "sqlsession/session_backends.hpp"

namespace interloper::testing {
namespace {

using sql::SqlError;
using sql::SqlSession;
using namespace std::chrono;

Value micros(const char* text) { return Value(*parse_timestamp(text)); }

// A table of one column of each type, and the statement that fills one row of it.
void create_typed(SqlSession& db) {
  const sql::Dialect& d = db.dialect();
  db.execute("CREATE TABLE t (k " + d.type_name(DataType::string) + " PRIMARY KEY, b " +
             d.type_name(DataType::boolean) + ", i " + d.type_name(DataType::int64) + ", f " +
             d.type_name(DataType::float64) + ", d " + d.type_name(DataType::date) + ", ts " +
             d.type_name(DataType::timestamp) + ", n " + d.type_name(DataType::decimal) + ", j " +
             d.type_name(DataType::json) + ")");
}

const Schema kTyped({{"k", DataType::string},
                     {"b", DataType::boolean},
                     {"i", DataType::int64},
                     {"f", DataType::float64},
                     {"d", DataType::date},
                     {"ts", DataType::timestamp},
                     {"n", DataType::decimal},
                     {"j", DataType::json}});

std::vector<Value> typed_row() {
  return {Value("a"),
          Value(true),
          Value(42),
          Value(1.5),
          Value(std::chrono::year_month_day(2026y, January, 5d)),
          micros("2026-01-05T10:20:30.123456"),
          Value(*Decimal::parse("12345.6789")),
          Value(parse_json(R"({"x":[1,2]})"))};
}

std::string insert_typed(SqlSession& db) {
  std::string sql = "INSERT INTO t (k, b, i, f, d, ts, n, j) VALUES (";
  for (std::size_t i = 1; i <= 8; ++i) sql += (i > 1 ? ", " : "") + db.dialect().placeholder(i);
  return sql + ")";
}

TEST_P(SessionTest, BoundValuesComeBackExactlyAsTheirTypes) {
  create_typed(db());
  const std::vector<Value> row = typed_row();
  EXPECT_EQ(db().run(insert_typed(db()), row), 1);
  Table out = db().query("SELECT k, b, i, f, d, ts, n, j FROM t", {}, kTyped);
  ASSERT_EQ(out.num_rows(), 1u);
  for (std::size_t c = 0; c < row.size(); ++c) {
    EXPECT_EQ(out.column(c)[0], row[c]) << kTyped.field(c).name;
  }
  EXPECT_EQ(out.schema(), kTyped);
}

TEST_P(SessionTest, NullsAndUntypedColumnsReadAsTheEngineGivesThem) {
  create_typed(db());
  std::vector<Value> row(8);
  row[0] = Value("z");
  db().run(insert_typed(db()), row);
  Table typed = db().query("SELECT k, b, i, f, d, ts, n, j FROM t", {}, kTyped);
  for (std::size_t c = 1; c < 8; ++c) EXPECT_TRUE(typed.column(c)[0].is_null());
  Table untyped = db().query("SELECT k, 7 AS seven FROM t");
  EXPECT_EQ(untyped.schema().field(1).name, "seven");
  EXPECT_EQ(untyped.column(0)[0], Value("z"));
  EXPECT_EQ(untyped.column(1)[0].to_string(), "7");
}

TEST_P(SessionTest, QueriesComeInBatchesAndAnEmptyResultIsOneEmptyTable) {
  db().execute("CREATE TABLE n (v " + db().dialect().type_name(DataType::int64) + ")");
  for (int i = 0; i < 25; ++i)
    db().run("INSERT INTO n (v) VALUES (" + db().dialect().placeholder(1) + ")", {{Value(i)}});
  std::vector<std::size_t> sizes;
  const Schema schema({{"v", DataType::int64}});
  db().query(
      "SELECT v FROM n ORDER BY v", {}, schema, [&](Table&& t) { sizes.push_back(t.num_rows()); },
      10);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{10, 10, 5}));
  sizes.clear();
  db().query(
      "SELECT v FROM n WHERE v > 100", {}, schema,
      [&](Table&& t) { sizes.push_back(t.num_rows()); }, 10);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{0}));
}

// The same text asked again (a session may keep it prepared), inside its own sink, and after
// the table changed, answers as a fresh statement would.
TEST_P(SessionTest, TheSameQueryAgainSeesTheTableAsItIsNow) {
  const sql::Dialect& d = db().dialect();
  db().execute("CREATE TABLE q (v " + d.type_name(DataType::int64) + ")");
  const std::string insert = "INSERT INTO q (v) VALUES (" + d.placeholder(1) + ")";
  const std::string count = "SELECT count(*) FROM q WHERE v >= " + d.placeholder(1);
  const Schema n({{"n", DataType::int64}});
  for (int i = 0; i < 3; ++i) {
    db().run(insert, {{Value(i)}});
    EXPECT_EQ(db().query(count, {{Value(0)}}, n).at(0, "n"), Value(i + 1));
  }
  db().query(count, {{Value(1)}}, n, [&](Table&& outer) {
    EXPECT_EQ(outer.at(0, "n"), Value(2));
    EXPECT_EQ(db().query(count, {{Value(0)}}, n).at(0, "n"), Value(3));
  });
  db().execute("ALTER TABLE q ADD COLUMN w " + d.type_name(DataType::int64));
  EXPECT_EQ(db().query("SELECT * FROM q").num_columns(), 2u);
  db().execute("ALTER TABLE q ADD COLUMN x " + d.type_name(DataType::int64));
  EXPECT_EQ(db().query("SELECT * FROM q").num_columns(), 3u);
}

TEST_P(SessionTest, ARolledBackTransactionLeavesNothingAndACommittedOneStays) {
  db().execute("CREATE TABLE n (v " + db().dialect().type_name(DataType::int64) + ")");
  const std::string insert = "INSERT INTO n (v) VALUES (" + db().dialect().placeholder(1) + ")";
  {
    sql::Transaction tx(db());
    db().run(insert, {{Value(1)}});
    EXPECT_TRUE(db().in_transaction());
  }  // not committed
  EXPECT_FALSE(db().in_transaction());
  EXPECT_EQ(db().query("SELECT v FROM n").num_rows(), 0u);
  {
    sql::Transaction tx(db());
    db().run(insert, {{Value(2)}});
    tx.commit();
  }
  EXPECT_EQ(db().query("SELECT v FROM n").num_rows(), 1u);
  // Another session sees what was committed.
  auto other = backend().open();
  EXPECT_EQ(other->query("SELECT v FROM n").num_rows(), 1u);
}

TEST_P(SessionTest, BulkAppendStoresEachValueAsItsColumnsType) {
  const sql::Dialect& d = db().dialect();
  db().execute("CREATE TABLE a (x " + d.type_name(DataType::float64) + ", ts " +
               d.type_name(DataType::timestamp) + ", s " + d.type_name(DataType::string) + ")");
  std::vector<Value> xs{Value(1), Value(2.5), Value(), Value(4)};
  std::vector<Value> ts{Value(std::chrono::year_month_day(2026y, March, 1d)),
                        micros("2026-03-01T01:02:03.000004"), Value(), Value()};
  std::vector<Value> ss{Value("one"), Value("two"), Value("three"), Value("four")};
  {
    sql::Transaction tx(db());
    auto append = db().append("", "a", {"x", "ts", "s"},
                              {DataType::float64, DataType::timestamp, DataType::string});
    append->add({&xs, &ts, &ss}, 0, 2);
    const std::vector<std::size_t> rows{3};
    append->add({&xs, &ts, &ss}, rows);
    append->finish();
    tx.commit();
  }
  const Schema schema(
      {{"x", DataType::float64}, {"ts", DataType::timestamp}, {"s", DataType::string}});
  Table out = db().query("SELECT x, ts, s FROM a ORDER BY s", {}, schema);
  ASSERT_EQ(out.num_rows(), 3u);
  EXPECT_EQ(out.column(2)[0], Value("four"));
  EXPECT_EQ(out.column(0)[0], Value(4.0));
  EXPECT_EQ(out.column(0)[1], Value(1.0));
  EXPECT_EQ(out.column(1)[1], micros("2026-03-01T00:00:00"));
  EXPECT_EQ(out.column(1)[2], micros("2026-03-01T01:02:03.000004"));
}

TEST_P(SessionTest, AnUpsertInsertsThenReplacesTheOtherColumns) {
  const sql::Dialect& d = db().dialect();
  db().execute("CREATE TABLE u (a " + d.type_name(DataType::string) + ", b " +
               d.type_name(DataType::string) + ", v " + d.type_name(DataType::int64) +
               ", PRIMARY KEY (a, b))");
  const std::string upsert = d.upsert(d.quote("u"), {"a", "b", "v"}, 2);
  db().run(upsert, {{Value("x"), Value("y"), Value(1)}});
  db().run(upsert, {{Value("x"), Value("y"), Value(2)}});
  db().run(upsert, {{Value("x"), Value("z"), Value(3)}});
  Table out = db().query("SELECT v FROM u ORDER BY b");
  ASSERT_EQ(out.num_rows(), 2u);
  EXPECT_EQ(out.column(0)[0].to_string(), "2");
  EXPECT_EQ(out.column(0)[1].to_string(), "3");
}

TEST_P(SessionTest, AConstraintFailureSaysSo) {
  db().execute("CREATE TABLE c (k " + db().dialect().type_name(DataType::string) + " PRIMARY KEY)");
  const std::string insert = "INSERT INTO c (k) VALUES (" + db().dialect().placeholder(1) + ")";
  db().run(insert, {{Value("a")}});
  try {
    db().run(insert, {{Value("a")}});
    FAIL() << "a duplicate key was accepted";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.kind(), SqlError::Kind::constraint) << e.what();
  }
}

TEST_P(SessionTest, LocksAreTakenInsideAWriteTransaction) {
  sql::Transaction tx(db());
  const std::vector<std::string> keys{"2026-01-02", "2026-01-01"};
  EXPECT_NO_THROW(db().lock("shop__orders", keys));
  tx.commit();
}

TEST_P(SessionTest, AGuardedQueryReadsWithNamedParametersAndRefusesWrites) {
  create_typed(db());
  db().run(insert_typed(db()), typed_row());
  sql::GuardedQuery query;
  query.sql = "SELECT i FROM t WHERE k = :key";
  query.params = {{"key", Value("a")}};
  query.schema = backend().schema();
  Table out = db().guarded_query(query, nullptr);
  ASSERT_EQ(out.num_rows(), 1u);
  EXPECT_EQ(out.column(0)[0].to_string(), "42");
  query.sql = "DELETE FROM t";
  query.params.clear();
  EXPECT_THROW(db().guarded_query(query, nullptr), DestinationError);
  EXPECT_EQ(db().query("SELECT k FROM t").num_rows(), 1u);
}

TEST_P(SessionTest, AGuardedQueryStopsAtItsTimeLimit) {
  sql::GuardedQuery query;
  query.sql =
      "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r";
  query.schema = backend().schema();
  query.timeout_seconds = 0.2;
  try {
    db().guarded_query(query, nullptr);
    FAIL() << "an endless query returned";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.kind(), SqlError::Kind::timeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
}

// The fault wrapper fails exactly the call it is told to, and a transaction it breaks leaves
// nothing behind.
TEST_P(SessionTest, TheFaultWrapperFailsTheNthCallAndTheTransactionUndoesTheRest) {
  db().execute("CREATE TABLE n (v " + db().dialect().type_name(DataType::int64) + ")");
  const std::string insert = "INSERT INTO n (v) VALUES (" + db().dialect().placeholder(1) + ")";
  auto write = [&](SqlSession& s) {
    sql::Transaction tx(s);
    s.run(insert, {{Value(1)}});
    s.run(insert, {{Value(2)}});
    tx.commit();
  };
  sql::FaultySession counting(db(), 0);
  write(counting);
  const std::size_t calls = counting.calls();
  EXPECT_EQ(calls, 4u);  // begin, two inserts, commit
  db().run("DELETE FROM n");
  for (std::size_t n = 1; n <= calls; ++n) {
    sql::FaultySession faulty(db(), n);
    EXPECT_THROW(write(faulty), SqlError) << n;
    EXPECT_TRUE(faulty.failed());
    EXPECT_FALSE(db().in_transaction()) << n;
    EXPECT_EQ(db().query("SELECT v FROM n").num_rows(), 0u) << "fault at call " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, SessionTest, ::testing::Values("sqlite", "postgresql"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace interloper::testing
