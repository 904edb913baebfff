// `sql:` assets through the `interloper` binary, on SQLite and on PostgreSQL
// (scripts/with-postgres): an upstream partition without rows is an empty table downstream, a
// runaway query ends at its `timeout:`, and a failed query is reported as its author wrote it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>

#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "support/cli_process.hpp"
#include "support/postgres.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using interloper::testing::Outcome;
using interloper::testing::run_interloper;

enum class Database { sqlite, postgres };

// A directory holding a pipeline whose destination is the database under test: `assets` is the
// YAML of one source's assets. The warehouse is opened by the test the same way.
class SqlAssetCli : public ::testing::TestWithParam<Database> {
 protected:
  void SetUp() override {
    if (GetParam() == Database::postgres) {
      IL_REQUIRE_POSTGRES(url);
      destination_ = url + "?schema=" + interloper::testing::fresh_schema("sql");
    } else {
      destination_ = "sqlite://" + (dir_.path() / "warehouse.db").string();
    }
    // Emits one row for the day given, none for an even day of the month.
    dir_.write("emit.sh",
               "#!/bin/sh\n"
               "day=${1#*-*-}\n"
               "[ $((${day#0} % 2)) -eq 0 ] && exit 0\n"
               "echo \"{\\\"date\\\":\\\"$1\\\",\\\"amount\\\":2.5}\"\n",
               true);
  }

  std::string pipeline(const std::string& assets) {
    dir_.write("pipeline.yaml", "destination: " + destination_ +
                                    "\n"
                                    "store: state.db\n"
                                    "sources:\n"
                                    "  - name: shop\n"
                                    "    assets:\n" +
                                    assets);
    return (dir_.path() / "pipeline.yaml").string();
  }

  Outcome run(std::vector<std::string> args) {
    return run_interloper(std::move(args), dir_.path().string());
  }

  interloper::Table read(const std::string& asset, const interloper::PartitionConfig* partitioning,
                         const interloper::PartitionWindow* window) {
    auto warehouse = interloper::open_destination(destination_);
    return warehouse->read({"shop", asset, partitioning}, window);
  }

  interloper::testing::TempDir dir_;
  std::string destination_;
};

constexpr const char* kEvents =
    "      - name: events\n"
    "        partitioning: {kind: time, column: date}\n"
    "        command: [./emit.sh, \"{partition.key}\"]\n"
    "        schema: {amount: double}\n";

constexpr const char* kDaily =
    "      - name: daily\n"
    "        deps: [events]\n"
    "        partitioning: {kind: time, column: date}\n"
    "        sql: |\n"
    "          SELECT date, SUM(amount) AS total, COUNT(*) AS n\n"
    "          FROM events\n"
    "          GROUP BY date\n";

constexpr const char* kOverall =
    "      - name: overall\n"
    "        deps: [events]\n"
    "        sql: SELECT COUNT(*) AS n FROM events\n";

// A day run alone that yields no rows leaves a readable, empty table: the sql asset over that
// day succeeds with no rows, and so does an unpartitioned one over the whole dataset.
TEST_P(SqlAssetCli, ADayWithoutRowsIsAnEmptyTableDownstream) {
  const std::string file = pipeline(std::string(kEvents) + kDaily + kOverall);
  Outcome day = run({"materialize", file, "--partition", "2026-11-02"});
  ASSERT_EQ(day.code, 0) << day.out << day.err;
  EXPECT_NE(day.out.find("ok        events  2026-11-02  0 rows"), std::string::npos) << day.out;
  EXPECT_NE(day.out.find("ok        daily  2026-11-02  0 rows"), std::string::npos) << day.out;
  Outcome whole = run({"materialize", file, "--asset", "overall"});
  ASSERT_EQ(whole.code, 0) << whole.out << whole.err;
  interloper::Table overall = read("overall", nullptr, nullptr);
  ASSERT_EQ(overall.num_rows(), 1u);
  EXPECT_EQ(overall.at(0, "n"), interloper::Value(0));

  // A later day with rows writes into the table the empty day made, with its own types.
  Outcome next = run({"materialize", file, "--partition", "2026-11-03"});
  ASSERT_EQ(next.code, 0) << next.out << next.err;
  interloper::TimePartitionConfig daily("date");
  interloper::TimePartitionWindow days(interloper::testing::day(2026, 11, 2),
                                       interloper::testing::day(2026, 11, 3));
  interloper::Table totals = read("daily", &daily, &days);
  ASSERT_EQ(totals.num_rows(), 1u);
  EXPECT_EQ(totals.at(0, "date"), interloper::Value(interloper::testing::day(2026, 11, 3)));
  EXPECT_EQ(totals.at(0, "total"), interloper::Value(2.5));
}

// Empty days among many, four at a time: every day of both assets succeeds, whichever runs
// first, on every attempt.
TEST_P(SqlAssetCli, ConcurrentBackfillWithEmptyDaysSucceeds) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (GetParam() == Database::postgres) {
      destination_ = destination_.substr(0, destination_.rfind('=') + 1) + interloper::testing::fresh_schema("sql");
    } else {
      fs::remove(dir_.path() / "warehouse.db");
    }
    fs::remove(dir_.path() / "state.db");
    const std::string file = pipeline(std::string(kEvents) + kDaily);
    Outcome backfill =
        run({"backfill", file, "--window", "2026-11-01..2026-11-16", "--concurrency", "4"});
    ASSERT_EQ(backfill.code, 0) << "attempt " << attempt << "\n" << backfill.out << backfill.err;
    EXPECT_NE(backfill.out.find("32 tasks, 32 succeeded, 0 failed"), std::string::npos)
        << backfill.out;
    interloper::TimePartitionConfig daily("date");
    interloper::TimePartitionWindow days(interloper::testing::day(2026, 11, 1),
                                         interloper::testing::day(2026, 11, 16));
    EXPECT_EQ(read("daily", &daily, &days).num_rows(), 8u);  // the odd days
  }
  // Without a declared schema the first row adds its columns to a table empty days made, while
  // other days write: no writer waits for another in a cycle.
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (GetParam() == Database::postgres) {
      destination_ = destination_.substr(0, destination_.rfind('=') + 1) + interloper::testing::fresh_schema("sql");
    } else {
      fs::remove(dir_.path() / "warehouse.db");
    }
    fs::remove(dir_.path() / "state.db");
    const std::string file = pipeline(
        "      - name: events\n"
        "        partitioning: {kind: time, column: date}\n"
        "        command: [./emit.sh, \"{partition.key}\"]\n");
    Outcome backfill =
        run({"backfill", file, "--window", "2026-11-01..2026-11-24", "--concurrency", "4"});
    ASSERT_EQ(backfill.code, 0) << "attempt " << attempt << "\n" << backfill.out << backfill.err;
  }
}

// A runaway query ends at its timeout as a failed task naming it; the rest of the run goes on.
TEST_P(SqlAssetCli, ARunawayQueryEndsAtItsTimeout) {
  const std::string file =
      pipeline(std::string(kEvents) + kDaily +
               "      - name: runaway\n"
               "        partitioning: {kind: time, column: date}\n"
               "        timeout: 1.5\n"
               "        sql: |\n"
               "          WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c\n"
               "                                  WHERE n < 1000000000000)\n"
               "          SELECT :bounds_start AS date, COUNT(*) AS n FROM c\n");
  const auto start = std::chrono::steady_clock::now();
  Outcome backfill =
      run({"backfill", file, "--window", "2026-11-01..2026-11-03", "--concurrency", "2"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(backfill.code, 1) << backfill.out << backfill.err;
  EXPECT_LT(seconds, 30) << backfill.out;
  EXPECT_NE(backfill.out.find("9 tasks, 6 succeeded, 3 failed"), std::string::npos) << backfill.out;
  EXPECT_NE(backfill.out.find("asset 'runaway': "), std::string::npos) << backfill.out;
  EXPECT_NE(backfill.out.find("the query timed out after 1.5s"), std::string::npos) << backfill.out;
}

// A failed query is shown as written, line breaks kept, never as the statement sent with the
// dependencies' tables in front.
TEST_P(SqlAssetCli, AFailedQueryIsShownAsWritten) {
  const std::string file = pipeline(std::string(kEvents) +
                                    "      - name: typo\n"
                                    "        deps: [events]\n"
                                    "        partitioning: {kind: time, column: date}\n"
                                    "        sql: |\n"
                                    "          SELECT date,\n"
                                    "                 SUM(amout) AS total\n"
                                    "          FROM events\n"
                                    "          GROUP BY date\n");
  Outcome o = run({"materialize", file, "--partition", "2026-11-01"});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("FAILED    typo  2026-11-01  asset 'typo': "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("amout"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\n    SELECT date,\n           SUM(amout) AS total\n    FROM events\n"
                       "    GROUP BY date\n"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(o.out.find("shop__events"), std::string::npos) << o.out;
  // The error line joins the heading to the query it introduces.
  EXPECT_NE(o.err.find("; query: SELECT date,"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("query:;"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("shop__events"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("il_dep"), std::string::npos) << o.out;
}

// An input never built gets the runner's words, partitioned or not, with or without a store's
// check; an input built without the columns a query reads says to declare its schema.
TEST_P(SqlAssetCli, InputsWithoutATableNameTheUpstream) {
  const std::string file = pipeline(std::string(kEvents) + kOverall +
                                    "      - name: nothing\n"
                                    "        command: [/bin/true]\n"
                                    "      - name: over_nothing\n"
                                    "        deps: [nothing]\n"
                                    "        sql: SELECT COUNT(*) AS n FROM nothing\n");
  Outcome never = run({"materialize", file, "--asset", "overall"});
  EXPECT_EQ(never.code, 1) << never.out << never.err;
  EXPECT_NE(never.out.find("FAILED    overall  -  asset 'overall': upstream 'events': not "
                           "materialized"),
            std::string::npos)
      << never.out;
  EXPECT_EQ(never.out.find("shop__events"), std::string::npos) << never.out;

  Outcome empty = run({"materialize", file, "--asset", "nothing", "--asset", "over_nothing"});
  EXPECT_EQ(empty.code, 1) << empty.out << empty.err;
  EXPECT_NE(empty.out.find("ok        nothing  -  0 rows"), std::string::npos) << empty.out;
  EXPECT_NE(empty.out.find("upstream 'nothing' was materialized without any column"),
            std::string::npos)
      << empty.out;
  EXPECT_NE(empty.out.find("declare its columns with 'schema:'"), std::string::npos) << empty.out;

  // Without a declared schema, an upstream that never had a row has only its partition column:
  // a query reading another one is told where to declare it.
  const std::string undeclared = pipeline(
      "      - name: events\n"
      "        partitioning: {kind: time, column: date}\n"
      "        command: [./emit.sh, \"{partition.key}\"]\n" +
      std::string(kDaily));
  Outcome day = run({"materialize", undeclared, "--partition", "2026-11-04"});
  EXPECT_EQ(day.code, 1) << day.out << day.err;
  EXPECT_NE(day.out.find("ok        events  2026-11-04  0 rows"), std::string::npos) << day.out;
  EXPECT_NE(day.out.find("amount"), std::string::npos) << day.out;
  EXPECT_NE(day.out.find("upstream 'events' has had no rows yet"), std::string::npos) << day.out;
  EXPECT_NE(day.out.find("'schema:'"), std::string::npos) << day.out;
}

// Dollar-quoted text holding ';' is part of one statement, as PostgreSQL reads it.
TEST(SqlAssetPostgresCli, DollarQuotedTextIsOneStatement) {
  IL_REQUIRE_POSTGRES(url);
  interloper::testing::TempDir dir;
  const std::string destination = url + "?schema=" + interloper::testing::fresh_schema("sql");
  dir.write("pipeline.yaml",
            "destination: " + destination +
                "\n"
                "store: state.db\n"
                "sources:\n"
                "  - name: shop\n"
                "    assets:\n"
                "      - name: quoted\n"
                "        sql: |\n"
                "          SELECT $$a; b$$ AS plain, $q$it's; $$ :partition_key; $q$ AS tagged\n"
                "          -- a ; in a comment\n");
  Outcome o =
      run_interloper({"materialize", (dir.path() / "pipeline.yaml").string()}, dir.path().string());
  ASSERT_EQ(o.code, 0) << o.out << o.err;
  interloper::Table rows =
      interloper::open_destination(destination)->read({"shop", "quoted", nullptr}, nullptr);
  ASSERT_EQ(rows.num_rows(), 1u);
  EXPECT_EQ(rows.at(0, "plain"), interloper::Value("a; b"));
  EXPECT_EQ(rows.at(0, "tagged"), interloper::Value("it's; $$ :partition_key; "));
}

INSTANTIATE_TEST_SUITE_P(Databases, SqlAssetCli,
                         ::testing::Values(Database::sqlite, Database::postgres),
                         [](const auto& info) {
                           return info.param == Database::sqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
