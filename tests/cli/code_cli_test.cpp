// The command line over a DAG defined in code (il::cli::main(argc, argv, dag)), in process.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "interloper/cli.hpp"
#include "interloper/destination.hpp"
#include "interloper/store.hpp"
#include "support/temp_dir.hpp"

namespace il = interloper;
namespace fs = std::filesystem;

namespace {

int run(const il::DAG& dag, std::vector<std::string> args) {
  args.insert(args.begin(), "shop");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return il::cli::main(static_cast<int>(args.size()), argv.data(), dag);
}

class CodeCli : public ::testing::Test {
 protected:
  void SetUp() override { store_ = (dir_ / "state.db").string(); }

  il::DAG dag(std::shared_ptr<il::Destination> destination) {
    il::Source shop("shop", std::move(destination));
    shop.asset("orders",
               [this](il::ExecutionContext& ctx) {
                 ++calls_;
                 if (ctx.partition().key() == fail_key_) throw std::runtime_error("upstream down");
                 il::Table rows;
                 rows.append({{"date", ctx.partition_date()}, {"n", 1}});
                 return rows;
               })
        .partitioning(il::TimePartitionConfig("date"));
    return il::DAG({shop});
  }

  interloper::testing::TempDir temp_{"il_code_cli"};
  const fs::path dir_ = temp_.path();
  std::string store_;
  std::atomic<int> calls_{0};
  std::string fail_key_;
};

TEST_F(CodeCli, RunsTheSameCommandsWithoutAPipelineFile) {
  auto destination = std::make_shared<il::SqliteDestination>((dir_ / "data.db").string());
  il::DAG shop = dag(destination);
  EXPECT_EQ(run(shop, {"--quiet", "check"}), 0);
  EXPECT_EQ(run(shop, {"--quiet", "materialize", "--partition", "2026-11-31", "--store", store_}),
            2);
  fail_key_ = "2026-11-02";
  EXPECT_EQ(
      run(shop, {"--quiet", "backfill", "--window", "2026-11-01..2026-11-03", "--store", store_}),
      1);
  EXPECT_EQ(calls_, 3);
  fail_key_.clear();
  EXPECT_EQ(run(shop, {"--quiet", "backfill", "--window", "2026-11-01..2026-11-03", "--missing",
                       "--store", store_}),
            0);
  EXPECT_EQ(calls_, 4) << "only the failed partition reruns";

  il::SqliteStore store(store_);
  il::TimePartitionWindow window(std::chrono::year{2026} / 11 / 1,
                                 std::chrono::year{2026} / 11 / 3);
  il::WindowStatus status = store.status(shop.asset("orders").dataset(), window);
  EXPECT_EQ(status.count(status.materialized), 3u);
}

TEST_F(CodeCli, DestinationFlagSuppliesAMissingDestination) {
  il::DAG shop = dag(nullptr);
  std::string url = "sqlite://" + (dir_ / "flag.db").string();
  EXPECT_EQ(run(shop, {"--quiet", "materialize", "--partition", "2026-11-01", "--store", store_,
                       "--destination", url}),
            0);
  EXPECT_TRUE(fs::exists(dir_ / "flag.db"));
  EXPECT_EQ(run(shop, {"--quiet", "materialize", "--partition", "2026-11-01", "--store", store_}),
            2)
      << "without a destination the asset cannot be written: bad input, found before running";
}

TEST_F(CodeCli, ABadDestinationUrlIsBadInputNamedByTheProgram) {
  il::DAG shop = dag(nullptr);
  testing::internal::CaptureStderr();
  const int code = run(shop, {"check", "--destination", "bogus:x"});
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_EQ(err.rfind("shop: error: ", 0), 0u) << err;
  EXPECT_NE(err.find("bogus"), std::string::npos) << err;
  // A run that cannot write is found before it runs, and reported under the program's name.
  testing::internal::CaptureStderr();
  EXPECT_EQ(run(shop, {"materialize", "--partition", "2026-11-01", "--store", store_}), 2);
  const std::string no_destination = testing::internal::GetCapturedStderr();
  EXPECT_EQ(no_destination.rfind("shop: error: asset 'orders' has no destination", 0), 0u)
      << no_destination;
}

// Runs the command line and returns what it printed.
std::string output_of(const il::DAG& dag, std::vector<std::string> args) {
  testing::internal::CaptureStdout();
  const int code = run(dag, std::move(args));
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0) << out;
  return out;
}

TEST_F(CodeCli, CatalogNamesTheColumnsTheLatestWriteDidNotProduce) {
  using nlohmann::json;
  bool renamed = false;
  il::Source shop("shop", std::make_shared<il::MemoryDestination>());
  shop.asset("orders",
             [&renamed](il::ExecutionContext& ctx) {
               il::Table rows;
               rows.append({{"date", ctx.partition_date()}, {renamed ? "renamed" : "old", 1}});
               return rows;
             })
      .partitioning(il::TimePartitionConfig("date"));
  const il::DAG dag({shop});
  ASSERT_EQ(run(dag, {"--quiet", "materialize", "--partition", "2026-11-01", "--store", store_}),
            0);
  json entry = json::parse(output_of(dag, {"catalog"}))[0];
  EXPECT_EQ(entry["retired_columns"], json::array());

  renamed = true;
  ASSERT_EQ(run(dag, {"--quiet", "materialize", "--partition", "2026-11-02", "--store", store_}),
            0);
  entry = json::parse(output_of(dag, {"catalog"}))[0];
  EXPECT_EQ(entry["schema"].size(), 3u) << entry.dump();
  EXPECT_EQ(entry["retired_columns"], json({"old"}));
  const std::string text = output_of(dag, {"catalog", "--text"});
  EXPECT_NE(text.find("    old      int  (retired: the latest write did not produce it)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    renamed  int\n"), std::string::npos) << text;

  // Reset drops the dataset with its schema: the next write starts a new one.
  ASSERT_EQ(run(dag, {"--quiet", "reset", "orders", "--yes", "--store", store_}), 0);
  entry = json::parse(output_of(dag, {"catalog"}))[0];
  EXPECT_TRUE(entry["schema"].is_null()) << entry.dump();
  EXPECT_EQ(entry["retired_columns"], json::array());
  ASSERT_EQ(run(dag, {"--quiet", "materialize", "--partition", "2026-11-03", "--store", store_}),
            0);
  entry = json::parse(output_of(dag, {"catalog"}))[0];
  EXPECT_EQ(entry["schema"].size(), 2u) << entry.dump();
  EXPECT_EQ(entry["retired_columns"], json::array());
}

}  // namespace
