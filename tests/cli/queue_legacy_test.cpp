// A queue written by interloper 38b1874 (tests/fixtures/queue_38b1874): its backfills hold their
// window as text and their assets by name. Today's workers drain it, `status --queue` shows it,
// and a typed backfill enqueued into the same queue afterwards runs beside it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"
#include "support/cli_process.hpp"
#include "support/postgres.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using interloper::testing::Outcome;

namespace {

const fs::path kFixture = fs::path(IL_TEST_SOURCE_DIR) / "tests" / "fixtures" / "queue_38b1874";

class LegacyQueue : public ::testing::Test {
 protected:
  void SetUp() override {
    IL_REQUIRE_POSTGRES(url);
    server_ = url;
    schema_ = interloper::testing::fresh_schema("legacy_queue");
    queue_ = url + "?schema=" + schema_;
    fs::copy_file(kFixture / "legacy.yaml", dir_.path() / "legacy.yaml");
    std::ifstream in(kFixture / "queue.sql");
    std::stringstream text;
    text << in.rdbuf();
    std::string sql = text.str();
    for (auto at = sql.find("il_legacy_queue"); at != std::string::npos;
         at = sql.find("il_legacy_queue", at + schema_.size())) {
      sql.replace(at, std::string("il_legacy_queue").size(), schema_);
    }
    connection().exec(sql);
  }

  interloper::postgres::Connection connection() const {
    return interloper::postgres::Connection(std::make_shared<const interloper::postgres::Url>(
        interloper::postgres::parse_url(server_, {})));
  }

  // One query's rows against the queue's schema, columns joined by '|'.
  std::vector<std::string> sql(const std::string& query) const {
    interloper::postgres::Connection conn = connection();
    return interloper::testing::schema_rows(conn, schema_, query);
  }

  Outcome run(const std::vector<std::string>& args) const {
    return interloper::testing::run_interloper(args, dir_.path().string());
  }

  interloper::testing::TempDir dir_;
  std::string server_, schema_, queue_;
};

TEST_F(LegacyQueue, TodaysWorkersDrainABackfillWrittenBefore) {
  if (queue_.empty()) return;
  Outcome shown = run({"status", "legacy.yaml", "--queue", queue_});
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find("backfill 1  2026-11-01..2026-11-02"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("backfill 2  emea..us"), std::string::npos) << shown.out;

  Outcome worker = run({"worker", "legacy.yaml", "--queue", queue_, "--exit-when-idle"});
  ASSERT_EQ(worker.code, 0) << worker.err << worker.out;
  EXPECT_NE(worker.out.find("53 tasks succeeded, 0 failed"), std::string::npos) << worker.out;
  // The list backfill's value 2026 ran as the list value it is.
  EXPECT_NE(worker.out.find("ok        regions  2026  1 rows"), std::string::npos) << worker.out;
  EXPECT_EQ(sql("SELECT state, count(*), max(attempts) FROM tasks GROUP BY state"),
            std::vector<std::string>{"succeeded|53|1"});
  // The old rows keep their text; the column of typed requests was added, empty for them.
  EXPECT_EQ(sql("SELECT id, request, request_json IS NULL FROM backfills ORDER BY id"),
            (std::vector<std::string>{"1|2026-11-01..2026-11-02|t", "2|emea..us|t"}));

  Outcome status = run({"status", "legacy.yaml"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("regions"), std::string::npos) << status.out;

  // A backfill enqueued now into the same queue is typed, and runs beside the old ones.
  Outcome enqueued = run({"backfill", "legacy.yaml", "--window", "2026-11-03", "--asset", "events",
                          "--asset", "daily", "--queue", queue_});
  ASSERT_EQ(enqueued.code, 0) << enqueued.err;
  EXPECT_NE(enqueued.out.find("backfill 3 enqueued: 25 tasks"), std::string::npos) << enqueued.out;
  std::vector<std::string> stored = sql("SELECT request_json FROM backfills WHERE id = 3");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_NE(stored[0].find("\"granularity\":\"day\",\"first\":\"2026-11-03\""), std::string::npos)
      << stored[0];
  Outcome again = run({"worker", "legacy.yaml", "--queue", queue_, "--exit-when-idle"});
  ASSERT_EQ(again.code, 0) << again.err << again.out;
  EXPECT_NE(again.out.find("25 tasks succeeded, 0 failed"), std::string::npos) << again.out;
}

}  // namespace
