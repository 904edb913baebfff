// Dependency mappings through the `interloper` binary, on the example ledger pipeline: a balance
// reading its own day before, a 7-day window of movements, and staleness through the window.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "interloper/destination.hpp"
#include "interloper/partitioning.hpp"
#include "support/cli_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using interloper::testing::Outcome;
using interloper::testing::run_interloper;

class LedgerCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path demo = fs::path(IL_TEST_SOURCE_DIR) / "examples" / "demo";
    for (const char* file : {"ledger.yaml", "movements.sh"}) {
      fs::copy_file(demo / file, dir_.path() / file);
    }
  }

  Outcome run(std::vector<std::string> args) {
    args.insert(args.begin() + 1, (dir_.path() / "ledger.yaml").string());
    return run_interloper(std::move(args), dir_.path().string());
  }

  interloper::Table read(const std::string& asset, std::string_view day) {
    auto warehouse =
        interloper::open_destination("sqlite://" + (dir_.path() / ".interloper/ledger.db").string());
    const interloper::TimePartitionConfig daily("date");
    const auto window = interloper::TimePartitionWindow::parse(day);
    return warehouse->read({"bank", asset, &daily}, &window);
  }

  interloper::testing::TempDir dir_;
};

TEST_F(LedgerCli, ABackfillComesOutRightOnTheFirstRun) {
  const Outcome first = run({"backfill", "--window", "2026-11-01..2026-11-10", "--quiet"});
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  // The balance of day N is day N's movements plus the balance of the day before.
  for (int day = 2; day <= 10; ++day) {
    const std::string today = fmt::format("2026-11-{:02d}", day);
    const std::string yesterday = fmt::format("2026-11-{:02d}", day - 1);
    const interloper::Table moves = read("movements", today);
    const interloper::Table before = read("balances", yesterday);
    const interloper::Table now = read("balances", today);
    ASSERT_EQ(now.num_rows(), 3u) << today;
    std::int64_t expected = 0, got = 0;
    for (const auto& v : moves.column("amount")) expected += v.as_int();
    for (const auto& v : before.column("balance")) expected += v.as_int();
    for (const auto& v : now.column("balance")) got += v.as_int();
    EXPECT_EQ(got, expected) << today;
  }
  // The first day's window holds one day, the tenth's seven.
  EXPECT_EQ(read("weekly_avg", "2026-11-01").column("days")[0].as_int(), 1);
  EXPECT_EQ(read("weekly_avg", "2026-11-10").column("days")[0].as_int(), 7);

  const Outcome catalog = run({"catalog", "--text"});
  EXPECT_NE(catalog.out.find("after movements, balances (offset -1)"), std::string::npos)
      << catalog.out << catalog.err;
  EXPECT_NE(catalog.out.find("after movements (window -6..0)"), std::string::npos);
}

TEST_F(LedgerCli, ReRunningADayMakesItsReadersStaleAndMissingRunsThem) {
  ASSERT_EQ(run({"backfill", "--window", "2026-11-01..2026-11-30", "--quiet"}).code, 0);
  const Outcome again = run({"materialize", "--asset", "movements", "--partition", "2026-11-03"});
  ASSERT_EQ(again.code, 0) << again.out << again.err;
  const Outcome status =
      run({"status", "--asset", "weekly_avg", "--window", "2026-11-01..2026-11-30", "--json"});
  EXPECT_NE(status.out.find("\"stale\":[\"2026-11-03..2026-11-09\"]"), std::string::npos)
      << status.out;
  const Outcome plan = run({"backfill", "--window", "2026-11-01..2026-11-30", "--missing",
                            "--asset", "weekly_avg", "--dry-run"});
  EXPECT_NE(plan.out.find("tasks: 7 to run"), std::string::npos) << plan.out << plan.err;
}

}  // namespace
