// Backfill requests as values: the JSON round trip, the window a worker rebuilds from the stored
// keys (a list value that looks like a year stays a list value), requests stored before they were
// typed, and a pipeline that plans otherwise than the one that enqueued.
#include <gtest/gtest.h>

#include "interloper/interloper.hpp"
#include "interloper/queue/request.hpp"

namespace interloper::queue {
namespace {

Table nothing(ExecutionContext&) { return Table(); }

DAG pipeline(TimeGranularity rollup = TimeGranularity::DAY) {
  static const TimePartitionConfig hourly("hour", {.granularity = TimeGranularity::HOUR});
  static const ListPartitionConfig regions("region", {"emea", "2026", "us"});
  Source source("shop", std::make_shared<MemoryDestination>());
  source.asset("events", nothing).partitioning(hourly);
  source.asset("daily", nothing)
      .partitioning(TimePartitionConfig("day", {.granularity = rollup}))
      .deps({"events"});
  source.asset("regions", nothing).partitioning(regions);
  return DAG({source});
}

Plan backfill_plan(const DAG& dag, const PartitionWindow& window,
                   std::vector<std::string> assets) {
  PlanOptions options;
  options.assets = std::move(assets);
  return plan(dag, &window, options);
}

TEST(BackfillRequest, ATimeRequestRoundTripsAndPlansTheSame) {
  const DAG dag = pipeline();
  const TimePartitionWindow window = TimePartitionWindow::parse("2026-11-01..2026-11-02");
  const Plan planned = backfill_plan(dag, window, {"events", "daily"});
  const BackfillRequest request =
      make_request(planned, window, {.missing = true, .max_attempts = 2});
  EXPECT_EQ(request.window.granularity, "day");
  EXPECT_EQ(request.window.to_string(), "2026-11-01..2026-11-02");
  ASSERT_EQ(request.assets.size(), 2u);
  EXPECT_EQ(request.assets[0].asset, "events");
  EXPECT_EQ(request.assets[0].window.granularity, "hour");
  EXPECT_EQ(request.assets[0].window.first, "2026-11-01T00");
  EXPECT_EQ(request.assets[0].window.last, "2026-11-02T23");
  EXPECT_EQ(request.assets[0].window.size, 48u);

  const std::string stored = request.to_json();
  const BackfillRequest back = BackfillRequest::from_json(stored);
  EXPECT_EQ(back, request) << stored;
  EXPECT_TRUE(back.typed());
  EXPECT_EQ(back.options.max_attempts, 2);
  EXPECT_TRUE(back.options.missing);

  const Plan again = plan_request(dag, back);
  EXPECT_EQ(plan_fingerprint(again), request.plan);
  EXPECT_EQ(again.size(), 50u);
  EXPECT_EQ(again.window(49)->to_string(), "2026-11-02");
}

TEST(BackfillRequest, AListValueThatLooksLikeAYearStaysAListValue) {
  const DAG dag = pipeline();
  const std::unique_ptr<PartitionWindow> window =
      dag.asset("regions").partitioning()->window("2026", "2026");
  const Plan planned = backfill_plan(dag, *window, {"regions"});
  const BackfillRequest request = make_request(planned, *window, {});
  EXPECT_EQ(request.window.kind, "list");
  EXPECT_EQ(request.window.column, "region");
  EXPECT_EQ(request.window.to_string(), "2026");
  const BackfillRequest back = BackfillRequest::from_json(request.to_json());
  const std::unique_ptr<PartitionWindow> read = read_window(dag, back);
  EXPECT_EQ(read->kind(), "list");
  EXPECT_EQ(read->keys(), std::vector<std::string>{"2026"});
  const Plan again = plan_request(dag, back);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again.steps()[0].asset->name(), "regions");
}

TEST(BackfillRequest, ARequestStoredAsTextIsReadByItsAssetsPartitioning) {
  const DAG dag = pipeline();
  const BackfillRequest days =
      BackfillRequest::legacy("2026-11-01..2026-11-02", {"events", "daily"}, 3);
  EXPECT_FALSE(days.typed());
  EXPECT_EQ(days.window_text(), "2026-11-01..2026-11-02");
  EXPECT_EQ(plan_request(dag, days).size(), 50u);
  // A month over daily assets: the keys' own granularity.
  const BackfillRequest month = BackfillRequest::legacy("2026-11", {"daily"}, 3);
  EXPECT_EQ(plan_request(dag, month).size(), 30u);
  const BackfillRequest regions = BackfillRequest::legacy("emea..us", {"regions"}, 2);
  const Plan listed = plan_request(dag, regions);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed.window(1)->to_string(), "2026");
}

TEST(BackfillRequest, APipelineThatPlansOtherwiseIsRefused) {
  const DAG enqueued = pipeline();
  const TimePartitionWindow window = TimePartitionWindow::parse("2026-11-01..2026-11-02");
  const BackfillRequest request =
      make_request(backfill_plan(enqueued, window, {"events", "daily"}), window, {});
  const DAG changed = pipeline(TimeGranularity::MONTH);
  try {
    plan_request(changed, request);
    FAIL() << "planned a request of another pipeline";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("asset 'daily' has 2026-11 here, 2026-11-01..2026-11-02"),
              std::string::npos)
        << e.what();
  }
}

TEST(BackfillRequest, AMalformedDocumentIsAnError) {
  for (const char* text : {"", "{}", "{\"version\":2}", "[1]",
                           "{\"version\":1,\"window\":{\"granularity\":\"day\"},\"assets\":[],"
                           "\"options\":{\"missing\":false,\"max_attempts\":3},\"plan\":\"x\"}"}) {
    EXPECT_THROW(BackfillRequest::from_json(text), RunError) << text;
  }
}

}  // namespace
}  // namespace interloper::queue
