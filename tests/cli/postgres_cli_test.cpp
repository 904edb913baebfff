// The `interloper` binary on a pipeline whose destination is PostgreSQL (scripts/with-postgres):
// command and sql assets, the password kept out of every output, and connection problems
// refused in one line before any asset runs.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "support/cli_process.hpp"
#include "support/postgres.hpp"

namespace fs = std::filesystem;

namespace {

using interloper::testing::Outcome;

std::string password_of(const std::string& url) {
  auto start = url.find("://") + 3;
  auto at = url.find('@', start);
  auto colon = url.find(':', start);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return "";
  return url.substr(colon + 1, at - colon - 1);
}

// A daily command asset logging each key it runs, and a sql aggregate of it in the database.
void write_pipeline(const fs::path& dir, const std::string& destination,
                    const std::string& store = "state.db") {
  std::ofstream(dir / "emit.sh")
      << "#!/bin/sh\n"
         "echo \"$IL_PARTITION_KEY\" >> calls.log\n"
         "echo \"{\\\"date\\\":\\\"$1\\\",\\\"amount\\\":2.5,\\\"at\\\":\\\"$1T23:00:00\\\"}\"\n"
         "echo \"{\\\"date\\\":\\\"$1\\\",\\\"amount\\\":4,\\\"at\\\":\\\"$1T01:00:00\\\"}\"\n";
  fs::permissions(dir / "emit.sh", fs::perms::owner_all, fs::perm_options::add);
  std::ofstream(dir / "pipeline.yaml")
      << "destination: " << destination << "\n"
      << "store: " << store << "\n"
      << "sources:\n"
         "  - name: shop\n"
         "    assets:\n"
         "      - name: events\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        command: [./emit.sh, \"{partition.key}\"]\n"
         "        schema: {at: timestamp}\n"
         "      - name: revenue\n"
         "        deps: [events]\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        sql: |\n"
         "          -- :partition_key in a comment is text\n"
         "          SELECT date, SUM(amount)::double precision AS total, COUNT(*) AS n,\n"
         "                 ':window_start' AS literal, :partition_key AS k, MAX(at) AS last_at\n"
         "          FROM events\n"
         "          WHERE at >= :bounds_start AND at < :bounds_end GROUP BY date\n";
}

TEST(PostgresCli, SqlAssetsRunInTheDatabaseAndThePasswordNeverShows) {
  IL_REQUIRE_POSTGRES(url);
  interloper::testing::TempDir dir;
  const std::string schema = interloper::testing::fresh_schema("cli");
  write_pipeline(dir.path(), "${IL_TEST_POSTGRES_URL}?schema=" + schema,
                 "${IL_TEST_POSTGRES_URL}?schema=" + schema + "_state");
  const std::string pipeline = (dir.path() / "pipeline.yaml").string();
  Outcome run = interloper::testing::run_interloper(
      {"backfill", pipeline, "--window", "2026-11-01..2026-11-03", "--json"}, dir.path().string());
  ASSERT_EQ(run.code, 0) << run.err;
  interloper::PostgresDestination warehouse(url + "?schema=" + schema);
  interloper::TimePartitionConfig daily("date");
  interloper::DatasetRef revenue{"shop", "revenue", &daily};
  interloper::TimePartitionWindow window(interloper::testing::day(2026, 11, 1),
                                         interloper::testing::day(2026, 11, 3));
  interloper::Table rows = warehouse.read(revenue, &window);
  ASSERT_EQ(rows.num_rows(), 3u);
  EXPECT_EQ(rows.at(1, "date"), interloper::Value(interloper::testing::day(2026, 11, 2)));
  EXPECT_EQ(rows.at(1, "total"), interloper::Value(6.5));
  EXPECT_EQ(rows.at(1, "n"), interloper::Value(2));
  EXPECT_EQ(rows.at(1, "literal"), interloper::Value(":window_start"));
  EXPECT_EQ(rows.at(1, "k"), interloper::Value("2026-11-02"));
  EXPECT_EQ(rows.at(1, "last_at"), interloper::Value(interloper::testing::at(2026, 11, 2, 23)));

  // The store in the same server knows what is done: nothing runs again.
  Outcome again = interloper::testing::run_interloper(
      {"backfill", pipeline, "--window", "2026-11-01..2026-11-03", "--missing"},
      dir.path().string());
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(interloper::testing::lines_of(interloper::testing::read_file(dir.path() / "calls.log"))
                .size(),
            3u);

  Outcome catalog =
      interloper::testing::run_interloper({"catalog", pipeline}, dir.path().string());
  ASSERT_EQ(catalog.code, 0) << catalog.err;
  EXPECT_NE(catalog.out.find(":***@"), std::string::npos) << catalog.out;
  Outcome status = interloper::testing::run_interloper(
      {"status", pipeline, "--window", "2026-11-01..2026-11-03", "--json"}, dir.path().string());
  const std::string password = password_of(url);
  for (const Outcome* o : {&run, &again, &catalog, &status}) {
    EXPECT_EQ(o->out.find(password), std::string::npos) << o->out;
    EXPECT_EQ(o->err.find(password), std::string::npos) << o->err;
  }
}

TEST(PostgresCli, ConnectionProblemsExitTwoBeforeAnyAssetRuns) {
  IL_REQUIRE_POSTGRES(url);
  const std::string password = password_of(url);
  std::string wrong_password = url;
  wrong_password.replace(wrong_password.find(":" + password + "@"), password.size() + 2,
                         ":not-" + password + "@");
  std::string unknown_database = url.substr(0, url.rfind('/')) + "/no_such_database";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {wrong_password, "password authentication failed"},
      {unknown_database, "no_such_database"},
      {"postgresql://u:hidden-pw@127.0.0.1:1/db?connect_timeout=2", "127.0.0.1"},
      {url + "?sslmode=sometimes", "sslmode"},
  };
  for (const auto& [destination, needle] : cases) {
    interloper::testing::TempDir dir;
    write_pipeline(dir.path(), destination);
    Outcome o = interloper::testing::run_interloper(
        {"materialize", (dir.path() / "pipeline.yaml").string(), "--partition", "2026-11-01"},
        dir.path().string());
    EXPECT_EQ(o.code, 2) << o.err;
    auto lines = interloper::testing::lines_of(o.err);
    ASSERT_EQ(lines.size(), 1u) << o.err;
    EXPECT_NE(lines[0].find(needle), std::string::npos) << lines[0];
    EXPECT_EQ(lines[0].find(password), std::string::npos) << lines[0];
    EXPECT_EQ(lines[0].find("hidden-pw"), std::string::npos) << lines[0];
    EXPECT_FALSE(fs::exists(dir.path() / "calls.log")) << "an asset ran for " << needle;
  }
}

}  // namespace

namespace {

// The server goes away in the middle of a backfill: the partitions running then fail naming
// the host, and `backfill --missing` after the restart completes the rest. A server of its own
// (a nested scripts/with-postgres), since it is stopped and started.
TEST(PostgresCli, ServerStoppedMidBackfillFailsThenMissingCompletes) {
  IL_REQUIRE_POSTGRES(url);
  (void)url;
  interloper::testing::TempDir dir;
  std::ofstream(dir.path() / "emit.sh")
      << "#!/bin/sh\n"
         "echo \"$IL_PARTITION_KEY\" >> calls.log\n"
         "sleep 0.2\n"
         "echo \"{\\\"date\\\":\\\"$1\\\",\\\"n\\\":1}\"\n";
  fs::permissions(dir.path() / "emit.sh", fs::perms::owner_all, fs::perm_options::add);
  std::ofstream(dir.path() / "pipeline.yaml")
      << "destination: ${IL_TEST_POSTGRES_URL}\n"
         "sources:\n"
         "  - name: shop\n"
         "    assets:\n"
         "      - name: events\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        command: [./emit.sh, \"{partition.key}\"]\n";
  std::ofstream(dir.path() / "scenario.sh")
      << "set -u\n"
         "bin=\"$1\"\n"
         "\"$bin\" backfill pipeline.yaml --window 2026-11-01..2026-11-20 --concurrency 1 "
         ">first.out 2>first.err &\n"
         "pid=$!\n"
         "for i in $(seq 1 300); do\n"
         "  [ \"$(wc -l < calls.log 2>/dev/null || echo 0)\" -ge 3 ] && break; sleep 0.05\n"
         "done\n"
         "\"$IL_TEST_POSTGRES_CTL\" stop\n"
         "wait $pid; echo \"first=$?\" > codes\n"
         "\"$IL_TEST_POSTGRES_CTL\" start\n"
         "\"$bin\" backfill pipeline.yaml --window 2026-11-01..2026-11-20 --missing "
         ">second.out 2>second.err; echo \"second=$?\" >> codes\n"
         "\"$bin\" status pipeline.yaml --window 2026-11-01..2026-11-20 --json > status.json\n";
  const std::string script = (fs::path(IL_TEST_SOURCE_DIR) / "scripts" / "with-postgres").string();
  interloper::pipeline::ProcessSpec spec;
  spec.argv = {"/usr/bin/env", "-u", "IL_TEST_POSTGRES_URL", "-u", "IL_TEST_POSTGRES_CTL",
               "bash", script, "bash", "scenario.sh", interloper::testing::interloper_binary()};
  spec.working_directory = dir.path().string();
  spec.timeout_seconds = 120;
  auto result = interloper::pipeline::run_process(spec);
  ASSERT_EQ(result.exit_code, 0) << result.out;
  const std::string codes = interloper::testing::read_file(dir.path() / "codes");
  EXPECT_EQ(codes, "first=1\nsecond=0\n") << interloper::testing::read_file(dir.path() / "first.err");
  const std::string first_err = interloper::testing::read_file(dir.path() / "first.err");
  EXPECT_NE(first_err.find("127.0.0.1"), std::string::npos) << first_err;
  const std::string status = interloper::testing::read_file(dir.path() / "status.json");
  EXPECT_NE(status.find("\"missing\":[]"), std::string::npos) << status;
  EXPECT_NE(status.find("\"failed\":[]"), std::string::npos) << status;
}

}  // namespace

TEST(PostgresCli, AssetsWhoseNamesShareTheirFirst63BytesKeepTheirOwnRows) {
  IL_REQUIRE_POSTGRES(url);
  interloper::testing::TempDir dir;
  const std::string schema = interloper::testing::fresh_schema("cli");
  // "shop_with_a_long_source_name__" and 35 letters: the first 63 bytes of both tables' names
  // are the same (the assets' own names stay short enough for their CTEs).
  const std::string source = "shop_with_a_long_source_name";
  const std::string stem(35, 'n');
  std::ofstream(dir.path() / "pipeline.yaml")
      << "destination: ${IL_TEST_POSTGRES_URL}?schema=" << schema << "\n"
      << "sources:\n"
         "  - name: " << source << "\n"
         "    assets:\n"
         "      - name: " << stem << "_first\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        command: [/bin/sh, -c, 'echo \"{{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\",\\\"n\\\":1}}\"']\n"
         "      - name: " << stem << "_second\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        command: [/bin/sh, -c, 'for n in 2 3; do echo \"{{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\",\\\"n\\\":$n}}\"; done']\n"
         "      - name: both\n"
         "        deps: [" << stem << "_first, " << stem << "_second]\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        sql: SELECT f.date, f.n AS first_n, (SELECT count(*) FROM " << stem
      << "_second) AS second_rows FROM " << stem << "_first AS f\n";
  const std::string pipeline = (dir.path() / "pipeline.yaml").string();
  Outcome run = interloper::testing::run_interloper(
      {"backfill", pipeline, "--window", "2026-11-01..2026-11-02"}, dir.path().string());
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  Outcome verify = interloper::testing::run_interloper(
      {"--json", "status", pipeline, "--window", "2026-11-01..2026-11-02", "--verify"},
      dir.path().string());
  ASSERT_EQ(verify.code, 0) << verify.err << verify.out;
  for (const auto& entry : nlohmann::json::parse(verify.out)) {
    EXPECT_EQ(entry["gone"], nlohmann::json::array()) << verify.out;
  }
  interloper::PostgresDestination warehouse(url + "?schema=" + schema);
  interloper::TimePartitionConfig daily("date");
  interloper::TimePartitionWindow window(interloper::testing::day(2026, 11, 1),
                                         interloper::testing::day(2026, 11, 2));
  EXPECT_EQ(warehouse.read({source, stem + "_first", &daily}, &window).num_rows(), 2u);
  EXPECT_EQ(warehouse.read({source, stem + "_second", &daily}, &window).num_rows(), 4u);
  interloper::Table both = warehouse.read({source, "both", &daily}, &window);
  ASSERT_EQ(both.num_rows(), 2u);
  EXPECT_EQ(both.at(0, "first_n"), interloper::Value(1));
  EXPECT_EQ(both.at(0, "second_rows"), interloper::Value(2));
}

TEST(PostgresCli, SqlAssetReadsADependencyWhoseNameIsLongerThan63BytesAndItsAllForm) {
  IL_REQUIRE_POSTGRES(url);
  interloper::testing::TempDir dir;
  const std::string schema = interloper::testing::fresh_schema("cli");
  // 70 bytes: NAME and NAME__all share their first 63 bytes, where PostgreSQL cuts a name.
  const std::string name = "orders_" + std::string(63, 'o');
  ASSERT_EQ(name.size(), 70u);
  std::ofstream(dir.path() / "pipeline.yaml")
      << "destination: ${IL_TEST_POSTGRES_URL}?schema=" << schema << "\n"
      << "sources:\n"
         "  - name: shop\n"
         "    assets:\n"
         "      - name: " << name << "\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        command: [/bin/sh, -c, 'for n in 1 2; do echo \"{{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\",\\\"n\\\":$n}}\"; done']\n"
         "      - name: totals\n"
         "        deps: [" << name << "]\n"
         "        partitioning: {kind: time, column: date, granularity: day}\n"
         "        sql: SELECT date, '" << name << "' AS label, count(*) AS day_rows, (SELECT "
         "count(*) FROM \"" << name << "__all\") AS all_rows FROM " << name << " GROUP BY date\n";
  const std::string pipeline = (dir.path() / "pipeline.yaml").string();
  for (const std::string& asset : {name, std::string("totals")}) {
    Outcome run = interloper::testing::run_interloper(
        {"backfill", pipeline, "--window", "2026-11-01..2026-11-02", "--asset", asset},
        dir.path().string());
    ASSERT_EQ(run.code, 0) << run.err << run.out;
  }
  interloper::PostgresDestination warehouse(url + "?schema=" + schema);
  interloper::TimePartitionConfig daily("date");
  interloper::TimePartitionWindow window(interloper::testing::day(2026, 11, 1),
                                         interloper::testing::day(2026, 11, 2));
  interloper::Table totals = warehouse.read({"shop", "totals", &daily}, &window);
  ASSERT_EQ(totals.num_rows(), 2u);
  for (std::size_t row = 0; row < 2; ++row) {
    EXPECT_EQ(totals.at(row, "day_rows"), interloper::Value(2));  // its own day of NAME
    EXPECT_EQ(totals.at(row, "all_rows"), interloper::Value(4));  // every day of NAME__all
    EXPECT_EQ(totals.at(row, "label"), interloper::Value(name));  // a literal stays as written
  }
}
