// The `interloper` binary on a pipeline whose destination is an S3-compatible store (moto on
// loopback, see scripts/with-moto): materialize, status and catalog work as with files, and the
// credentials appear in none of their output.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "destination/s3_fixtures.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "interloper/pipeline/process.hpp"
#include "support/cli_process.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

using interloper::testing::Outcome;

Outcome run_cli(const fs::path& dir, std::vector<std::string> args) {
  return interloper::testing::run_interloper(std::move(args), dir.string());
}

TEST(S3Cli, MaterializeStatusAndCatalogOnAnObjectStore) {
  IL_REQUIRE_S3(server);
  interloper::testing::TempDir dir;
  auto store = interloper::testing::test_s3_destination(server, "cli");  // makes the bucket
  const std::string prefix = interloper::S3Destination::parse_url(store->url()).prefix;
  // The open server takes any keys: these only have to stay out of every output.
  ::setenv("AWS_ACCESS_KEY_ID", "AKIACLITESTKEYID0000", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "cli-secret-never-printed", 1);
  const std::string pipeline = dir / "pipeline.yaml";
  std::ofstream(pipeline)
      << "destination: s3://interloper-test/" << prefix << "?endpoint=${IL_TEST_S3_ENDPOINT}\n"
      << "sources:\n"
         "  - name: shop\n"
         "    assets:\n"
         "      - name: regions\n"
         "        partitioning: {kind: list, column: region, values: [eu, \"a/b\", us], "
         "allow_window: true}\n"
         "        command: [/bin/sh, -c, 'for r in $IL_PARTITION_VALUES; do echo "
         "\"{{\\\"region\\\":\\\"$r\\\",\\\"n\\\":1}}\"; done']\n";

  auto check_quiet = [](const Outcome& o) {
    for (const std::string& text : {o.out, o.err}) {
      EXPECT_EQ(text.find("cli-secret-never-printed"), std::string::npos) << text;
      EXPECT_EQ(text.find("AKIACLITESTKEYID0000"), std::string::npos) << text;
    }
  };
  Outcome run = run_cli(dir.path(), {"materialize", pipeline, "--window", "eu..a/b"});
  ASSERT_EQ(run.code, 0) << run.err;
  check_quiet(run);

  Outcome status = run_cli(dir.path(), {"--json", "status", pipeline});
  ASSERT_EQ(status.code, 0) << status.err;
  check_quiet(status);
  EXPECT_EQ(json::parse(status.out)[0]["materialized"], json({"eu..a/b"})) << status.out;

  Outcome catalog = run_cli(dir.path(), {"catalog", pipeline});
  ASSERT_EQ(catalog.code, 0) << catalog.err;
  check_quiet(catalog);
  json entry = json::parse(catalog.out)[0];
  EXPECT_EQ(entry["destination"],
            "s3://interloper-test/" + prefix + "?endpoint=" + server.endpoint);
  EXPECT_EQ(entry["schema"],
            json::parse(R"([{"name":"region","type":"string"},{"name":"n","type":"int"}])"));

  // What landed, read back through the library.
  interloper::testing::use_test_credentials(server);
  interloper::ListPartitionConfig config("region", {"eu", "a/b", "us"}, true);
  interloper::DatasetRef ref{"shop", "regions", &config};
  EXPECT_EQ(store->partition_keys(ref), (std::vector<std::string>{"a/b", "eu"}));
  EXPECT_EQ(store->row_count(ref, nullptr), 2);

  // An unreachable store fails the run with one line and no credentials.
  ::setenv("AWS_SECRET_ACCESS_KEY", "cli-secret-never-printed", 1);
  const std::string unreachable = dir / "unreachable.yaml";
  std::ofstream(unreachable) << "destination: s3://interloper-test/x?endpoint=http://127.0.0.1:1\n"
                             << "sources:\n"
                                "  - name: shop\n"
                                "    assets:\n"
                                "      - name: one\n"
                                "        command: [/bin/echo, '{{\"k\":1}}']\n";
  Outcome failed = run_cli(dir.path(), {"materialize", unreachable});
  EXPECT_EQ(failed.code, 1) << failed.err;
  EXPECT_NE(failed.err.find("cannot reach s3://interloper-test at http://127.0.0.1:1"),
            std::string::npos)
      << failed.err;
  check_quiet(failed);
}

// A day without rows, and an asset that never produced a column, read as empty inputs
// downstream, partition by partition and whole.
TEST(S3Cli, EmptyDatasetsReadAsEmptyInputs) {
  IL_REQUIRE_S3(server);
  interloper::testing::TempDir dir;
  auto store = interloper::testing::test_s3_destination(server, "empty");  // makes the bucket
  const std::string prefix = interloper::S3Destination::parse_url(store->url()).prefix;
  const std::string pipeline = dir / "pipeline.yaml";
  std::ofstream(pipeline) << "destination: s3://interloper-test/" << prefix
                          << "?endpoint=${IL_TEST_S3_ENDPOINT}\n"
                          << "sources:\n"
                             "  - name: shop\n"
                             "    assets:\n"
                             "      - name: events\n"
                             "        partitioning: {kind: time, column: date}\n"
                             "        command: [/bin/true]\n"
                             "      - name: copy\n"
                             "        deps: [events]\n"
                             "        partitioning: {kind: time, column: date}\n"
                             "        command: [/bin/sh, -c, 'cat \"$IL_INPUT_EVENTS\"']\n"
                             "      - name: counted\n"
                             "        deps: [events]\n"
                             "        command: [/bin/sh, -c, 'echo \"{{\\\"n\\\":$(wc -l < "
                             "\"$IL_INPUT_EVENTS\")}}\"']\n";
  Outcome day = run_cli(dir.path(), {"materialize", pipeline, "--partition", "2026-11-02"});
  ASSERT_EQ(day.code, 0) << day.out << day.err;
  EXPECT_NE(day.out.find("ok        copy  2026-11-02  0 rows"), std::string::npos) << day.out;
  Outcome whole = run_cli(dir.path(), {"materialize", pipeline, "--asset", "counted"});
  ASSERT_EQ(whole.code, 0) << whole.out << whole.err;
  interloper::testing::use_test_credentials(server);
  interloper::Table counted = store->read({"shop", "counted", nullptr}, nullptr);
  ASSERT_EQ(counted.num_rows(), 1u);
  EXPECT_EQ(counted.at(0, "n"), interloper::Value(0));
}

// Puts `body` at `key` of the test bucket with boto3, an independent client: someone else's
// write behind interloper's back.
void put_behind_its_back(const interloper::testing::S3Server& server, const std::string& key,
                         const std::string& body) {
  interloper::testing::TempDir dir;
  const std::string script = dir / "put.py";
  std::ofstream(script) << "import sys, boto3\n"
                           "s3 = boto3.client('s3', endpoint_url=sys.argv[1], "
                           "region_name='us-east-1')\n"
                           "s3.put_object(Bucket='interloper-test', Key=sys.argv[2], "
                           "Body=sys.argv[3].encode())\n";
  const std::string command = "'" + server.python + "' '" + script + "' '" + server.endpoint +
                              "' '" + key + "' '" + body + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(S3Cli, StatusVerifyFindsAnObjectOverwrittenBehindItsBack) {
  IL_REQUIRE_S3(server);
  interloper::testing::TempDir dir;
  auto store = interloper::testing::test_s3_destination(server, "cli-verify");
  const std::string prefix = interloper::S3Destination::parse_url(store->url()).prefix;
  const std::string pipeline = dir / "pipeline.yaml";
  std::ofstream(pipeline)
      << "destination: s3://interloper-test/" << prefix << "?endpoint=${IL_TEST_S3_ENDPOINT}\n"
      << "sources:\n"
         "  - name: shop\n"
         "    assets:\n"
         "      - name: regions\n"
         "        partitioning: {kind: list, column: region, values: [eu, us], "
         "allow_window: true}\n"
         "        command: [/bin/sh, -c, 'for r in $IL_PARTITION_VALUES; do echo "
         "\"{{\\\"region\\\":\\\"$r\\\",\\\"n\\\":1}}\"; done']\n";
  ASSERT_EQ(run_cli(dir.path(), {"materialize", pipeline, "--window", "eu..us"}).code, 0);
  std::vector<std::string> args{"status", pipeline, "--verify"};
  Outcome clean = run_cli(dir.path(), args);
  EXPECT_EQ(clean.code, 0) << clean.out << clean.err;

  const std::string object = prefix + "/shop/regions/region=us/data.jsonl";
  put_behind_its_back(server, object, "{\"region\":\"us\",\"n\":2}\n");  // same size
  Outcome found = run_cli(dir.path(), args);
  EXPECT_EQ(found.code, 1) << found.out << found.err;
  EXPECT_NE(found.out.find("  changed           1  us"), std::string::npos) << found.out;
  EXPECT_NE(found.out.find("s3://interloper-test/" + object + ": ETag "), std::string::npos)
      << found.out;
  EXPECT_NE(found.err.find("changed in the destination"), std::string::npos) << found.err;
  args.insert(args.begin(), "--json");
  Outcome js = run_cli(dir.path(), args);
  EXPECT_EQ(js.code, 1);
  const json changed = json::parse(js.out)[0]["changed"];
  ASSERT_EQ(changed.size(), 1u) << js.out;
  EXPECT_EQ(changed[0]["partition"], "us");
  EXPECT_EQ(changed[0]["object"], "s3://interloper-test/" + object);
}

}  // namespace
