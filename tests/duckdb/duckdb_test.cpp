// The RAII wrapper over DuckDB's C API, against the real library.
#include "interloper/duckdb/duckdb.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "support/expect.hpp"
#include "support/temp_dir.hpp"

namespace interloper::duckdb {
namespace {

using interloper::testing::TempDir;

// Every row of the first column of `sql`'s result, as DuckDB's text.
std::vector<std::string> texts(Connection& con, const std::string& sql) {
  std::vector<std::string> out;
  Result result = con.query(sql);
  while (std::optional<Chunk> chunk = result.next()) {
    for (std::size_t row = 0; row < chunk->size(); ++row) {
      out.emplace_back(chunk->is_null(0, row) ? "NULL" : std::string(chunk->text(0, row)));
    }
  }
  return out;
}

std::string text(Connection& con, const std::string& sql) {
  std::vector<std::string> all = texts(con, sql);
  return all.size() == 1 ? all[0] : "<" + std::to_string(all.size()) + " rows>";
}

TEST(DuckDB, RunsStatementsAndReadsChunks) {
  Database db;
  Connection con(db);
  con.execute("CREATE TABLE t (k BIGINT, v VARCHAR); INSERT INTO t VALUES (1, 'one'), (2, NULL)");
  Result result = con.query("SELECT k, v FROM t ORDER BY k");
  ASSERT_EQ(result.column_count(), 2u);
  EXPECT_EQ(result.column_name(1), "v");
  EXPECT_EQ(result.column_type(0).id(), DUCKDB_TYPE_BIGINT);
  std::optional<Chunk> chunk = result.next();
  ASSERT_TRUE(chunk);
  ASSERT_EQ(chunk->size(), 2u);
  EXPECT_EQ(chunk->data<std::int64_t>(0)[1], 2);
  EXPECT_EQ(chunk->text(1, 0), "one");
  EXPECT_TRUE(chunk->is_null(1, 1));
  EXPECT_FALSE(result.next());
}

TEST(DuckDB, ResultsStreamManyChunks) {
  Database db;
  Connection con(db);
  Result result = con.query("SELECT range AS i FROM range(100000)");
  std::int64_t sum = 0;
  std::size_t chunks = 0;
  while (std::optional<Chunk> chunk = result.next()) {
    ++chunks;
    for (std::size_t row = 0; row < chunk->size(); ++row) sum += chunk->data<std::int64_t>(0)[row];
  }
  EXPECT_EQ(sum, std::int64_t{99999} * 100000 / 2);
  EXPECT_GT(chunks, 40u);
}

TEST(DuckDB, BindsEveryKindOfValue) {
  Database db;
  Connection con(db);
  Statement s = con.prepare(
      "SELECT concat_ws('|', ?::VARCHAR, ?::VARCHAR, ?::VARCHAR, ?::VARCHAR, ?::VARCHAR, "
      "?::VARCHAR, epoch_us(?)::VARCHAR, coalesce(?::VARCHAR, 'null'))");
  EXPECT_EQ(s.parameter_count(), 8u);
  s.bind_bool(1, true);
  s.bind_int(2, std::numeric_limits<std::int64_t>::max());
  s.bind_double(3, -0.0);
  s.bind_text(4, "ünï'cødé");
  __int128 big = 1;
  for (int i = 0; i < 37; ++i) big *= 10;
  s.bind_decimal(5, -big, 38, 2);
  s.bind_date(6, -1);
  s.bind_timestamp(7, -1);
  s.bind_null(8);
  Result r = s.execute();
  std::optional<Chunk> chunk = r.next();
  ASSERT_TRUE(chunk);
  EXPECT_EQ(chunk->text(0, 0),
            "true|9223372036854775807|-0.0|ünï'cødé|"
            "-100000000000000000000000000000000000.00|1969-12-31|-1|null");
  // Bindings stay until rebound: the same statement runs again.
  s.bind_int(2, 5);
  Result again = s.execute();
  chunk = again.next();
  ASSERT_TRUE(chunk);
  EXPECT_NE(std::string(chunk->text(0, 0)).find("|5|"), std::string::npos);
}

TEST(DuckDB, AppendsChunksWithNullsAndStrings) {
  Database db;
  Connection con(db);
  con.execute("CREATE TABLE t (k BIGINT, v VARCHAR, d DECIMAL(38,3))");
  Appender appender(con, "t");
  EXPECT_EQ(appender.column_count(), 3u);
  EXPECT_EQ(appender.column_type(2).decimal_scale(), 3);
  std::vector<LogicalType> types;
  types.emplace_back(DUCKDB_TYPE_BIGINT);
  types.emplace_back(DUCKDB_TYPE_VARCHAR);
  types.push_back(LogicalType::decimal(38, 3));
  Chunk chunk(types);
  std::int64_t next = 0;
  for (int round = 0; round < 3; ++round) {
    chunk.reset();
    for (std::size_t row = 0; row < Chunk::capacity(); ++row, ++next) {
      chunk.data<std::int64_t>(0)[row] = next;
      if (next % 10 == 0) {
        chunk.set_null(1, row);
      } else {
        chunk.set_text(1, row,
                       "a long enough string to leave the inline form " + std::to_string(next));
      }
      chunk.data<duckdb_hugeint>(2)[row] = duckdb_hugeint{static_cast<std::uint64_t>(next), 0};
    }
    chunk.set_size(Chunk::capacity());
    appender.append(chunk);
  }
  appender.close();
  const std::int64_t n = next;
  EXPECT_EQ(text(con, "SELECT count(*)::VARCHAR FROM t"), std::to_string(n));
  EXPECT_EQ(text(con, "SELECT count(v)::VARCHAR FROM t"), std::to_string(n - (n + 9) / 10));
  EXPECT_EQ(text(con, "SELECT v FROM t WHERE k = 4097"),
            "a long enough string to leave the inline form 4097");
  EXPECT_EQ(text(con, "SELECT d::VARCHAR FROM t WHERE k = 1234"), "1.234");
}

TEST(DuckDB, ErrorsNameTheStatementAndDuckDBsMessage) {
  Database db;
  Connection con(db);
  try {
    con.execute("SELEC 1");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.statement(), "SELEC 1");
    EXPECT_EQ(e.type(), DUCKDB_ERROR_PARSER);
    EXPECT_NE(std::string(e.what()).find("duckdb ':memory:'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(statement: SELEC 1)"), std::string::npos) << e.what();
  }
  IL_EXPECT_THROW_WITH(con.prepare("SELECT * FROM missing_table"), DestinationError,
                       "missing_table");
  IL_EXPECT_THROW_WITH(Appender(con, "missing_table"), DestinationError, "missing_table");
  // A failure while rows are produced: when the query runs or when its rows are read.
  IL_EXPECT_THROW_WITH(
      {
        Result r = con.query("SELECT CAST(x AS INTEGER) FROM (VALUES ('1'), ('x')) t(x)");
        while (r.next()) {
        }
      },
      Error, "Conversion Error");
}

TEST(DuckDB, AppenderRefusesRowsTheTableCannotTake) {
  Database db;
  Connection con(db);
  con.execute("CREATE TABLE t (k BIGINT NOT NULL)");
  std::vector<LogicalType> types;
  types.emplace_back(DUCKDB_TYPE_BIGINT);
  Chunk chunk(types);
  chunk.set_null(0, 0);
  chunk.set_size(1);
  IL_EXPECT_THROW_WITH(
      {
        Appender appender(con, "t");
        appender.append(chunk);
        appender.close();
      },
      Error, "(table t)");
}

TEST(DuckDB, DatabaseFilesAndSettings) {
  TempDir dir("il-duckdb");
  const std::string path = dir / "x.duckdb";
  {
    Database db(path, {{"memory_limit", "64MB"}, {"threads", "1"}});
    Connection con(db);
    EXPECT_EQ(text(con, "SELECT current_setting('threads')::VARCHAR"), "1");
    con.execute("CREATE TABLE t AS SELECT 42 AS x");
  }
  Database again(path);
  Connection con(again);
  EXPECT_EQ(text(con, "SELECT x::VARCHAR FROM t"), "42");
  IL_EXPECT_THROW_WITH(Database(dir / "no/such/dir/x.duckdb"), DestinationError,
                       "no/such/dir/x.duckdb");
  IL_EXPECT_THROW_WITH(Database(":memory:", {{"no_such_setting", "1"}}), DestinationError,
                       "no_such_setting");
}

}  // namespace
}  // namespace interloper::duckdb
