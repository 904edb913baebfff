#include "interloper/pipeline/assets.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "interloper/destination.hpp"
#include "interloper/pipeline.hpp"
#include "interloper/run.hpp"
#include "support/temp_dir.hpp"

namespace il = interloper;
namespace ilp = interloper::pipeline;
namespace fs = std::filesystem;
using namespace std::chrono;

namespace {

class TempDir : public interloper::testing::TempDir {
 public:
  TempDir() : interloper::testing::TempDir("il_pipeline") {}
};

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Placeholders, ExpandFromTheScope) {
  ilp::Scope scope;
  scope.asset = "events";
  scope.has_window = true;
  scope.window = "2026-11-01..2026-11-03";
  scope.start_key = "2026-11-01";
  scope.end_key = "2026-11-03";
  scope.bounds_start = il::TimePoint(2026y / 11 / 1);
  scope.bounds_end = il::TimePoint(2026y / 11 / 4);
  EXPECT_EQ(ilp::expand_placeholders("{asset}:{window.start}..{window.end}", &scope),
            "events:2026-11-01..2026-11-03");
  EXPECT_EQ(ilp::expand_placeholders("--from={bounds.start}", &scope),
            "--from=2026-11-01T00:00:00");
  EXPECT_EQ(ilp::expand_placeholders("{{json}}", &scope), "{json}");
  // Several partitions: there is no single key.
  EXPECT_THROW(ilp::expand_placeholders("{partition.key}", &scope), il::RunError);
  scope.partition_key = "2026-11-01";
  EXPECT_EQ(ilp::expand_placeholders("{partition.key}", &scope), "2026-11-01");
}

TEST(Placeholders, UnknownOnesAreRejectedWithoutAScope) {
  EXPECT_NO_THROW(ilp::expand_placeholders("{partition.key}", nullptr));
  EXPECT_THROW(ilp::expand_placeholders("{partition.day}", nullptr), il::PipelineError);
  try {
    ilp::expand_placeholders("{nope}", nullptr);
    ADD_FAILURE() << "no error";
  } catch (const il::PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("{{nope}}"), std::string::npos) << e.what();
  }
}

TEST(Placeholders, OtherBracesAreLiteral) {
  ilp::Scope scope;
  scope.asset = "events";
  // awk programs, JSON and the shell's own ${VAR} pass through as written.
  for (const std::string arg :
       {"{print $1}", "{if (x) n++} END {print n}", "{\"ts\": \"x\", \"n\": 1}", "${HOME}/{asset",
        "{", "{unclosed", "{ asset }", "${asset}"}) {
    EXPECT_EQ(ilp::expand_placeholders(arg, &scope), arg);
    EXPECT_NO_THROW(ilp::expand_placeholders(arg, nullptr)) << arg;
  }
  EXPECT_EQ(ilp::expand_placeholders("{\"asset\": \"{asset}\"}", &scope),
            "{\"asset\": \"events\"}");
  EXPECT_EQ(ilp::expand_placeholders("{{partition.key}} is {asset}", &scope),
            "{partition.key} is events");
  EXPECT_EQ(ilp::expand_placeholders("{{\"k\":1}}", &scope), "{\"k\":1}");
}

TEST(SqlDependencies, PrefixesOneCtePerDependency) {
  EXPECT_EQ(ilp::sql_with_dependencies("SELECT 1", {}), "SELECT 1");
  EXPECT_EQ(ilp::sql_with_dependencies("SELECT * FROM events",
                                       {{"events", "SELECT * FROM \"shop__events\""}}),
            "WITH \"events\" AS (SELECT * FROM \"shop__events\") SELECT * FROM events");
  EXPECT_EQ(ilp::sql_with_dependencies("SELECT 1", {{"a\"b", "SELECT * FROM \"s__a\"\"b\""},
                                                    {"c", "SELECT * FROM \"s__c\""}}),
            "WITH \"a\"\"b\" AS (SELECT * FROM \"s__a\"\"b\"), \"c\" AS (SELECT * FROM \"s__c\") "
            "SELECT 1");
}

TEST(SqlDependencies, MergesIntoTheQuerysOwnWith) {
  EXPECT_EQ(ilp::sql_with_dependencies("  -- totals\n with t AS (SELECT 1) SELECT * FROM t",
                                       {{"events", "SELECT * FROM \"shop__events\""}}),
            "WITH \"events\" AS (SELECT * FROM \"shop__events\"), t AS (SELECT 1) SELECT * FROM t");
  EXPECT_EQ(ilp::sql_with_dependencies("WITH RECURSIVE n(x) AS (SELECT 1) SELECT x FROM n",
                                       {{"e", "SELECT * FROM \"s__e\""}}),
            "WITH RECURSIVE \"e\" AS (SELECT * FROM \"s__e\"), n(x) AS (SELECT 1) SELECT x FROM n");
  // A column named "without" is not a WITH clause.
  EXPECT_EQ(ilp::sql_with_dependencies("WITHOUT", {{"e", "SELECT * FROM \"s__e\""}}),
            "WITH \"e\" AS (SELECT * FROM \"s__e\") WITHOUT");
}

TEST(InstantText, DatesAtMidnightTimestampsOtherwise) {
  EXPECT_EQ(ilp::instant_text(il::TimePoint(2026y / 11 / 1)), "2026-11-01");
  EXPECT_EQ(ilp::instant_text(il::TimePoint(sys_days(2026y / 11 / 1) + hours(13))),
            "2026-11-01T13:00:00");
}

TEST(CommandAsset, SeesItsScopeInArgumentsAndEnvironment) {
  TempDir dir;
  dir.write("emit.sh",
            "#!/bin/sh\n"
            "echo \"args $*\" >&2\n"
            "printf '{\"date\":\"%s\",\"key\":\"%s\",\"bounds\":\"%s..%s\",\"asset\":\"%s\"}\\n' "
            "\"$1\" \"$IL_PARTITION_KEY\" \"$IL_BOUNDS_START\" \"$IL_BOUNDS_END\" \"$IL_ASSET\"\n",
            true);
  dir.write("pipeline.yaml",
            "destination: memory://\n"
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: events\n"
            "        partitioning: {kind: time, column: date}\n"
            "        command: [./emit.sh, \"{partition.key}\"]\n");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "pipeline.yaml").string());
  il::Table rows = pipeline.dag().asset("events").run(il::TimePartition(2026y / 11 / 3));
  ASSERT_EQ(rows.num_rows(), 1u);
  EXPECT_EQ(rows.at(0, "key"), il::Value("2026-11-03"));  // not the time column: text
  EXPECT_EQ(rows.at(0, "bounds").as_string(), "2026-11-03T00:00:00..2026-11-04T00:00:00");
  EXPECT_EQ(rows.at(0, "asset").as_string(), "events");
}

TEST(CommandAsset, ListWindowsGetTheirValuesOnePerLine) {
  TempDir dir;
  dir.write(
      "pipeline.yaml",
      "destination: memory://\n"
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: targets\n"
      "        partitioning: {kind: list, column: region, values: [eu, 'a,b', us], "
      "allow_window: true}\n"
      "        format: csv\n"
      "        command: [/bin/sh, -c, 'echo region; printf \"%s\\n\" \"$IL_PARTITION_VALUES\" "
      "| sed \"s/.*/\\\"&\\\"/\"']\n");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "pipeline.yaml").string());
  const il::Asset& asset = pipeline.dag().asset("targets");
  auto window = asset.partitioning()->parse_window("eu..us");
  il::Table rows = asset.run(*window);
  ASSERT_EQ(rows.num_rows(), 3u);
  EXPECT_EQ(rows.at(1, "region").as_string(), "a,b");
}

// A window whose values exceed what one environment string may hold still starts the command:
// the values come in IL_PARTITION_VALUES_FILE, and the file is gone afterwards.
TEST(CommandAsset, LargeListWindowsComeThroughAFile) {
  TempDir dir;
  std::string values;
  constexpr int kValues = 20000;  // ~250 KB joined, over Linux's 128 KiB per string
  for (int i = 0; i < kValues; ++i) {
    values += (i ? ", " : "") + fmt::format("region-with-a-long-name-{:06d}", i);
  }
  dir.write(
      "pipeline.yaml",
      "destination: memory://\n"
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: targets\n"
      "        partitioning: {kind: list, column: region, values: [" +
          values +
          "], allow_window: true}\n"
          "        format: csv\n"
          "        command: [/bin/sh, -c, 'echo region,file; test -z \"$IL_PARTITION_VALUES\" "
          "|| exit 9; sed \"s|$|,$IL_PARTITION_VALUES_FILE|\" \"$IL_PARTITION_VALUES_FILE\"']\n");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "pipeline.yaml").string());
  const il::Asset& asset = pipeline.dag().asset("targets");
  auto window = asset.partitioning()->parse_window(
      "region-with-a-long-name-000000..region-with-a-long-name-019999");
  il::Table rows = asset.run(*window);
  ASSERT_EQ(rows.num_rows(), static_cast<std::size_t>(kValues));
  EXPECT_EQ(rows.at(kValues - 1, "region").as_string(), "region-with-a-long-name-019999");
  EXPECT_FALSE(fs::exists(rows.at(0, "file").as_string()));
}

TEST(CommandAsset, FailureCarriesTheStderrTail) {
  TempDir dir;
  dir.write("pipeline.yaml",
            "destination: memory://\n"
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: broken\n"
            "        command: [/bin/sh, -c, 'echo warming up >&2; echo disk full >&2; exit 4']\n");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "pipeline.yaml").string());
  try {
    pipeline.dag().asset("broken").run();
    FAIL() << "expected the command to fail";
  } catch (const std::exception& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("exited with status 4"), std::string::npos) << message;
    EXPECT_NE(message.find("warming up | disk full"), std::string::npos) << message;
  }
}

// A pipeline of one command asset over days, writing into SQLite under `dir`. The command is
// written inside a YAML single-quoted string: '' stands for one quote.
il::Pipeline command_pipeline(const TempDir& dir, const std::string& command,
                              const std::string& extra = "") {
  dir.write("pipeline.yaml",
            "destination: sqlite:out.db\n"
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: events\n"
            "        partitioning: {kind: time, column: date}\n"
            "        command: [/bin/sh, -c, '" +
                command + "']\n" + extra);
  return il::Pipeline::load((dir.path() / "pipeline.yaml").string());
}

// 50,000 rows of 2026-11-03: several batches of the stream parser.
const std::string kManyRows =
    "awk \"BEGIN { for (i = 0; i < 50000; i++) printf "
    "\\\"{\\\\\\\"date\\\\\\\":\\\\\\\"2026-11-03\\\\\\\","
    "\\\\\\\"n\\\\\\\":%d}\\\\n\\\", i }\"";

TEST(CommandAsset, StdoutIsStreamedIntoTheDestinationInBatches) {
  TempDir dir;
  il::Pipeline pipeline = command_pipeline(dir, kManyRows);
  const il::Asset& asset = pipeline.dag().asset("events");
  il::TimePartition day(2026y / 11 / 3);
  EXPECT_EQ(asset.materialize(day), 50000);
  il::SqliteDestination db((dir.path() / "out.db").string());
  EXPECT_EQ(db.row_count(asset.dataset(), &day), 50000);
  il::Table rows = db.read(asset.dataset(), day.as_window().get());
  EXPECT_EQ(rows.at(49999, "n"), il::Value(49999));
}

TEST(CommandAsset, AFailureAfterManyRowsReplacesNothing) {
  TempDir dir;
  il::TimePartition day(2026y / 11 / 3);
  {
    il::Pipeline first = command_pipeline(dir, "echo ''{\"date\":\"2026-11-03\",\"n\":-1}''");
    ASSERT_EQ(first.dag().asset("events").materialize(day), 1);
  }
  il::Pipeline failing = command_pipeline(dir, kManyRows + "; exit 3");
  EXPECT_THROW(failing.dag().asset("events").materialize(day), il::RunError);
  il::Pipeline invalid = command_pipeline(dir, kManyRows + "; echo oops");
  try {
    invalid.dag().asset("events").materialize(day);
    FAIL() << "expected invalid output";
  } catch (const il::RunError& e) {
    EXPECT_NE(std::string(e.what()).find("line 50001"), std::string::npos) << e.what();
  }
  il::SqliteDestination db((dir.path() / "out.db").string());
  il::Table rows = db.read(failing.dag().asset("events").dataset(), day.as_window().get());
  ASSERT_EQ(rows.num_rows(), 1u);
  EXPECT_EQ(rows.at(0, "n"), il::Value(-1));
}

TEST(CommandAsset, EndlessOutputStopsAtMaxOutput) {
  TempDir dir;
  il::Pipeline pipeline = command_pipeline(dir, "yes ''{\"date\":\"2026-11-03\",\"x\":1}''",
                                           "        max_output: 1M\n");
  il::TimePartition day(2026y / 11 / 3);
  try {
    pipeline.dag().asset("events").materialize(day);
    FAIL() << "expected max_output to stop the command";
  } catch (const il::RunError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("asset 'events'"), std::string::npos) << message;
    EXPECT_NE(message.find("max_output (1048576 bytes)"), std::string::npos) << message;
  }
  il::SqliteDestination db((dir.path() / "out.db").string());
  EXPECT_EQ(db.row_count(pipeline.dag().asset("events").dataset(), &day), 0);
}

TEST(CommandAsset, ArgumentsTooLargeNameTheAssetAndTheSizes) {
  TempDir dir;
  dir.write("pipeline.yaml",
            "destination: memory://\n"
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: wide\n"
            "        command: [/bin/echo, " +
                std::string(200000, 'a') + "]\n");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "pipeline.yaml").string());
  try {
    pipeline.dag().asset("wide").run();
    FAIL() << "expected the command to fail";
  } catch (const il::RunError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("asset 'wide': cannot run '/bin/echo': its arguments and environment "
                            "are too large",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("the largest is argument 1 with 200001 bytes"), std::string::npos)
        << message;
  }
}

TEST(CommandAsset, SucceedsWhenItsChildKeepsStdoutOpen) {
  TempDir dir;
  dir.write("pipeline.yaml",
            "destination: memory://\n"
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: daemonish\n"
            "        timeout: 60\n"
            "        command: [/bin/sh, -c, 'sleep 1000 & echo ''{\"x\":1}''']\n");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "pipeline.yaml").string());
  il::Table rows = pipeline.dag().asset("daemonish").run();
  ASSERT_EQ(rows.num_rows(), 1u);
  EXPECT_EQ(rows.at(0, "x").to_string(), "1");
}

TEST(CommandAsset, GetsEachDependencysRowsAsAJsonLinesFile) {
  TempDir dir;
  dir.write(
      "pipeline.yaml",
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: daily-events\n"
      "        partitioning: {kind: time, column: date}\n"
      "        command: [/bin/sh, -c, 'echo "
      "\"{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\",\\\"n\\\":1}\";"
      " echo "
      "\"{\\\"date\\\":\\\"$IL_PARTITION_KEY\\\",\\\"n\\\":2.5,\\\"s\\\":\\\"a\\\\\\\"b\\\"}\"']\n"
      "      - name: copy\n"
      "        deps: [daily-events]\n"
      "        partitioning: {kind: time, column: date}\n"
      "        command: [/bin/sh, -c, 'echo \"$IL_INPUT_DAILY_EVENTS\" > seen.txt; "
      "cat \"$IL_INPUT_DAILY_EVENTS\"']\n"
      "      - name: placeholder\n"
      "        deps: [copy]\n"
      "        partitioning: {kind: time, column: date}\n"
      "        command: [/bin/cat, '{input.copy}']\n");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "pipeline.yaml").string());
  const il::DAG& dag = pipeline.dag();
  il::SerialRunner runner;
  for (int d : {2, 3}) {
    il::RunResult result = runner.run(dag, il::TimePartition(2026y / 11 / d));
    ASSERT_TRUE(result.ok()) << result.error_summary();
  }
  const il::TimePartitionWindow day3(2026y / 11 / 3, 2026y / 11 / 3);
  auto rows_of = [&](const std::string& name) {
    const il::Asset& asset = dag.asset(name);
    return il::to_json_lines(dag.destination_of(asset)->read(asset.dataset(), &day3));
  };
  const std::string events = rows_of("daily-events");
  EXPECT_EQ(std::count(events.begin(), events.end(), '\n'), 2);  // the day's rows only
  EXPECT_EQ(rows_of("copy"), events);
  EXPECT_EQ(rows_of("placeholder"), events);
  // The file is gone once the command is done.
  const std::string seen = read_text(dir.path() / "seen.txt");
  ASSERT_FALSE(seen.empty());
  EXPECT_FALSE(fs::exists(seen.substr(0, seen.size() - 1)));
}

TEST(CommandAsset, InputPlaceholdersMustNameADependency) {
  TempDir dir;
  dir.write("pipeline.yaml",
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: a\n"
            "        command: [/bin/echo]\n"
            "      - name: b\n"
            "        deps: [a]\n"
            "        command: [/bin/cat, '{input.nope}']\n");
  try {
    il::Pipeline::load((dir.path() / "pipeline.yaml").string());
    FAIL() << "expected a load error";
  } catch (const il::PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("{input.nope}"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("its dependencies: a"), std::string::npos) << e.what();
  }
}

TEST(CommandAsset, DependenciesGivingTheSameVariableAreRejected) {
  TempDir dir;
  dir.write("pipeline.yaml",
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: a-b\n"
            "        command: [/bin/echo]\n"
            "      - name: a_b\n"
            "        command: [/bin/echo]\n"
            "      - name: c\n"
            "        deps: [a-b, a_b]\n"
            "        command: [/bin/echo]\n");
  try {
    il::Pipeline::load((dir.path() / "pipeline.yaml").string());
    FAIL() << "expected a load error";
  } catch (const il::PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("'a-b' and 'a_b' of asset 'c' would both be given in "
                                         "IL_INPUT_A_B"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(ilp::input_variable("daily-events.v2"), "IL_INPUT_DAILY_EVENTS_V2");
}

TEST(PipelineLoad, ResolvesPathsAgainstThePipelineDirectory) {
  TempDir dir;
  fs::create_directories(dir.path() / "sub");
  dir.write("sub/pipeline.yaml",
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: events\n"
            "        command: [bin/emit]\n");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "sub/pipeline.yaml").string());
  fs::path sub = fs::canonical(dir.path() / "sub");
  EXPECT_EQ(pipeline.store_path(), (sub / ".interloper/state.db").string());
  EXPECT_EQ(pipeline.destination_url(), "sqlite://" + (sub / ".interloper/data.db").string());
  EXPECT_EQ(pipeline.definition("events")->command.front(), "bin/emit");
  // Loading creates nothing.
  EXPECT_FALSE(fs::exists(sub / ".interloper"));
  ASSERT_NE(pipeline.source_destination("shop"), nullptr);
  EXPECT_EQ(pipeline.source_destination("nope"), nullptr);
}

}  // namespace

namespace {

TEST(SqlParameters, OnlyThoseOutsideLiteralsAndComments) {
  EXPECT_EQ(ilp::named_parameters("SELECT :a, ':b', \":c\", [:d], `:e` -- :f\n, /* :g */ :h_1, "
                                  "'it''s :x'"),
            (std::vector<std::string>{"a", "h_1"}));
}

}  // namespace

namespace {

// PostgreSQL's dollar-quoted and escape strings are text: a ';' or ':name' in them is neither
// the end of the statement nor a parameter.
TEST(SqlStatements, DollarQuotedTextIsOneStatement) {
  EXPECT_EQ(ilp::second_statement("SELECT $$a;b$$ AS t", true), std::string::npos);
  EXPECT_EQ(ilp::second_statement("SELECT $fn$ x; $$ y; $fn$ AS t;\n-- done\n", true),
            std::string::npos);
  EXPECT_EQ(ilp::second_statement("SELECT E'it\\'s; fine' AS t", true), std::string::npos);
  EXPECT_EQ(ilp::second_statement("SELECT $$a;b$$; DROP TABLE x", true),
            std::string("SELECT $$a;b$$; DROP TABLE x").find("DROP"));
  // Not dollar quotes: a positional parameter, a '$' inside a name.
  EXPECT_EQ(ilp::second_statement("SELECT $1; SELECT 2", true), 11u);
  EXPECT_EQ(ilp::second_statement("SELECT a$b$; SELECT $b$", true), 13u);
  // SQLite has no such strings: there, the ';' ends the statement.
  EXPECT_EQ(ilp::second_statement("SELECT $$ ; $$ AS x", false), 12u);
  EXPECT_EQ(ilp::second_statement("SELECT 'a;b' AS x; -- done", false), std::string::npos);
  EXPECT_EQ(ilp::named_parameters("SELECT :a, $$ :b $$, $t$ :c $t$, E'\\' :d', :e"),
            (std::vector<std::string>{"a", "e"}));
}

}  // namespace
