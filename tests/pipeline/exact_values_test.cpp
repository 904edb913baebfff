// A YAML pipeline end to end keeps values exactly: a command's microsecond timestamps, decimals
// declared decimal(p,s) and nested JSON reach every destination as they were printed, a `sql:`
// asset reads the JSON with the database's own functions and sums bigints beyond 2^53 exactly,
// and a timestamp of seven fractional digits fails the run naming its column and row.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "interloper/destination.hpp"
#include "interloper/pipeline.hpp"
#include "interloper/run.hpp"
#include "support/postgres.hpp"
#include "support/temp_dir.hpp"

namespace il = interloper;
using namespace std::chrono;

namespace {

class TempDir : public interloper::testing::TempDir {
 public:
  TempDir() : interloper::testing::TempDir("il_exact") {}
};

// 9007199254740993 is 2^53 + 1: a double cannot hold it, nor the sum of two of them.
const char* kRows =
    "{\"date\":\"2026-11-01\",\"at\":\"2026-11-01T10:00:00.123456Z\","
    "\"amount\":12345678901234567890.12,\"big\":9007199254740993,"
    "\"meta\":{\"tags\":[\"a\",\"b\"],\"n\":1}}\n"
    "{\"date\":\"2026-11-01\",\"at\":\"2026-11-01T23:59:59.5Z\",\"amount\":0.1,"
    "\"big\":9007199254740993,\"meta\":{\"tags\":[],\"n\":2}}\n";

const char* kSevenDigits =
    "{\"date\":\"2026-11-02\",\"at\":\"2026-11-02T10:00:00Z\",\"amount\":1,\"big\":1}\n"
    "{\"date\":\"2026-11-02\",\"at\":\"2026-11-02T10:00:00.1234567Z\",\"amount\":1,\"big\":1}\n";

std::string pipeline_text(const std::string& destination, const std::string& sql) {
  std::string text = "destination: " + destination +
                     "\nsources:\n  - name: shop\n    assets:\n"
                     "      - name: payments\n"
                     "        partitioning: {kind: time, column: date}\n"
                     "        schema:\n"
                     "          at: timestamp\n"
                     "          amount: decimal(38,2)\n"
                     "        command: [/bin/sh, -c, 'cat \"rows/$IL_PARTITION_KEY.jsonl\"']\n";
  if (!sql.empty()) {
    text +=
        "      - name: totals\n"
        "        deps: [payments]\n"
        "        partitioning: {kind: time, column: date}\n"
        "        sql: |\n" +
        sql;
  }
  return text;
}

il::RunResult run(const il::Pipeline& pipeline, const std::string& key) {
  return il::SerialRunner().run(pipeline.dag(), il::TimePartitionWindow::parse(key));
}

std::string first_error(const il::RunResult& result) {
  for (const auto& a : result.assets) {
    if (!a.error.empty()) return a.error;
  }
  return "";
}

il::Table stored(const il::Pipeline& pipeline, const std::string& asset_name) {
  const il::Asset& asset = pipeline.dag().asset(asset_name);
  return pipeline.dag().destination_of(asset)->read(asset.dataset(), nullptr);
}

// Runs the pipeline over 2026-11-01 and checks what `payments` stored; then 2026-11-02, whose
// seven-digit timestamp must fail.
il::Pipeline run_and_check_payments(const TempDir& dir, const std::string& destination,
                                    const std::string& sql) {
  dir.write("rows/2026-11-01.jsonl", kRows);
  dir.write("rows/2026-11-02.jsonl", kSevenDigits);
  dir.write("pipeline.yaml", pipeline_text(destination, sql));
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "pipeline.yaml").string());
  il::RunResult ok = run(pipeline, "2026-11-01");
  EXPECT_TRUE(ok.ok()) << first_error(ok);
  const il::Table rows = stored(pipeline, "payments");
  EXPECT_EQ(rows.num_rows(), 2u);
  if (rows.num_rows() != 2u) return pipeline;
  EXPECT_EQ(rows.at(0, "at").to_string(), "2026-11-01T10:00:00.123456");
  EXPECT_EQ(rows.at(1, "at").to_string(), "2026-11-01T23:59:59.500000");
  EXPECT_EQ(rows.at(0, "amount").to_string(), "12345678901234567890.12");
  EXPECT_EQ(rows.at(1, "amount").to_string(), "0.10");
  EXPECT_EQ(rows.at(0, "big"), il::Value(9007199254740993LL));
  EXPECT_EQ(rows.at(0, "meta"), il::Value(il::Json{R"({"n":1,"tags":["a","b"]})"}));
  const il::Schema schema = rows.schema();
  EXPECT_EQ(il::type_text(schema.field(*schema.find("amount"))), "decimal(38,2)");
  EXPECT_EQ(schema.field(*schema.find("meta")).type, il::DataType::json);

  il::RunResult bad = run(pipeline, "2026-11-02");
  EXPECT_FALSE(bad.ok());
  const std::string error = first_error(bad);
  for (const char* part : {"row 2", "'at'", "2026-11-02T10:00:00.1234567Z", "six"}) {
    EXPECT_NE(error.find(part), std::string::npos) << part << " not in: " << error;
  }
  return pipeline;
}

TEST(ExactValues, SqliteKeepsThemAndSqlReadsTheJson) {
  TempDir dir;
  il::Pipeline pipeline = run_and_check_payments(
      dir, "sqlite:data.db",
      "          SELECT date, SUM(big) AS total, MAX(at) AS last_at, COUNT(*) AS n,\n"
      "                 MAX(json_extract(meta, '$.tags[0]')) AS first_tag,\n"
      "                 SUM(json_extract(meta, '$.n')) AS ns, MAX(amount) AS top\n"
      "          FROM payments GROUP BY date\n");
  const il::Table totals = stored(pipeline, "totals");
  ASSERT_EQ(totals.num_rows(), 1u);
  EXPECT_EQ(totals.at(0, "total"), il::Value(18014398509481986LL));
  EXPECT_EQ(totals.at(0, "last_at").to_string(), "2026-11-01T23:59:59.500000");
  EXPECT_EQ(totals.at(0, "first_tag"), il::Value("a"));
  EXPECT_EQ(totals.at(0, "ns"), il::Value(3));
}

// SQLite's SUM of decimal text is a double: declared decimal(38,2), a sum whose double shows
// its error fails saying it was a double; the integer recipe of docs/pipelines.md is exact.
TEST(ExactValues, SqliteSumsMoneyExactlyOnlyInIntegers) {
  TempDir dir;
  dir.write("rows/2026-11-01.jsonl",
            "{\"date\":\"2026-11-01\",\"amount\":0.10}\n"
            "{\"date\":\"2026-11-01\",\"amount\":0.20}\n"
            "{\"date\":\"2026-11-01\",\"amount\":-92233720368547.05}\n");
  const std::string head =
      "destination: sqlite:data.db\nsources:\n  - name: shop\n    assets:\n"
      "      - name: payments\n"
      "        partitioning: {kind: time, column: date}\n"
      "        schema: {amount: \"decimal(38,2)\"}\n"
      "        command: [/bin/sh, -c, 'cat \"rows/$IL_PARTITION_KEY.jsonl\"']\n"
      "      - name: totals\n"
      "        deps: [payments]\n"
      "        partitioning: {kind: time, column: date}\n"
      "        schema: {revenue: \"decimal(38,2)\"}\n"
      "        sql: |\n";
  dir.write("double.yaml", head +
                               "          SELECT date, SUM(amount) AS revenue FROM payments\n"
                               "          WHERE amount > 0 GROUP BY date\n");
  il::Pipeline doubled = il::Pipeline::load((dir.path() / "double.yaml").string());
  const std::string error = first_error(run(doubled, "2026-11-01"));
  for (const char* part : {"'revenue'", "double 0.30000000000000004", "not exact"}) {
    EXPECT_NE(error.find(part), std::string::npos) << part << " not in: " << error;
  }
  dir.write(
      "cents.yaml",
      head +
          "          SELECT date, CASE WHEN c < 0 THEN '-' ELSE '' END || (abs(c) / 100) || '.'\n"
          "                       || printf('%02d', abs(c) % 100) AS revenue\n"
          "          FROM (SELECT date, SUM(CAST(replace(amount, '.', '') AS INTEGER)) AS c\n"
          "                FROM payments GROUP BY date)\n");
  il::Pipeline cents = il::Pipeline::load((dir.path() / "cents.yaml").string());
  il::RunResult ok = run(cents, "2026-11-01");
  ASSERT_TRUE(ok.ok()) << first_error(ok);
  const il::Table totals = stored(cents, "totals");
  ASSERT_EQ(totals.num_rows(), 1u);
  EXPECT_EQ(totals.at(0, "revenue").to_string(), "-92233720368546.75");
}

TEST(ExactValues, PostgresSumsBigintsAsNumericAndReadsJsonb) {
  IL_REQUIRE_POSTGRES(url);
  ASSERT_FALSE(url.empty());
  static std::atomic<int> counter{0};
  const std::string schema = "il_exact_" + std::to_string(std::random_device()() % 1000000000u) +
                             "_" + std::to_string(++counter);
  TempDir dir;
  il::Pipeline pipeline = run_and_check_payments(
      dir, "${IL_TEST_POSTGRES_URL}?schema=" + schema,
      "          SELECT date, SUM(big) AS total, MAX(at) AS last_at, COUNT(*) AS n,\n"
      "                 MAX(meta->'tags'->>0) AS first_tag,\n"
      "                 SUM((meta->>'n')::int) AS ns, MAX(amount) AS top,\n"
      "                 jsonb_agg(meta->'tags' ORDER BY at) AS all_tags\n"
      "          FROM payments GROUP BY date\n");
  const il::Table totals = stored(pipeline, "totals");
  ASSERT_EQ(totals.num_rows(), 1u);
  // SUM(bigint) is numeric: stored as numeric and read back with every digit.
  EXPECT_EQ(totals.schema().field(*totals.schema().find("total")).type, il::DataType::decimal);
  EXPECT_EQ(totals.at(0, "total").to_string(), "18014398509481986");
  EXPECT_EQ(totals.at(0, "top").to_string(), "12345678901234567890.12");
  EXPECT_EQ(totals.at(0, "last_at").to_string(), "2026-11-01T23:59:59.500000");
  EXPECT_EQ(totals.at(0, "first_tag"), il::Value("a"));
  EXPECT_EQ(totals.at(0, "ns"), il::Value(3));
  EXPECT_EQ(totals.at(0, "all_tags"), il::Value(il::Json{R"([["a","b"],[]])"}));
}

TEST(ExactValues, JsonLinesFilesKeepThem) {
  TempDir dir;
  run_and_check_payments(dir, "file:out", "");
  std::string text;  // every stored object: decimals and JSON are written unquoted
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path() / "out")) {
    if (entry.path().extension() != ".jsonl") continue;
    std::ifstream in(entry.path());
    text += std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_NE(text.find("\"amount\":12345678901234567890.12,"), std::string::npos) << text;
  EXPECT_NE(text.find("\"meta\":{\"n\":1,\"tags\":[\"a\",\"b\"]}"), std::string::npos) << text;
}

TEST(ExactValues, CsvFilesKeepThem) {
  TempDir dir;
  run_and_check_payments(dir, "file:out?format=csv", "");
}

}  // namespace
