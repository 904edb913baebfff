// PostgresDestination against a real server (scripts/with-postgres): the contract, the stored
// types, schema changes, the streaming writer, partition locks, URLs and redacted passwords.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <random>
#include <thread>

#include "destination/destination_contract.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "interloper/sqlsession/postgres_sql.hpp"
#include "destination/postgres_fixtures.hpp"
#include "interloper/postgres/postgres.hpp"
#include "support/postgres.hpp"

namespace {

using interloper::testing::fresh_schema;
using interloper::testing::with_schema;

std::shared_ptr<interloper::Destination> contract_destination() {
  std::shared_ptr<interloper::Destination> out;
  [&] {
    IL_REQUIRE_POSTGRES(url);
    out = std::make_shared<interloper::PostgresDestination>(
        with_schema(url, fresh_schema("contract")));
  }();
  return out;
}

}  // namespace

IL_INSTANTIATE_DESTINATION_CONTRACT(Postgres,
                                    [](const std::string&) { return contract_destination(); });

namespace interloper {
namespace {

using testing::at;
using testing::day;

// The password of a URL, as written.
std::string password_of(const std::string& url) {
  auto start = url.find("://") + 3;
  auto at = url.find('@', start);
  auto colon = url.find(':', start);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return "";
  return url.substr(colon + 1, at - colon - 1);
}

class PostgresDestinationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    IL_REQUIRE_POSTGRES(found);
    url = found;
    schema = fresh_schema("dest");
    destination = std::make_unique<PostgresDestination>(with_schema(url, schema));
    checker = std::make_unique<postgres::Pool>(postgres::parse_url(url, {}));
  }

  // One value straight from the server, as text, bypassing the destination.
  std::string raw(const std::string& sql) { return testing::first_value(*checker, sql); }

  std::string url;
  std::string schema;
  std::unique_ptr<PostgresDestination> destination;
  std::unique_ptr<postgres::Pool> checker;
  TimePartitionConfig daily{"date", {.granularity = TimeGranularity::DAY, .allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
};

TEST_F(PostgresDestinationTest, StoresTypedColumnsInTheSchema) {
  TimePartitionWindow window(day(2026, 1, 5), day(2026, 1, 5));
  Table rows;
  rows.append({{"date", day(2026, 1, 5)},
               {"ts", at(2026, 1, 5, 7, 30)},
               {"n", 3},
               {"x", 0.5},
               {"s", "a"},
               {"ok", true},
               {"none", nullptr}});
  destination->write(stats, &window, rows);
  std::string types = raw(
      "SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY ordinal_position) "
      "FROM information_schema.columns WHERE table_schema = '" +
      schema + "' AND table_name = 'ads__stats'");
  EXPECT_EQ(types,
            "date date, ts timestamp without time zone, n bigint, x double precision, s text, "
            "ok boolean, none text");
  EXPECT_EQ(raw("SELECT ts::text FROM \"" + schema + "\".ads__stats"), "2026-01-05 07:30:00");
  EXPECT_EQ(raw("SELECT rows FROM \"" + schema +
                "\"._interloper_partitions WHERE dataset = 'ads__stats'"),
            "1");
  EXPECT_EQ(destination->read(stats, &window), rows);
}

TEST_F(PostgresDestinationTest, RefusesATableItDidNotCreate) {
  const std::string table = "\"" + schema + "\".ads__stats";
  raw("CREATE TABLE " + table + " (\"date\" date, n bigint); INSERT INTO " + table +
      " VALUES ('2026-01-05', 1), ('2026-01-06', 2)");
  TimePartitionWindow window(day(2026, 1, 5), day(2026, 1, 5));
  Table rows;
  rows.append({{"date", day(2026, 1, 5)}, {"n", 9}});
  try {
    destination->write(stats, &window, rows);
    FAIL() << "wrote into a foreign table";
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("table 'ads__stats': exists but was not created by "
                                         "interloper"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("adopt: true"), std::string::npos) << e.what();
  }
  EXPECT_THROW(destination->write({"ads", "stats", nullptr}, nullptr, rows), DestinationError);
  EXPECT_EQ(raw("SELECT string_agg(n::text, ',' ORDER BY n) FROM " + table), "1,2");
  EXPECT_EQ(raw("SELECT count(*) FROM \"" + schema + "\"._interloper_columns"), "0");
}

TEST_F(PostgresDestinationTest, AdoptingKeepsTheTablesColumnsAndTheRowsOutsideTheWindow) {
  const std::string table = "\"" + schema + "\".ads__stats";
  raw("CREATE TABLE " + table + " (\"date\" date, n bigint, label text); INSERT INTO " + table +
      " VALUES ('2026-01-05', 1, 'a'), ('2026-01-06', 2, 'b')");
  DatasetRef adopting{"ads", "stats", &daily, /*adopt=*/true};
  TimePartitionWindow jan5(day(2026, 1, 5), day(2026, 1, 5));
  Table rows;
  rows.append({{"date", day(2026, 1, 5)}, {"n", 9}, {"extra", 1.5}});
  EXPECT_EQ(destination->write(adopting, &jan5, rows), 1);
  EXPECT_EQ(raw("SELECT string_agg(\"column\" || ':' || type, ' ' ORDER BY position) FROM \"" +
                schema + "\"._interloper_columns"),
            "date:date n:int label:string extra:double");
  TimePartitionWindow both(day(2026, 1, 5), day(2026, 1, 6));
  Table back = destination->read(adopting, &both);
  ASSERT_EQ(back.num_rows(), 2u);
  EXPECT_EQ(back.at(0, "n"), Value(9));
  EXPECT_EQ(back.at(0, "label"), Value());
  EXPECT_EQ(back.at(1, "n"), Value(2));
  EXPECT_EQ(back.at(1, "label"), Value("b"));
  Table clash;
  clash.append({{"date", day(2026, 1, 5)}, {"n", "nine"}});
  EXPECT_THROW(destination->write(stats, &jan5, clash), DestinationError);
  EXPECT_EQ(destination->write(stats, &jan5, rows), 1);
}

TEST_F(PostgresDestinationTest, AdoptingATableOfTypesItDoesNotWriteIsRefused) {
  const std::string table = "\"" + schema + "\".dims";
  raw("CREATE TABLE " + table + " (k text, v integer)");
  Table rows;
  rows.append({{"k", "a"}, {"v", 1}});
  try {
    destination->write({"", "dims", nullptr, /*adopt=*/true}, nullptr, rows);
    FAIL() << "adopted an integer column";
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("column 'v' is integer"), std::string::npos) << e.what();
  }
}

TEST_F(PostgresDestinationTest, NewColumnsAreAddedAndTypesWiden) {
  TimePartitionWindow first(day(2026, 1, 1), day(2026, 1, 1));
  TimePartitionWindow second(day(2026, 1, 2), day(2026, 1, 2));
  Table a;
  a.append({{"date", day(2026, 1, 1)}, {"clicks", 1}});
  destination->write(stats, &first, a);
  Table b;
  b.append({{"date", day(2026, 1, 2)}, {"clicks", 2.5}, {"cost", "high"}});
  destination->write(stats, &second, b);
  EXPECT_EQ(raw("SELECT data_type FROM information_schema.columns WHERE table_schema = '" +
                schema + "' AND column_name = 'clicks'"),
            "double precision");
  TimePartitionWindow both(day(2026, 1, 1), day(2026, 1, 2));
  Table back = destination->read(stats, &both);
  ASSERT_EQ(back.num_rows(), 2u);
  EXPECT_EQ(back.at(0, "clicks"), Value(1.0));
  EXPECT_EQ(back.at(0, "cost"), Value());
  EXPECT_EQ(back.at(1, "cost"), Value("high"));
}

TEST_F(PostgresDestinationTest, TypeChangeThatCannotWidenIsRefusedAndNothingIsWritten) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 2));
  Table a;
  a.append({{"date", day(2026, 1, 1)}, {"clicks", 1}});
  destination->write(stats, &window, a);
  Table b;
  b.append({{"date", day(2026, 1, 2)}, {"clicks", "many"}});
  try {
    destination->write(stats, &window, b);
    FAIL() << "expected DestinationError";
  } catch (const DestinationError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("clicks"), std::string::npos) << message;
    EXPECT_NE(message.find("int"), std::string::npos) << message;
    EXPECT_NE(message.find("string"), std::string::npos) << message;
  }
  EXPECT_EQ(destination->read(stats, &window), a);
  EXPECT_EQ(raw("SELECT data_type FROM information_schema.columns WHERE table_schema = '" +
                schema + "' AND column_name = 'clicks'"),
            "bigint");
}

TEST_F(PostgresDestinationTest, StreamingWriterKeepsOneCopyOpenAndCommitsAtOnce) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 3));
  Table old_rows;
  old_rows.append({{"date", day(2026, 1, 2)}, {"clicks", 100}});
  destination->write(stats, &window, old_rows);
  auto writer = destination->open_writer(stats, &window);
  for (int d = 1; d <= 3; ++d) {
    Table batch;
    batch.append({{"date", day(2026, 1, d)}, {"clicks", d}});
    writer->append(batch);
  }
  // Until commit, readers see the old rows.
  EXPECT_EQ(destination->read(stats, &window), old_rows);
  // A batch bringing a column closes the COPY, adds the column and reopens it (readers of the
  // table now wait for the commit: ALTER TABLE holds its lock until then).
  Table extra;
  extra.append({{"date", day(2026, 1, 3)}, {"clicks", 4}, {"note", "x"}});
  writer->append(extra);
  EXPECT_EQ(writer->commit(), 4);
  Table back = destination->read(stats, &window);
  ASSERT_EQ(back.num_rows(), 4u);
  EXPECT_EQ(back.at(3, "note"), Value("x"));
  EXPECT_EQ(back.at(0, "note"), Value());
}

TEST_F(PostgresDestinationTest, AbandonedWriterLeavesStorageAsItWas) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 2));
  Table old_rows;
  old_rows.append({{"date", day(2026, 1, 1)}, {"clicks", 7}});
  destination->write(stats, &window, old_rows);
  {
    auto writer = destination->open_writer(stats, &window);
    Table batch;
    batch.append({{"date", day(2026, 1, 2)}, {"clicks", 1}, {"added", true}});
    writer->append(batch);
    Table outside;
    outside.append({{"date", day(2026, 1, 9)}, {"clicks", 1}});
    EXPECT_THROW(writer->append(outside), DestinationError);
    EXPECT_THROW(writer->commit(), DestinationError);
  }
  EXPECT_EQ(destination->read(stats, &window), old_rows);
  EXPECT_EQ(*destination->schema(stats),
            Schema({{"date", DataType::date}, {"clicks", DataType::int64}}));
}

TEST_F(PostgresDestinationTest, WritersOfOnePartitionTakeTurns) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 1));
  Table first_rows;
  first_rows.append({{"date", day(2026, 1, 1)}, {"clicks", 1}});
  destination->write(stats, &window, first_rows);  // the table exists
  auto first = destination->open_writer(stats, &window);
  first->append(first_rows);
  Table second_rows;
  second_rows.append({{"date", day(2026, 1, 1)}, {"clicks", 2}});
  second_rows.append({{"date", day(2026, 1, 1)}, {"clicks", 3}});
  std::thread second([&] { destination->write(stats, &window, second_rows); });
  // The second writer waits on the partition's advisory lock until the first commits.
  bool waiting = false;
  for (int i = 0; i < 500 && !waiting; ++i) {
    waiting = raw("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted") !=
              "0";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(waiting);
  EXPECT_EQ(destination->row_count(stats, nullptr), 1);
  first->commit();
  second.join();
  EXPECT_EQ(destination->read(stats, &window), second_rows);
}

TEST_F(PostgresDestinationTest, PasswordNeverShows) {
  std::string password = password_of(url);
  ASSERT_FALSE(password.empty()) << "the test server's URL carries a password";
  EXPECT_EQ(destination->url().find(password), std::string::npos);
  EXPECT_NE(destination->url().find(":***@"), std::string::npos) << destination->url();
  std::string wrong = url;
  wrong.replace(wrong.find(password), password.size(), "not-" + password);
  try {
    PostgresDestination refused(wrong);
    FAIL() << "expected DestinationError";
  } catch (const DestinationError& e) {
    std::string message = e.what();
    EXPECT_EQ(message.find(password), std::string::npos) << message;
    EXPECT_NE(message.find("password authentication failed"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST_F(PostgresDestinationTest, LibpqParametersAndEnvironmentPassThrough) {
  auto probe = std::make_unique<PostgresDestination>(
      with_schema(url, schema) + "&application_name=il_probe_" + schema);
  probe->row_count(stats, nullptr);  // leaves its connection idle in the pool
  EXPECT_EQ(raw("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'il_probe_" +
                schema + "'"),
            "1");
  // No password in the URL: PGPASSWORD supplies it, as for any libpq program.
  std::string password = password_of(url);
  std::string bare = url;
  bare.erase(bare.find(":" + password + "@"), password.size() + 1);
  ::setenv("PGPASSWORD", password.c_str(), 1);
  EXPECT_NO_THROW(PostgresDestination(with_schema(bare, schema)));
  ::unsetenv("PGPASSWORD");
  EXPECT_THROW(PostgresDestination(with_schema(bare, schema) + "&passfile=/nonexistent"),
               DestinationError);
}

TEST_F(PostgresDestinationTest, BadUrlsFailInOneLine) {
  for (std::string bad : {url + "?nonsense_parameter=1", url + "?schema=",
                          std::string("postgresql://u:pw-secret@127.0.0.1:1/db?connect_timeout=2")}) {
    try {
      open_destination(bad);
      ADD_FAILURE() << "expected DestinationError for " << bad;
    } catch (const DestinationError& e) {
      std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_EQ(message.find("pw-secret"), std::string::npos) << message;
      EXPECT_EQ(message.find(password_of(url)), std::string::npos) << message;
    }
  }
}

TEST(PostgresUrl, RedactsThePassword) {
  EXPECT_EQ(postgres::redact("postgresql://me:s3cret@db:5432/w?schema=raw"),
            "postgresql://me:***@db:5432/w?schema=raw");
  EXPECT_EQ(postgres::redact("postgres://me@db/w"), "postgres://me@db/w");
  EXPECT_EQ(postgres::redact("postgresql:///w"), "postgresql:///w");
  postgres::Url url = postgres::parse_url("postgresql://me:p%40ss@db/w?schema=raw&sslmode=disable",
                                          {"schema"});
  EXPECT_EQ(url.get("schema"), "raw");
  EXPECT_EQ(url.conninfo, "postgresql://me:p%40ss@db/w?sslmode=disable&connect_timeout=5");
  EXPECT_THROW(postgres::parse_url("mysql://x", {}), DestinationError);
}

}  // namespace
}  // namespace interloper

namespace interloper {
namespace {

TEST(PostgresSql, NamedParametersBecomeNumberedOutsideQuotesAndComments) {
  auto q = detail::pg::number_parameters(
      "SELECT x::date, ':a', E'\\':b', \":c\", $$ :d $$, $t$ :e $t$ -- :f\n"
      "FROM t /* :g /* :h */ */ WHERE a = :a AND b < :b_2 AND c = :a");
  EXPECT_EQ(q.sql,
            "SELECT x::date, ':a', E'\\':b', \":c\", $$ :d $$, $t$ :e $t$ -- :f\n"
            "FROM t /* :g /* :h */ */ WHERE a = $1 AND b < $2 AND c = $1");
  EXPECT_EQ(q.names, (std::vector<std::string>{"a", "b_2"}));
}

TEST_F(PostgresDestinationTest, QueryBindsTypedParametersReadOnly) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 2));
  Table rows;
  rows.append({{"date", day(2026, 1, 1)}, {"ts", at(2026, 1, 1, 23)}, {"clicks", 1}});
  rows.append({{"date", day(2026, 1, 2)}, {"ts", at(2026, 1, 2, 0)}, {"clicks", 2}});
  destination->write(stats, &window, rows);
  const std::string table = destination->table_name_of(stats);
  // A date bound against a timestamp column compares as a time, not as text.
  Table back = destination->query(
      "SELECT \"date\", ts, clicks, clicks::double precision / 2 AS half, ':start' AS literal "
      "FROM \"" + table + "\" WHERE ts >= :start AND ts < :end ORDER BY ts",
      {{":start", Value(Value::Date(std::chrono::sys_days(day(2026, 1, 1))))},
       {":end", Value(Value::Date(std::chrono::sys_days(day(2026, 1, 2))))}});
  ASSERT_EQ(back.num_rows(), 1u);
  EXPECT_EQ(back.schema(), Schema({{"date", DataType::date},
                                   {"ts", DataType::timestamp},
                                   {"clicks", DataType::int64},
                                   {"half", DataType::float64},
                                   {"literal", DataType::string}}));
  EXPECT_EQ(back.at(0, "ts"), Value(at(2026, 1, 1, 23)));
  EXPECT_EQ(back.at(0, "half"), Value(0.5));
  EXPECT_EQ(back.at(0, "literal"), Value(":start"));
  // A string parameter takes the type its context gives it.
  EXPECT_EQ(destination->query("SELECT count(*) AS n FROM \"" + table + "\" WHERE \"date\" = :d",
                               {{"d", Value("2026-01-02")}})
                .at(0, "n"),
            Value(1));
  EXPECT_THROW(destination->query("DELETE FROM \"" + table + "\"", {}), DestinationError);
  try {
    raw("CREATE SEQUENCE \"" + schema + "\".counter");
    destination->query("SELECT nextval('counter') AS n", {});  // writes: refused in READ ONLY
    FAIL() << "expected DestinationError";
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("read-only"), std::string::npos) << e.what();
  }
  EXPECT_THROW(destination->query("SELECT 1", {{":missing", Value(1)}}), DestinationError);
  EXPECT_EQ(destination->row_count(stats, nullptr), 2);
}

}  // namespace
}  // namespace interloper

namespace interloper {
namespace {

using testing::day;

// Names longer than PostgreSQL's 63 bytes: each dataset and each column keeps a table or a
// column of its own, under a short name on record, and is read back under its own name.
class PostgresLongNamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    IL_REQUIRE_POSTGRES(found);
    url = found;
    schema = fresh_schema("long");
    checker = std::make_unique<postgres::Pool>(postgres::parse_url(url, {}));
  }

  std::string raw(const std::string& sql) { return testing::first_value(*checker, sql); }

  static Table clicks(int n) {
    Table rows;
    rows.append({{"date", day(2026, 1, 5)}, {"clicks", n}});
    return rows;
  }

  std::string url;
  std::string schema;
  std::unique_ptr<postgres::Pool> checker;
  TimePartitionConfig daily{"date", {.granularity = TimeGranularity::DAY, .allow_window = true}};
  TimePartitionWindow window{day(2026, 1, 5), day(2026, 1, 5)};
  // "ads__" and 62 letters: the first 63 bytes of both names are the same.
  std::string stem = std::string(62, 'a');
  DatasetRef first{"ads", stem + "_first", &daily};
  DatasetRef second{"ads", stem + "_second", &daily};
};

TEST_F(PostgresLongNamesTest, TwoAssetsWhoseNamesShareTheirFirst63BytesKeepTablesOfTheirOwn) {
  PostgresDestination destination(with_schema(url, schema));
  destination.write(first, &window, clicks(1));
  destination.write(second, &window, clicks(2));
  EXPECT_EQ(destination.read(first, &window), clicks(1));
  EXPECT_EQ(destination.read(second, &window), clicks(2));
  EXPECT_EQ(destination.row_count(first, nullptr), 1);
  EXPECT_EQ(destination.partition_counts(second, window).front().rows, 1);
  const std::string a = destination.table_name_of(first);
  const std::string b = destination.table_name_of(second);
  EXPECT_NE(a, b);
  EXPECT_LE(a.size(), 63u);
  EXPECT_EQ(a.substr(0, 40), ("ads__" + stem).substr(0, 40));  // readable
  EXPECT_EQ(raw("SELECT count(*) FROM pg_tables WHERE schemaname = '" + schema +
                "' AND tablename NOT LIKE '\\_interloper%'"),
            "2");
  // The records keep the datasets' own names; the tables they hold are on record beside them.
  EXPECT_EQ(raw("SELECT count(DISTINCT dataset) FROM \"" + schema + "\"._interloper_columns"), "2");
  EXPECT_EQ(raw("SELECT \"table\" FROM \"" + schema + "\"._interloper_tables WHERE dataset = 'ads__" +
                stem + "_first'"),
            a);
  // A query of the second reads the second's rows only.
  QueryableDestination::Relation relation = destination.relation_of(second, &window, "p");
  Table back = destination.query("SELECT clicks FROM (" + relation.sql + ") AS t",
                                 relation.params, {.asset = "report", .datasets = {second}});
  ASSERT_EQ(back.num_rows(), 1u);
  EXPECT_EQ(back.at(0, "clicks"), Value(2));
  // Dropped whole, a dataset leaves the other as it was.
  destination.drop(first, nullptr);
  EXPECT_EQ(destination.read(second, &window), clicks(2));
  EXPECT_EQ(raw("SELECT count(*) FROM \"" + schema + "\"._interloper_tables"), "1");
}

TEST_F(PostgresLongNamesTest, LongColumnNamesAreStoredShortAndReadUnderTheirOwnNames) {
  PostgresDestination destination(with_schema(url, schema));
  const std::string long_a = std::string(63, 'c') + "_a";
  const std::string long_b = std::string(63, 'c') + "_b";
  Table rows;
  rows.append({{"date", day(2026, 1, 5)}, {long_a, 1}, {long_b, "two"}});
  DatasetRef stats{"ads", "stats", &daily};
  destination.write(stats, &window, rows);
  EXPECT_EQ(destination.read(stats, &window), rows);
  EXPECT_EQ(destination.schema(stats)->field(1).name, long_a);
  // A second write finds both columns again (no "column specified more than once").
  Table more;
  more.append({{"date", day(2026, 1, 5)}, {long_a, 3}, {long_b, "four"}});
  destination.write(stats, &window, more);
  EXPECT_EQ(destination.read(stats, &window), more);
  EXPECT_EQ(raw("SELECT count(*) FROM information_schema.columns WHERE table_schema = '" +
                schema + "' AND table_name = 'ads__stats'"),
            "3");
}

TEST_F(PostgresLongNamesTest, ATableTruncatedByAnEarlierVersionKeepsItsName) {
  // As an earlier version left it: the table under the name PostgreSQL truncated, the records
  // under the dataset's whole name, and no record of tables.
  { PostgresDestination make_catalog(with_schema(url, schema)); }
  const std::string name = "ads__" + stem + "_first";
  const std::string q = "\"" + schema + "\".";
  raw("CREATE TABLE " + q + "\"" + name + "\" (\"date\" date, clicks bigint); INSERT INTO " + q +
      "\"" + name + "\" VALUES ('2026-01-04', 7), ('2026-01-05', 8); INSERT INTO " + q +
      "_interloper_columns (dataset, \"column\", type, position) VALUES ('" + name +
      "', 'date', 'date', 0), ('" + name + "', 'clicks', 'int', 1); INSERT INTO " + q +
      "_interloper_partitions VALUES ('" + name + "', '2026-01-04', 1, now()), ('" + name +
      "', '2026-01-05', 1, now()); DROP TABLE " + q + "_interloper_tables");
  // The second dataset was adopted into the same truncated table: it is on record too.
  const std::string other = "ads__" + stem + "_second";
  raw("INSERT INTO " + q + "_interloper_columns (dataset, \"column\", type, position) VALUES ('" +
      other + "', 'date', 'date', 0), ('" + other + "', 'clicks', 'int', 1); INSERT INTO " + q +
      "_interloper_partitions VALUES ('" + other + "', '2026-01-05', 1, now())");
  PostgresDestination destination(with_schema(url, schema));
  EXPECT_EQ(destination.table_name_of(first), name.substr(0, 63));
  // The first in name order keeps the table; the other's partitions read as gone, not fine.
  EXPECT_TRUE(destination.partition_counts(first, window).front().written);
  EXPECT_FALSE(destination.partition_counts(second, window).front().written);
  EXPECT_NE(destination.table_name_of(second), name.substr(0, 63));
  Table rows;
  rows.append({{"date", day(2026, 1, 5)}, {"clicks", 8}});
  EXPECT_EQ(destination.read(first, &window), rows);
  destination.write(first, &window, clicks(9));
  EXPECT_EQ(destination.row_count(first, nullptr), 2);
  EXPECT_EQ(raw("SELECT string_agg(clicks::text, ',' ORDER BY clicks) FROM " + q + "\"" +
                name.substr(0, 63) + "\""),
            "7,9");
  // The other dataset of the same first 63 bytes gets a table of its own.
  destination.write(second, &window, clicks(2));
  EXPECT_EQ(destination.read(second, &window), clicks(2));
  EXPECT_EQ(destination.row_count(first, nullptr), 2);
}

// A window written without rows leaves a table a query reads, its partition column created as
// the type its rows will have (so a window filter compares with it) and recorded as untyped
// until a row types it.
TEST_F(PostgresDestinationTest, AnEmptyWindowLeavesATableToQuery) {
  TimePartitionWindow empty(day(2026, 1, 2), day(2026, 1, 3));
  EXPECT_EQ(destination->write(stats, &empty, Table()), 0);
  const std::string table = destination->table_name_of(stats);
  QueryableDestination::Relation relation = destination->relation_of(stats, &empty, "w");
  Table none = destination->query("SELECT count(*) AS n FROM (" + relation.sql + ") AS r",
                                  relation.params, {.asset = "report", .datasets = {stats}});
  EXPECT_EQ(none.at(0, "n"), Value(0));
  EXPECT_EQ(raw("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = '\"" +
                schema + "\".\"" + table + "\"'::regclass AND attname = 'date'"),
            "date");
  EXPECT_EQ(destination->schema(stats), Schema({{"date", DataType::null}}));
  // The first row types the column; the empty window stays written, empty.
  TimePartitionWindow first(day(2026, 1, 1), day(2026, 1, 1));
  Table rows;
  rows.append({{"date", day(2026, 1, 1)}, {"clicks", 1}});
  EXPECT_EQ(destination->write(stats, &first, rows), 1);
  EXPECT_EQ(destination->schema(stats),
            Schema({{"date", DataType::date}, {"clicks", DataType::int64}}));
  EXPECT_TRUE(destination->retired_columns(stats).empty());
  EXPECT_EQ(destination->partition_counts(stats, empty)[0].written, true);
  TimePartitionWindow all(day(2026, 1, 1), day(2026, 1, 3));
  EXPECT_EQ(destination->read(stats, &all).num_rows(), 1u);
}

// A query past its timeout is stopped by the server and fails saying so; the connection it ran
// on serves the next query.
TEST_F(PostgresDestinationTest, AQueryPastItsTimeoutIsStopped) {
  const auto start = std::chrono::steady_clock::now();
  try {
    destination->query(
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1e12) "
        "SELECT count(*) AS n FROM c",
        {}, {.asset = "runaway", .datasets = {}, .timeout_seconds = 0.5});
    FAIL() << "expected DestinationError";
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("asset 'runaway': "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("timed out after 0.5s"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  for (int i = 0; i < 6; ++i) {  // more than the pool keeps: every connection is reused
    EXPECT_EQ(
        destination
            ->query("SELECT 1 AS one", {}, {.asset = "next", .datasets = {}, .timeout_seconds = 5})
            .at(0, "one"),
        Value(1));
  }
  // SET LOCAL: no limit outlives its query on the connections the destination reuses.
  EXPECT_EQ(destination->query("SELECT current_setting('statement_timeout') AS t", {}).at(0, "t"),
            Value("0"));
}

// A scoped query's error is the server's own words, without the statement sent.
TEST_F(PostgresDestinationTest, AScopedQueryFailsInTheServersWords) {
  try {
    destination->query("SELECT no_such_column FROM (SELECT 1 AS x) AS hidden_table_name", {},
                       {.asset = "report", .datasets = {}});
    FAIL() << "expected DestinationError";
  } catch (const DestinationError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("asset 'report': postgresql '"), std::string::npos) << what;
    EXPECT_NE(what.find("column \"no_such_column\" does not exist"), std::string::npos) << what;
    EXPECT_EQ(what.find("hidden_table_name"), std::string::npos) << what;
    EXPECT_EQ(what.find("DECLARE"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace interloper
