#include <gtest/gtest.h>

#include <chrono>

#include "interloper/partitioning.hpp"
#include "support/expect.hpp"
#include "support/shard_kind.hpp"

namespace il = interloper;
using G = il::TimeGranularity;

namespace {

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }

TEST(TimePartitionConfig, DefaultsAndDesignatedOptions) {
  const il::TimePartitionConfig plain("date");
  EXPECT_EQ(plain.kind(), "time");
  EXPECT_EQ(plain.column(), "date");
  EXPECT_EQ(plain.granularity(), G::DAY);
  EXPECT_FALSE(plain.allow_window());
  EXPECT_EQ(plain.start(), std::nullopt);
  const il::TimePartitionConfig monthly("date", {.granularity = G::MONTH, .allow_window = true});
  EXPECT_EQ(monthly.granularity(), G::MONTH);
  EXPECT_TRUE(monthly.allow_window());
}

TEST(TimePartitionConfig, PartitionAndWindowFromKeys) {
  const il::TimePartitionConfig config("date", {.granularity = G::MONTH});
  const il::TimePartition p = config.partition("2026-08");
  EXPECT_EQ(p.value(), at("2026-08-01"));
  EXPECT_EQ(config.window("2026-01", "2026-03").size(), 3u);
  const il::PartitionConfig& base = config;
  EXPECT_EQ(base.partition("2026-08")->key(), "2026-08");
  EXPECT_EQ(base.window("2026-01", "2026-03")->to_string(), "2026-01..2026-03");
  EXPECT_EQ(base.parse_window("2026-01..2026-03")->size(), 3u);
  EXPECT_EQ(base.parse_window("2026-02")->to_string(), "2026-02");
  IL_EXPECT_THROW_WITH(config.partition("2026-08-01"), std::invalid_argument, "'2026-08-01'");
  IL_EXPECT_THROW_WITH(config.window("2026-03", "2026-01"), std::invalid_argument,
                       "2026-03..2026-01");
}

TEST(TimePartitionConfig, CheckAcceptsServableWindows) {
  const il::TimePartitionConfig single("date");
  EXPECT_NO_THROW(single.check(il::TimePartition(at("2026-01-01"))));
  EXPECT_NO_THROW(single.check(il::TimePartitionWindow(at("2026-01-01"), at("2026-01-01"))));
  const il::TimePartitionConfig windowed("date", {.allow_window = true, .start = at("2026-01-01")});
  EXPECT_NO_THROW(windowed.check(il::TimePartitionWindow(at("2026-01-01"), at("2026-01-07"))));
}

TEST(TimePartitionConfig, CheckRejectsEachCase) {
  const il::TimePartitionConfig config("date", {.start = at("2026-01-01")});
  IL_EXPECT_THROW_WITH(config.check(il::TimePartitionWindow(at("2026-01-01"), at("2026-01-07"))),
                       il::PartitionError,
                       "window 2026-01-01..2026-01-07 has 7 partitions but allow_window is off");
  IL_EXPECT_THROW_WITH(config.check(il::TimePartition(at("2026-05-01"), G::MONTH)),
                       il::PartitionError,
                       "window 2026-05 is month-partitioned but the asset is day-partitioned");
  IL_EXPECT_THROW_WITH(config.check(il::ListPartition("eu")), il::PartitionError,
                       "window of kind 'list' given to a time-partitioned asset");
  const il::TimePartitionConfig windowed("date", {.allow_window = true, .start = at("2026-01-01")});
  IL_EXPECT_THROW_WITH(windowed.check(il::TimePartitionWindow(at("2025-12-30"), at("2026-01-02"))),
                       il::PartitionError,
                       "window 2025-12-30..2026-01-02 reaches before start 2026-01-01");
  try {
    config.check(il::TimePartition(at("2025-12-31")));
    FAIL() << "expected PartitionError";
  } catch (const il::PartitionError& e) {
    EXPECT_EQ(std::string(e.what()), "window 2025-12-31 reaches before start 2026-01-01");
  }
}

TEST(ListPartitionConfig, CheckRejectsEachCase) {
  const il::ListPartitionConfig config("region", {"eu", "us", "apac"});
  EXPECT_NO_THROW(config.check(il::ListPartition("us")));
  EXPECT_NO_THROW(config.check(config.window("us", "us")));
  IL_EXPECT_THROW_WITH(config.check(config.window("eu", "us")), il::PartitionError,
                       "window eu..us has 2 partitions but allow_window is off");
  IL_EXPECT_THROW_WITH(config.check(il::TimePartition(at("2026-01-01"))), il::PartitionError,
                       "window of kind 'time' given to a list-partitioned asset");
  IL_EXPECT_THROW_WITH(config.check(il::ListPartition("mars")), il::PartitionError, "'mars'");
  // A window of another list that is not a contiguous run of ours.
  const il::ListPartitionConfig windowed("region", {"eu", "us", "apac"}, true);
  const il::ListPartitionConfig other("region", {"eu", "apac"}, true);
  IL_EXPECT_THROW_WITH(windowed.check(other.window("eu", "apac")), il::PartitionError,
                       "window eu..apac is not a contiguous range");
  EXPECT_NO_THROW(windowed.check(windowed.window("eu", "apac")));
}

TEST(PartitionConfig, Compatible) {
  const il::TimePartitionConfig day("date");
  const il::TimePartitionConfig day2("event_date", {.allow_window = true});
  const il::TimePartitionConfig month("date", {.granularity = G::MONTH});
  const il::ListPartitionConfig list("region", {"eu", "us"});
  const il::ListPartitionConfig same_list("market", {"eu", "us"}, true);
  const il::ListPartitionConfig reordered("region", {"us", "eu"});
  EXPECT_TRUE(day.compatible(day2));
  EXPECT_FALSE(day.compatible(month));
  EXPECT_FALSE(day.compatible(list));
  EXPECT_TRUE(list.compatible(same_list));
  EXPECT_FALSE(list.compatible(reordered));
  EXPECT_FALSE(list.compatible(day));
}

TEST(PartitionConfig, DefinitionsRoundTrip) {
  const il::TimePartitionConfig day("date");
  EXPECT_EQ(
      day.to_definition(),
      R"({"kind":"time","column":"date","granularity":"day","allow_window":false,"start":null})");
  const il::TimePartitionConfig month(
      "d\"ate", {.granularity = G::MONTH, .allow_window = true, .start = at("2025-07-01")});
  EXPECT_EQ(month.to_definition(),
            R"({"kind":"time","column":"d\"ate","granularity":"month","allow_window":true,)"
            R"("start":"2025-07-01T00:00:00"})");
  const il::ListPartitionConfig list("region", {"eu", "us"}, true);
  EXPECT_EQ(list.to_definition(),
            R"({"kind":"list","column":"region","values":["eu","us"],"allow_window":true})");
  for (const il::PartitionConfig* config :
       std::initializer_list<const il::PartitionConfig*>{&day, &month, &list}) {
    const auto rebuilt = il::PartitionConfig::from_definition(config->to_definition());
    EXPECT_EQ(rebuilt->kind(), config->kind());
    EXPECT_EQ(rebuilt->column(), config->column());
    EXPECT_EQ(rebuilt->allow_window(), config->allow_window());
    EXPECT_EQ(rebuilt->to_definition(), config->to_definition());
    EXPECT_TRUE(rebuilt->compatible(*config));
    EXPECT_EQ(config->clone()->to_definition(), config->to_definition());
  }
  const auto rebuilt = il::PartitionConfig::from_definition(month.to_definition());
  const auto& time = dynamic_cast<const il::TimePartitionConfig&>(*rebuilt);
  EXPECT_EQ(time.start(), at("2025-07-01"));
}

TEST(PartitionConfig, MalformedDefinitionsAreRejected) {
  IL_EXPECT_THROW_WITH(il::PartitionConfig::from_definition(R"({"kind":"hexagon","column":"h"})"),
                       il::PartitionError, "'hexagon'");
  const char* bad[] = {
      "",
      "[1,2]",
      "{not json",
      R"({"column":"date"})",
      R"({"kind":"time","column":"date","granularity":"fortnight","allow_window":false,"start":null})",
      R"({"kind":"time","column":"date","granularity":"day","allow_window":"no","start":null})",
      R"({"kind":"time","column":"date","granularity":"day","allow_window":false})",
      R"({"kind":"time","column":"date","granularity":"day","allow_window":false,"start":"x"})",
      R"({"kind":"time","column":"date","granularity":"day","allow_window":false,"start":null,"extra":1})",
      R"({"kind":"list","column":"region","values":["eu","eu"],"allow_window":false})",
      R"({"kind":"list","column":"region","values":[1],"allow_window":false})",
      R"({"kind":"list","column":"region","values":[],"allow_window":false})",
  };
  for (const char* json : bad) {
    EXPECT_THROW(il::PartitionConfig::from_definition(json), il::PartitionError) << json;
  }
  IL_EXPECT_THROW_WITH(
      il::PartitionConfig::from_definition(
          R"({"kind":"time","column":"date","granularity":"fortnight","allow_window":false,"start":null})"),
      il::PartitionError, "'fortnight'");
}

using il_test::ShardPartition;
using il_test::ShardPartitionConfig;

// The custom kind lives in tests/support/shard_kind.hpp, shared with the pipeline and CLI tests.
TEST(PartitionConfig, RegistersACustomKind) {
  il_test::register_shard_kind();
  const ShardPartitionConfig config("shard_id", 16);
  const auto rebuilt = il::PartitionConfig::from_definition(config.to_definition());
  EXPECT_EQ(rebuilt->kind(), "shard");
  EXPECT_EQ(rebuilt->column(), "shard_id");
  EXPECT_EQ(rebuilt->to_definition(), config.to_definition());
  EXPECT_TRUE(rebuilt->compatible(config));
  EXPECT_EQ(dynamic_cast<const ShardPartitionConfig&>(*rebuilt).shards(), 16);
  EXPECT_EQ(rebuilt->parse_window("shard-2..shard-4")->size(), 3u);
  EXPECT_NO_THROW(rebuilt->check(ShardPartition(3)));
  EXPECT_EQ(rebuilt->default_window(il::TimePoint(), 30)->to_string(), "shard-0..shard-15");
  IL_EXPECT_THROW_WITH(rebuilt->check(il::ListPartition("eu")), il::PartitionError, "shard");
  // Built-in kinds are still there.
  EXPECT_EQ(
      il::PartitionConfig::from_definition(il::TimePartitionConfig("date").to_definition())->kind(),
      "time");
  EXPECT_THROW(il::PartitionConfig::register_kind(
                   "", [](std::string_view) { return std::unique_ptr<il::PartitionConfig>(); }),
               std::invalid_argument);
}

}  // namespace

namespace {

TEST(PartitionConfig, DefaultWindowCoversTheKindsNaturalExtent) {
  using namespace std::chrono;
  const il::TimePoint now = sys_seconds(sys_days(year{2026} / November / 20) + hours(13));
  il::TimePartitionConfig days("date");
  EXPECT_EQ(days.default_window(now, 30)->to_string(), "2026-10-22..2026-11-20");
  il::TimePartitionConfig months(
      "date", {.granularity = il::TimeGranularity::MONTH, .start = year{2026} / August / 15});
  EXPECT_EQ(months.default_window(now, 30)->to_string(), "2026-08..2026-11");
  // A start after now still gives a window (of the start's period).
  il::TimePartitionConfig later("date", {.start = year{2027} / January / 1});
  EXPECT_EQ(later.default_window(now, 30)->to_string(), "2027-01-01");
  il::ListPartitionConfig regions("region", {"eu", "us", "apac"});
  EXPECT_EQ(regions.default_window(now, 30)->to_string(), "eu..apac");
}

}  // namespace

namespace {

// Ordinals number a kind's partitions so that every window is a run of consecutive numbers;
// a kind without them (the shard kind) is handled by key.
TEST(PartitionConfig, OrdinalsNumberPartitionsConsecutively) {
  using namespace std::chrono;
  il::TimePartitionConfig days("date");
  EXPECT_EQ(days.ordinal(il::TimePartition(year{1970} / January / 1)), 0);
  EXPECT_EQ(days.ordinal(il::TimePartition(year{1970} / January / 31)), 30);
  il::TimePartitionWindow w(year{2026} / March / 30, year{2026} / April / 2);
  EXPECT_EQ(*days.ordinal(*w.partition_at(3)) - *days.ordinal(*w.partition_at(0)), 3);
  EXPECT_EQ(days.ordinal(il::ListPartition("eu")), std::nullopt);
  il::ListPartitionConfig regions("region", {"eu", "us", "apac"});
  EXPECT_EQ(regions.ordinal(il::ListPartition("apac")), 2);
  EXPECT_THROW(regions.ordinal(il::ListPartition("mars")), il::PartitionError);
  const ShardPartitionConfig shards("shard_id", 4);
  EXPECT_EQ(shards.ordinal(ShardPartition(1)), std::nullopt);
}

}  // namespace
