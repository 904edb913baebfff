// What `command:` assets store: text stays text across partitions, declared columns convert
// (or fail naming the row), short results never replace stored rows, and paths resolve from
// where the pipeline file really lives.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "interloper/destination.hpp"
#include "interloper/pipeline.hpp"
#include "interloper/run.hpp"
#include "support/temp_dir.hpp"

namespace il = interloper;
namespace fs = std::filesystem;
using namespace std::chrono;

namespace {

class TempDir : public interloper::testing::TempDir {
 public:
  TempDir() : interloper::testing::TempDir("il_fidelity") {}
};

il::Pipeline load(const TempDir& dir, const std::string& assets,
                  const std::string& destination = "sqlite:data.db") {
  dir.write("pipeline.yaml",
            "destination: " + destination + "\nsources:\n  - name: shop\n    assets:\n" + assets);
  return il::Pipeline::load((dir.path() / "pipeline.yaml").string());
}

il::RunResult run(const il::Pipeline& pipeline, const std::string& key) {
  const il::TimePartitionWindow window = il::TimePartitionWindow::parse(key);
  return il::SerialRunner().run(pipeline.dag(), window);
}

std::string first_error(const il::RunResult& result) {
  for (const auto& a : result.assets) {
    if (!a.error.empty()) return a.error;
  }
  return "";
}

// The partition's rows come from a file named after the key, so each run prints its own.
const char* kListAsset =
    "      - name: labels\n"
    "        partitioning: {kind: time, column: date}\n"
    "        command: [/bin/sh, -c, 'cat \"rows/$IL_PARTITION_KEY.jsonl\"']\n";

TEST(CommandRows, StringsKeepOneTypeAcrossPartitions) {
  TempDir dir;
  dir.write(
      "rows/2026-11-01.jsonl",
      "{\"date\":\"2026-11-01\",\"v\":\"2026-01-01\"}\n{\"date\":\"2026-11-01\",\"v\":\"010\"}\n");
  dir.write("rows/2026-11-02.jsonl",
            "{\"date\":\"2026-11-02\",\"v\":\"v2\"}\n{\"date\":\"2026-11-02\",\"v\":\"true\"}\n"
            "{\"date\":\"2026-11-02\",\"v\":\"1\"}\n");
  il::Pipeline pipeline = load(dir, kListAsset);
  ASSERT_TRUE(run(pipeline, "2026-11-01").ok());
  il::RunResult second = run(pipeline, "2026-11-02");
  ASSERT_TRUE(second.ok()) << first_error(second);
  const il::Asset& asset = pipeline.dag().asset("labels");
  il::Destination* destination = pipeline.dag().destination_of(asset);
  EXPECT_EQ(destination->schema(asset.dataset()),
            (il::Schema{{"date", il::DataType::date}, {"v", il::DataType::string}}));
  il::Table all = destination->read(asset.dataset(), nullptr);
  EXPECT_EQ(all.column("v"), (std::vector<il::Value>{"2026-01-01", "010", "v2", "true", "1"}));
}

TEST(CommandRows, CsvTextStaysTextInEveryBatchOfALargePartition) {
  // 9000 rows reach the destination in two batches; the first row's leading zeros make the
  // column text, and the plain numbers of the second batch stay text with it.
  TempDir dir;
  std::string csv = "date,code\n2026-11-03,007\n";
  for (int i = 2; i <= 9000; ++i) csv += "2026-11-03," + std::to_string(i % 50) + "\n";
  dir.write("rows/2026-11-03.csv", csv);
  il::Pipeline pipeline =
      load(dir,
           "      - name: codes\n"
           "        partitioning: {kind: time, column: date}\n"
           "        format: csv\n"
           "        command: [/bin/sh, -c, 'cat \"rows/$IL_PARTITION_KEY.csv\"']\n");
  il::RunResult result = run(pipeline, "2026-11-03");
  ASSERT_TRUE(result.ok()) << first_error(result);
  const il::Asset& asset = pipeline.dag().asset("codes");
  il::Destination* destination = pipeline.dag().destination_of(asset);
  EXPECT_EQ(destination->schema(asset.dataset()),
            (il::Schema{{"date", il::DataType::date}, {"code", il::DataType::string}}));
  il::Table all = destination->read(asset.dataset(), nullptr);
  ASSERT_EQ(all.num_rows(), 9000u);
  EXPECT_EQ(all.column("code").front(), il::Value("007"));
  EXPECT_EQ(all.column("code").back(), il::Value("0"));
}

TEST(CommandRows, DeclaredSchemaConvertsAndABadValueNamesItsRow) {
  TempDir dir;
  dir.write("rows/2026-11-03.csv",
            "date,zip,amount,ts\n"
            "2026-11-03,01234,3,2026-11-03T12:00:00+02:00\n"
            "2026-11-03,A1,2.5,2026-11-03T10:00:00.123456Z\n");
  dir.write("rows/2026-11-04.csv",
            "date,zip,amount,ts\n"
            "2026-11-04,1,1,2026-11-04T00:00:00Z\n"
            "2026-11-04,2,n/a,2026-11-04T00:00:00Z\n");
  il::Pipeline pipeline =
      load(dir,
           "      - name: orders\n"
           "        partitioning: {kind: time, column: date}\n"
           "        schema: {zip: string, amount: double, ts: timestamp}\n"
           "        format: csv\n"
           "        command: [/bin/sh, -c, 'cat \"rows/$IL_PARTITION_KEY.csv\"']\n");
  il::RunResult ok = run(pipeline, "2026-11-03");
  ASSERT_TRUE(ok.ok()) << first_error(ok);
  const il::Asset& asset = pipeline.dag().asset("orders");
  il::Destination* destination = pipeline.dag().destination_of(asset);
  il::Table rows = destination->read(asset.dataset(), nullptr);
  const auto ten = sys_seconds(sys_days(2026y / 11 / 3)) + hours(10);
  EXPECT_EQ(rows.row(0), (std::vector<il::Value>{sys_days(2026y / 11 / 3), "01234", 3.0, ten}));
  EXPECT_EQ(rows.at(1, "ts"), il::Value(ten + microseconds(123456)));  // the fraction kept

  il::RunResult bad = run(pipeline, "2026-11-04");
  ASSERT_FALSE(bad.ok());
  const std::string error = first_error(bad);
  for (const char* part : {"row 2 (line 3)", "'amount'", "\"n/a\"", "double"}) {
    EXPECT_NE(error.find(part), std::string::npos) << part << " not in: " << error;
  }
}

TEST(CommandRows, AShortResultFailsAndKeepsTheStoredRows) {
  TempDir dir;
  dir.write("rows/2026-11-03.jsonl",
            "{\"date\":\"2026-11-03\",\"n\":1}\n{\"date\":\"2026-11-03\",\"n\":2}\n");
  il::Pipeline pipeline = load(dir, std::string(kListAsset) + "        min_rows: 2\n");
  ASSERT_TRUE(run(pipeline, "2026-11-03").ok());
  dir.write("rows/2026-11-03.jsonl", "{\"date\":\"2026-11-03\",\"n\":1}\n");
  il::RunResult short_run = run(pipeline, "2026-11-03");
  ASSERT_FALSE(short_run.ok());
  EXPECT_NE(first_error(short_run).find("partition 2026-11-03 got 1 row but min_rows is 2"),
            std::string::npos)
      << first_error(short_run);
  dir.write("rows/2026-11-03.jsonl", "");
  ASSERT_FALSE(run(pipeline, "2026-11-03").ok());
  const il::Asset& asset = pipeline.dag().asset("labels");
  EXPECT_EQ(pipeline.dag().destination_of(asset)->read(asset.dataset(), nullptr).num_rows(), 2u);
}

TEST(CommandRows, AllowEmptyFalseRefusesNoRows) {
  TempDir dir;
  il::Pipeline pipeline = load(dir,
                               "      - name: snapshot\n"
                               "        allow_empty: false\n"
                               "        command: [/bin/sh, -c, 'cat rows.jsonl']\n");
  dir.write("rows.jsonl", "{\"n\":1}\n");
  ASSERT_TRUE(il::SerialRunner().run(pipeline.dag()).ok());
  dir.write("rows.jsonl", "\n");
  il::RunResult empty = il::SerialRunner().run(pipeline.dag());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(first_error(empty).find("the run got 0 rows but min_rows is 1"), std::string::npos)
      << first_error(empty);
  const il::Asset& asset = pipeline.dag().asset("snapshot");
  EXPECT_EQ(pipeline.dag().destination_of(asset)->row_count(asset.dataset(), nullptr), 1);
}

TEST(PipelineLoad, AnAssetMayHaveItsOwnDestination) {
  TempDir dir;
  il::Pipeline pipeline = load(dir,
                               "      - name: a\n"
                               "        command: [/bin/sh, -c, 'echo {\\\"n\\\":1}']\n"
                               "      - name: b\n"
                               "        destination: file:files?format=csv\n"
                               "        command: [/bin/sh, -c, 'echo {\\\"n\\\":2}']\n");
  ASSERT_TRUE(il::SerialRunner().run(pipeline.dag()).ok());
  EXPECT_TRUE(fs::exists(dir.path() / "data.db"));
  EXPECT_TRUE(fs::exists(dir.path() / "files/shop/b/data.csv"));
  const il::Asset& a = pipeline.dag().asset("a");
  EXPECT_EQ(pipeline.dag().destination_of(a)->row_count(a.dataset(), nullptr), 1);
  EXPECT_EQ(pipeline.definition("b")->destination_url,
            "file://" + (dir.path() / "files").string() + "?format=csv");
}

TEST(PipelineLoad, ALinkedFileResolvesPathsFromTheFileItLinksTo) {
  TempDir dir;
  dir.write("project/pipeline.yaml",
            "sources:\n"
            "  - name: shop\n"
            "    assets:\n"
            "      - name: events\n"
            "        command: [bin/emit]\n");
  fs::create_directories(dir.path() / "links");
  fs::create_symlink("../project/pipeline.yaml", dir.path() / "links/shop.yaml");
  il::Pipeline pipeline = il::Pipeline::load((dir.path() / "links/shop.yaml").string());
  const fs::path project = dir.path() / "project";
  EXPECT_EQ(pipeline.directory(), project.string());
  EXPECT_EQ(pipeline.store_path(), (project / ".interloper/state.db").string());
  EXPECT_EQ(pipeline.destination_url(), "sqlite://" + (project / ".interloper/data.db").string());
  // Messages still name the file as it was given.
  EXPECT_EQ(pipeline.path(), (dir.path() / "links/shop.yaml").string());
}

}  // namespace
