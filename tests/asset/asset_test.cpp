// Assets: validation of a run's window, the execution context, run and materialize.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "interloper/interloper.hpp"

namespace {

using namespace std::chrono;

il::Table one_row(il::ExecutionContext& ctx) {
  il::Table t;
  t.append({{"date", ctx.partition_date()}, {"clicks", 12}});
  return t;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

TEST(AssetCheck, EachFailureNamesTheAsset) {
  il::Asset daily("ads_stats", one_row);
  daily.partitioning(il::TimePartitionConfig("date", {.start = il::TimePoint(year{2026} / 1 / 1)}));
  il::TimePartitionWindow week(year{2026} / 1 / 1, year{2026} / 1 / 7);
  il::TimePartitionWindow month(year{2026} / 1 / 1, year{2026} / 1 / 1, il::TimeGranularity::MONTH);
  il::TimePartitionWindow before(year{2025} / 12 / 31, year{2025} / 12 / 31);
  il::ListPartitionConfig regions("region", {"eu", "us"});
  auto eu = regions.window("eu", "eu");

  for (const il::PartitionWindow* window :
       std::vector<const il::PartitionWindow*>{nullptr, &week, &month, &before, &eu}) {
    const std::string message = error_of([&] { daily.check(window); });
    EXPECT_TRUE(starts_with(message, "asset 'ads_stats': "))
        << (window ? window->to_string() : "no window") << ": " << message;
    EXPECT_THROW(daily.check(window), il::PartitionError);
  }
  il::TimePartitionWindow ok(year{2026} / 1 / 2, year{2026} / 1 / 2);
  EXPECT_NO_THROW(daily.check(&ok));
}

// The setters' earlier names keep compiling, deprecated, and do what the new ones do.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST(AssetSetters, EarlierNamesStillSetWhatTheGettersRead) {
  il::Asset asset("stats", one_row);
  asset.partitioned(il::TimePartitionConfig("date")).depends_on({"clicks"});
  ASSERT_NE(asset.partitioning(), nullptr);
  EXPECT_EQ(asset.partitioning()->column(), "date");
  EXPECT_EQ(asset.deps(), std::vector<std::string>{"clicks"});
}
#pragma GCC diagnostic pop

TEST(AssetCheck, UnpartitionedAssetAcceptsAnything) {
  il::Asset plain("customers", [](il::ExecutionContext&) { return il::Table(); });
  il::TimePartitionWindow week(year{2026} / 1 / 1, year{2026} / 1 / 7);
  EXPECT_NO_THROW(plain.check(nullptr));
  EXPECT_NO_THROW(plain.check(&week));
}

TEST(AssetCheck, ConstructorRejectsEmptyNameAndCallable) {
  EXPECT_THROW(il::Asset("", one_row), std::invalid_argument);
  EXPECT_THROW(il::Asset("x", il::ComputeFn()), std::invalid_argument);
}

TEST(Asset, CopyClonesPartitioningAndSharesDestination) {
  auto destination = std::make_shared<il::MemoryDestination>();
  il::Asset a("a", one_row);
  a.partitioning(il::TimePartitionConfig("date")).destination(destination).deps({"b"});
  il::Asset b = a;
  ASSERT_NE(b.partitioning(), nullptr);
  EXPECT_NE(b.partitioning(), a.partitioning());
  EXPECT_EQ(b.partitioning()->to_definition(), a.partitioning()->to_definition());
  EXPECT_EQ(b.destination(), destination);
  EXPECT_EQ(b.deps(), std::vector<std::string>{"b"});
}

TEST(Asset, RunComputesAndMaterializeWrites) {
  auto destination = std::make_shared<il::MemoryDestination>();
  il::Asset a("ads_stats", one_row);
  a.partitioning(il::TimePartitionConfig("date"));
  il::TimePartition day(year{2026} / 1 / 15);
  il::Table rows = a.run(day);
  ASSERT_EQ(rows.num_rows(), 1u);
  EXPECT_EQ(rows.at(0, "date"), il::Value(year{2026} / 1 / 15));
  // No destination: materialize is refused before computing.
  EXPECT_THROW(a.materialize(day), il::DestinationError);
  a.destination(destination);
  EXPECT_EQ(a.materialize(day), 1);
  EXPECT_EQ(destination->row_count(a.dataset(), &day), 1);
  // load() has no DAG to read from.
  il::Asset loader("loader", [](il::ExecutionContext& ctx) { return ctx.load("ads_stats"); });
  EXPECT_THROW(loader.run(), il::RunError);
}

// Emits three batches of `rows` rows each, then returns one more row.
il::Table emit_batches(il::ExecutionContext& ctx, int rows) {
  for (int b = 0; b < 3; ++b) {
    il::Table batch;
    for (int i = 0; i < rows; ++i)
      batch.append({{"date", ctx.partition_date()}, {"n", b * rows + i}});
    ctx.emit(batch);
  }
  il::Table last;
  last.append({{"date", ctx.partition_date()}, {"n", 3 * rows}, {"last", true}});
  return last;
}

TEST(Asset, EmittedBatchesAndTheReturnedRowsMakeThePartition) {
  il::Asset a("clicks", [](il::ExecutionContext& ctx) { return emit_batches(ctx, 4); });
  a.partitioning(il::TimePartitionConfig("date"));
  il::TimePartition day(year{2026} / 1 / 15);
  // Without a destination the batches come back with the returned rows, in order.
  il::Table rows = a.run(day);
  ASSERT_EQ(rows.num_rows(), 13u);
  EXPECT_EQ(rows.at(12, "n"), il::Value(12));
  EXPECT_EQ(rows.at(0, "last"), il::Value());
  auto destination = std::make_shared<il::MemoryDestination>();
  a.destination(destination);
  EXPECT_EQ(a.materialize(day), 13);
  EXPECT_EQ(destination->read(a.dataset(), day.as_window().get()), rows);
}

TEST(Asset, EmittedBatchesObeyTheDeclaredSchemaAndTheRowFloor) {
  auto destination = std::make_shared<il::MemoryDestination>();
  il::TimePartition day(year{2026} / 1 / 15);
  il::Asset a("clicks", [](il::ExecutionContext& ctx) { return emit_batches(ctx, 4); });
  a.partitioning(il::TimePartitionConfig("date"))
      .destination(destination)
      .schema(il::Schema{{"n", il::DataType::string}, {"extra", il::DataType::float64}});
  // Every batch is converted as it is emitted, not only the returned rows.
  std::vector<il::Schema> seen;
  il::ExecutionContext context("clicks", day.as_window(), {}, {},
                               [&](const il::Table& batch) { seen.push_back(batch.schema()); });
  il::Table rest = a.compute(context);
  ASSERT_EQ(seen.size(), 3u);
  const il::Schema declared{
      {"date", il::DataType::date}, {"n", il::DataType::string}, {"extra", il::DataType::float64}};
  for (const il::Schema& schema : seen) EXPECT_EQ(schema, declared);
  EXPECT_EQ(rest.at(0, "n"), il::Value("12"));
  EXPECT_EQ(a.materialize(day), 13);
  EXPECT_EQ(destination->schema(a.dataset())->field(1).type, il::DataType::string);
  // The floor counts the emitted rows too: 13 pass 13, and 14 fails keeping the stored rows.
  a.min_rows(13);
  EXPECT_EQ(a.materialize(day), 13);
  a.min_rows(14);
  EXPECT_THROW(a.materialize(day), il::RunError);
  EXPECT_EQ(destination->row_count(a.dataset(), &day), 13);
  // A batch whose value does not convert fails naming its row among all emitted rows.
  il::Asset bad("clicks", [](il::ExecutionContext& ctx) {
    il::Table batch;
    batch.append({{"date", ctx.partition_date()}, {"n", 1}});
    ctx.emit(batch);
    batch = il::Table();
    batch.append({{"date", ctx.partition_date()}, {"n", "x"}});
    ctx.emit(batch);
    return il::Table();
  });
  bad.partitioning(il::TimePartitionConfig("date"))
      .destination(destination)
      .schema(il::Schema{{"n", il::DataType::int64}});
  try {
    bad.materialize(day);
    FAIL() << "expected a DataError";
  } catch (const il::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("row 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(destination->row_count(a.dataset(), &day), 13);
}

TEST(Asset, AnAssetThatFailsAfterEmittingReplacesNothing) {
  auto destination = std::make_shared<il::MemoryDestination>();
  il::TimePartition day(year{2026} / 1 / 15);
  il::Asset good("clicks", one_row);
  good.partitioning(il::TimePartitionConfig("date")).destination(destination);
  ASSERT_EQ(good.materialize(day), 1);
  il::Asset failing("clicks", [](il::ExecutionContext& ctx) -> il::Table {
    emit_batches(ctx, 4);
    throw std::runtime_error("upstream vanished");
  });
  failing.partitioning(il::TimePartitionConfig("date")).destination(destination);
  EXPECT_THROW(failing.materialize(day), std::runtime_error);
  // A batch with a row outside the window fails at once.
  il::Asset stray("clicks", [](il::ExecutionContext& ctx) {
    il::Table batch;
    batch.append({{"date", year{2026} / 1 / 16}});
    ctx.emit(batch);
    return il::Table();
  });
  stray.partitioning(il::TimePartitionConfig("date")).destination(destination);
  EXPECT_THROW(stray.materialize(day), il::DestinationError);
  EXPECT_EQ(destination->read(good.dataset(), day.as_window().get()), good.run(day));
}

TEST(Asset, MaterializeWritesToTheSourcesDestination) {
  auto source_destination = std::make_shared<il::MemoryDestination>();
  il::Source ads("ads", source_destination);
  il::Asset& stats = ads.asset("ads_stats", one_row).partitioning(il::TimePartitionConfig("date"));
  il::TimePartition day(year{2026} / 1 / 15);
  EXPECT_EQ(stats.resolved_destination(), source_destination);
  EXPECT_EQ(stats.materialize(day), 1);
  EXPECT_EQ(source_destination->row_count(stats.dataset(), &day), 1);
  // A copy keeps the default; the asset's own destination wins over it.
  il::Asset copy = stats;
  EXPECT_EQ(copy.resolved_destination(), source_destination);
  auto own = std::make_shared<il::MemoryDestination>();
  copy.destination(own);
  EXPECT_EQ(copy.materialize(day), 1);
  EXPECT_EQ(own->row_count(copy.dataset(), &day), 1);
  // The DAG resolves to the same destination as materialize.
  il::DAG dag({ads});
  EXPECT_EQ(dag.destination_of(dag.asset("ads_stats")), source_destination.get());
}

TEST(Asset, WindowedAssetSeesTheWholeWindowInOneCall) {
  int calls = 0;
  il::Asset a("windowed", [&](il::ExecutionContext& ctx) {
    ++calls;
    il::Table t;
    const il::TimePartitionWindow window = *ctx.time_window();
    for (il::TimePartition p : window) t.append({{"date", p.value().date()}});
    return t;
  });
  a.partitioning(il::TimePartitionConfig("date", {.allow_window = true}));
  EXPECT_EQ(a.run(il::TimePartitionWindow(year{2026} / 1 / 1, year{2026} / 1 / 7)).num_rows(), 7u);
  EXPECT_EQ(a.run(il::TimePartition(year{2026} / 1 / 1)).num_rows(), 1u);
  EXPECT_EQ(calls, 2);
}

TEST(ExecutionContext, PartitionNeedsExactlyOne) {
  std::shared_ptr<const il::PartitionWindow> week =
      il::TimePartitionWindow(year{2026} / 1 / 1, year{2026} / 1 / 7).clone();
  il::ExecutionContext ctx("a", week);
  EXPECT_TRUE(ctx.has_window());
  EXPECT_EQ(ctx.window().size(), 7u);
  const std::string message = error_of([&] { ctx.partition(); });
  EXPECT_TRUE(starts_with(message, "asset 'a': ")) << message;
  EXPECT_NE(message.find("2026-01-01..2026-01-07"), std::string::npos) << message;
  EXPECT_THROW(ctx.partition_date(), il::PartitionError);

  il::ExecutionContext none("b", nullptr);
  EXPECT_FALSE(none.has_window());
  EXPECT_THROW(none.window(), il::PartitionError);
  EXPECT_THROW(none.partition(), il::PartitionError);
}

TEST(ExecutionContext, PartitionDateOnlyForDays) {
  il::ExecutionContext day("a", il::TimePartition(year{2026} / 3 / 9).as_window());
  EXPECT_EQ(day.partition().key(), "2026-03-09");
  EXPECT_EQ(day.partition_date(), year{2026} / 3 / 9);

  il::ExecutionContext month(
      "m", il::TimePartition(year{2026} / 3 / 9, il::TimeGranularity::MONTH).as_window());
  EXPECT_EQ(month.partition().key(), "2026-03");
  const std::string message = error_of([&] { month.partition_date(); });
  EXPECT_TRUE(starts_with(message, "asset 'm': ")) << message;
  EXPECT_NE(message.find("month"), std::string::npos) << message;

  il::ExecutionContext list("l", il::ListPartition("eu").as_window());
  EXPECT_EQ(list.partition().key(), "eu");
  EXPECT_THROW(list.partition_date(), il::PartitionError);
}

TEST(ExecutionContext, WindowWithoutCasts) {
  il::ExecutionContext week(
      "w", il::TimePartitionWindow(year{2026} / 1 / 1, year{2026} / 1 / 3).clone());
  ASSERT_TRUE(week.time_window().has_value());
  EXPECT_EQ(week.time_window()->bounds().end, il::TimePoint(year{2026} / 1 / 4));
  EXPECT_EQ(week.keys(), (std::vector<std::string>{"2026-01-01", "2026-01-02", "2026-01-03"}));

  il::ExecutionContext month(
      "m", il::TimePartition(year{2026} / 3 / 9, il::TimeGranularity::MONTH).as_window());
  EXPECT_EQ(month.partition_start(), il::TimePoint(year{2026} / 3 / 1));
  EXPECT_EQ(month.time_window()->granularity(), il::TimeGranularity::MONTH);

  il::ExecutionContext list(
      "l", il::ListPartitionConfig("region", {"eu", "us"}).window("eu", "us").clone());
  EXPECT_FALSE(list.time_window().has_value());
  EXPECT_EQ(list.keys(), (std::vector<std::string>{"eu", "us"}));
  il::ExecutionContext eu("l", il::ListPartition("eu").as_window());
  EXPECT_THROW(eu.partition_start(), il::PartitionError);

  il::ExecutionContext none("n", nullptr);
  EXPECT_FALSE(none.time_window().has_value());
  EXPECT_TRUE(none.keys().empty());
}

TEST(ExecutionContext, LoadUsesTheLoaderAndLogsGoToTheSink) {
  std::vector<std::string> lines;
  il::Logger logger(
      [&](il::LogLevel level, std::string_view asset, std::string_view message) {
        lines.push_back(std::string(il::log_level_name(level)) + " " + std::string(asset) + " " +
                        std::string(message));
      },
      "a");
  il::ExecutionContext ctx("a", nullptr, logger, [](std::string_view name) {
    il::Table t;
    t.append({{"from", name}});
    return t;
  });
  EXPECT_EQ(ctx.load("up").at(0, "from"), il::Value("up"));
  ctx.logger().info("hello");
  ctx.logger().for_asset("z").warning("careful");
  EXPECT_EQ(lines, (std::vector<std::string>{"info a hello", "warning z careful"}));
}

TEST(Source, AddSetsSourceNameAndRejectsDuplicates) {
  il::Source ads("ads");
  ads.asset("a", one_row);
  EXPECT_EQ(ads.assets().at(0).source_name(), "ads");
  EXPECT_EQ(ads.assets().at(0).dataset().source, "ads");
  EXPECT_THROW(ads.asset("a", one_row), il::DagError);
}

}  // namespace
