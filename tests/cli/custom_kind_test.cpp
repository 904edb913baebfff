// A partition kind registered by the program (tests/support/shard_kind.hpp) works in every
// command, over a DAG built in code and over a YAML pipeline.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "interloper/cli.hpp"
#include "interloper/destination.hpp"
#include "interloper/pipeline.hpp"
#include "support/shard_kind.hpp"
#include "support/temp_dir.hpp"

namespace il = interloper;
namespace fs = std::filesystem;

namespace {

struct Outcome {
  int code;
  std::string out;
  std::string err;
};

// Runs il::cli::main in process; `yaml` picks the pipeline form.
Outcome run(const il::DAG* dag, std::vector<std::string> args) {
  args.insert(args.begin(), "shards");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int argc = static_cast<int>(args.size());
  const int code =
      dag != nullptr ? il::cli::main(argc, argv.data(), *dag) : il::cli::main(argc, argv.data());
  std::string out = testing::internal::GetCapturedStdout();
  return {code, out, testing::internal::GetCapturedStderr()};
}

class CustomKind : public ::testing::Test {
 protected:
  void SetUp() override {
    il_test::register_shard_kind();
    store_ = (dir_ / "state.db").string();
  }

  interloper::testing::TempDir temp_{"il_custom_kind"};
  const fs::path dir_ = temp_.path();
  std::string store_;
};

TEST_F(CustomKind, EveryCommandWorksOverACodeDag) {
  il::Source shop("shop", std::make_shared<il::SqliteDestination>((dir_ / "data.db").string()));
  shop.asset("orders",
             [](il::ExecutionContext& ctx) {
               il::Table rows;
               const std::string key = ctx.partition().key();
               rows.append({{"shard_id", key.substr(6)}, {"n", 1}});
               return rows;
             })
      .partitioning(il_test::ShardPartitionConfig("shard_id", 4));
  const il::DAG dag({shop});

  Outcome check = run(&dag, {"check"});
  EXPECT_EQ(check.code, 0) << check.err;
  EXPECT_NE(check.out.find("orders  [shard(shard_id)]"), std::string::npos) << check.out;
  EXPECT_EQ(run(&dag, {"check", "--partition", "shard-2"}).code, 0);
  EXPECT_EQ(run(&dag, {"check", "--partition", "shard-9"}).code, 2);

  Outcome materialize =
      run(&dag, {"--quiet", "materialize", "--partition", "shard-2", "--store", store_});
  EXPECT_EQ(materialize.code, 0) << materialize.err;

  Outcome status = run(&dag, {"status", "--store", store_});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("orders  shard-0..shard-3  (4 partitions)"), std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("materialized      1  shard-2"), std::string::npos) << status.out;
  Outcome window =
      run(&dag, {"--json", "status", "--window", "shard-1..shard-2", "--store", store_});
  ASSERT_EQ(window.code, 0) << window.err;
  EXPECT_NE(window.out.find(R"("window":"shard-1..shard-2")"), std::string::npos) << window.out;

  Outcome catalog = run(&dag, {"catalog"});
  ASSERT_EQ(catalog.code, 0) << catalog.err;
  EXPECT_NE(catalog.out.find(R"("kind": "shard")"), std::string::npos) << catalog.out;
  EXPECT_NE(catalog.out.find(R"("shards": 4)"), std::string::npos) << catalog.out;
}

TEST_F(CustomKind, APipelineFileDeclaresIt) {
  const fs::path file = dir_ / "pipeline.yaml";
  const fs::path script = dir_ / "orders.sh";
  std::ofstream(script) << "#!/bin/sh\necho \"{\\\"shard_id\\\": \\\"${1#shard-}\\\"}\"\n";
  fs::permissions(script, fs::perms::owner_all);
  std::ofstream(file) << "store: " << store_ << "\n"
                      << "destination: sqlite://" << (dir_ / "data.db").string() << "\n"
                      << "sources:\n"
                      << "  - name: shop\n"
                      << "    assets:\n"
                      << "      - name: orders\n"
                      << "        partitioning: {kind: shard, column: shard_id, shards: 3}\n"
                      << "        command: [./orders.sh, '{partition.key}']\n";
  const il::Pipeline pipeline = il::Pipeline::load(file.string());
  const il::PartitionConfig* config = pipeline.dag().asset("orders").partitioning();
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->to_definition(), R"({"kind":"shard","column":"shard_id","shards":3})");

  EXPECT_EQ(run(nullptr, {"check", file.string(), "--partition", "shard-1"}).code, 0);
  Outcome materialize =
      run(nullptr, {"--quiet", "materialize", file.string(), "--partition", "shard-1"});
  EXPECT_EQ(materialize.code, 0) << materialize.err;
  Outcome status = run(nullptr, {"status", file.string()});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("materialized      1  shard-1"), std::string::npos) << status.out;
  Outcome catalog = run(nullptr, {"catalog", file.string()});
  ASSERT_EQ(catalog.code, 0) << catalog.err;
  EXPECT_NE(catalog.out.find(R"("kind": "shard")"), std::string::npos) << catalog.out;

  // The kind's own factory judges its fields; the message points at the partitioning.
  std::ofstream(file) << "sources:\n"
                      << "  - name: shop\n"
                      << "    assets:\n"
                      << "      - name: orders\n"
                      << "        partitioning: {kind: shard, column: shard_id}\n"
                      << "        command: [./orders.sh]\n";
  try {
    il::Pipeline::load(file.string());
    FAIL() << "a shard partitioning without 'shards' loaded";
  } catch (const il::PipelineError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline.yaml:5:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shards"), std::string::npos) << e.what();
  }
}

}  // namespace
