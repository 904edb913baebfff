// The mapping module: which upstream partitions a downstream partition reads, a request's share
// of a partitioning, and window texts read by the partitioning they are for.
#include "interloper/mapping.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "interloper/partitioning.hpp"
#include "support/expect.hpp"

namespace il = interloper;
using namespace std::chrono;

namespace {

il::TimePartitionConfig time_config(il::TimeGranularity g,
                                    std::optional<il::TimePoint> start = std::nullopt) {
  return il::TimePartitionConfig("date", {.granularity = g, .allow_window = true, .start = start});
}

std::shared_ptr<const il::PartitionWindow> window(std::string_view text) {
  return il::TimePartitionWindow::parse(text).clone();
}

il::PartitionSpan span(std::string_view text) { return il::PartitionSpan(window(text)); }

const il::TimePartitionConfig kHourly = time_config(il::TimeGranularity::HOUR);
const il::TimePartitionConfig kDaily = time_config(il::TimeGranularity::DAY);
const il::TimePartitionConfig kMonthly = time_config(il::TimeGranularity::MONTH);
const il::ListPartitionConfig kRegions("region", {"2026", "emea", "Q1", "Q2", "Q3", "us"}, true);

TEST(PartitionMapping, RefusesOnlyEdgesThatCannotMap) {
  EXPECT_EQ(il::PartitionMapping::refusal(kHourly, kMonthly), std::nullopt);
  EXPECT_EQ(il::PartitionMapping::refusal(kMonthly, kHourly), std::nullopt);
  EXPECT_EQ(il::PartitionMapping::refusal(kRegions, kRegions), std::nullopt);
  EXPECT_EQ(il::PartitionMapping::refusal(kDaily, kRegions),
            "time and list partitionings cannot be mapped");
  EXPECT_EQ(il::PartitionMapping::refusal(kRegions, kDaily),
            "time and list partitionings cannot be mapped");
  const il::ListPartitionConfig other("region", {"emea", "2026"});
  EXPECT_EQ(il::PartitionMapping::refusal(kRegions, other), "the two partitionings differ");
  const il::ListPartitionConfig renamed("zone", kRegions.values());
  EXPECT_EQ(il::PartitionMapping::refusal(kRegions, renamed), "the two partitionings differ");
}

TEST(PartitionMapping, TimeReadsTheUpstreamPeriodsOverlappingTheBounds) {
  const auto hours = il::PartitionMapping::between(&kHourly, &kDaily);
  EXPECT_FALSE(hours.reads_whole());
  EXPECT_EQ(hours.upstream_window(*window("2026-11-03"))->to_string(),
            "2026-11-03T00..2026-11-03T23");
  const auto month = il::PartitionMapping::between(&kMonthly, &kDaily);
  EXPECT_EQ(month.upstream_window(*window("2026-11-03"))->to_string(), "2026-11");
  // ISO week 2026-W49 runs from Monday 2026-11-30 to Sunday 2026-12-06.
  const il::TimePartitionConfig weekly = time_config(il::TimeGranularity::WEEK);
  const auto straddle = il::PartitionMapping::between(&kMonthly, &weekly);
  EXPECT_EQ(straddle.upstream_window(*window("2026-W49"))->to_string(), "2026-11..2026-12");
  // Across a year end.
  const auto days = il::PartitionMapping::between(&kDaily, &kMonthly);
  EXPECT_EQ(days.upstream_window(*window("2026-12"))->size(), 31u);
  EXPECT_EQ(days.upstream_window(*window("2026-12..2027-01"))->to_string(),
            "2026-12-01..2027-01-31");
}

TEST(PartitionMapping, TimeIsClampedToTheUpstreamStart) {
  const auto late = time_config(il::TimeGranularity::DAY, year{2026} / November / 20);
  const auto mapping = il::PartitionMapping::between(&late, &kMonthly);
  EXPECT_EQ(mapping.upstream_window(*window("2026-11"))->to_string(), "2026-11-20..2026-11-30");
  EXPECT_EQ(mapping.upstream_window(*window("2026-10")), nullptr);
}

TEST(PartitionMapping, ListsReadTheSamePartitionAndUnpartitionedEndsEverything) {
  const auto same = il::PartitionMapping::between(&kRegions, &kRegions);
  EXPECT_FALSE(same.reads_whole());
  EXPECT_EQ(same.upstream_window(*kRegions.parse_window("Q1..Q3"))->keys(),
            (std::vector<std::string>{"Q1", "Q2", "Q3"}));
  EXPECT_TRUE(il::PartitionMapping::between(nullptr, &kDaily).reads_whole());
  EXPECT_TRUE(il::PartitionMapping::between(&kDaily, nullptr).reads_whole());
  EXPECT_EQ(il::PartitionMapping::between(nullptr, &kDaily).upstream_window(*window("2026")),
            nullptr);
}

TEST(PartitionSpan, GivesBoundsAndPartitionsByIndex) {
  const il::PartitionSpan days = span("2026-11-01..2026-11-30");
  EXPECT_TRUE(days.timed());
  EXPECT_EQ(days.size(), 30u);
  EXPECT_EQ(days.partition_window(2)->to_string(), "2026-11-03");
  const il::Bounds b = days.bounds({2, 3});
  EXPECT_EQ(b.start, il::TimePoint(year{2026} / November / 3));
  EXPECT_EQ(b.end, il::TimePoint(year{2026} / November / 5));
  EXPECT_THROW(days.partition_window(30), std::out_of_range);
  const il::PartitionSpan months = span("2026-01..2026-12");
  EXPECT_EQ(months.bounds({11, 11}).end, il::TimePoint(year{2027} / January / 1));
  EXPECT_EQ(months.overlapping(days.bounds(days.all())), (il::PartitionRange{10, 10}));

  const il::PartitionSpan regions(kRegions.parse_window("emea..Q3"));
  EXPECT_FALSE(regions.timed());
  EXPECT_EQ(regions.size(), 4u);
  EXPECT_EQ(regions.partition_window(1)->to_string(), "Q1");
  const il::PartitionSpan none;
  EXPECT_EQ(none.size(), 1u);
  EXPECT_EQ(none.window(), nullptr);
}

TEST(PartitionMapping, IndexArithmeticBetweenSpansGoesBothWays) {
  const il::PartitionSpan hours = span("2026-11-01T00..2026-11-30T23");
  const il::PartitionSpan days = span("2026-11-01..2026-11-30");
  const il::PartitionSpan months = span("2026-10..2026-12");
  const auto day_reads_hours = il::PartitionMapping::between(&kHourly, &kDaily);
  EXPECT_EQ(day_reads_hours.upstream_of(days, {2, 2}, hours), (il::PartitionRange{48, 71}));
  EXPECT_EQ(day_reads_hours.downstream_of(hours, {50, 50}, days), (il::PartitionRange{2, 2}));
  EXPECT_EQ(day_reads_hours.upstream_of(days, days.all(), hours), hours.all());
  const auto month_reads_days = il::PartitionMapping::between(&kDaily, &kMonthly);
  // October and December hold no day of the days span.
  EXPECT_EQ(month_reads_days.upstream_of(months, {0, 0}, days), std::nullopt);
  EXPECT_EQ(month_reads_days.upstream_of(months, {1, 1}, days), days.all());
  EXPECT_EQ(month_reads_days.downstream_of(days, {29, 29}, months), (il::PartitionRange{1, 1}));

  const il::PartitionSpan regions(kRegions.parse_window("2026..Q2"));
  const auto same = il::PartitionMapping::between(&kRegions, &kRegions);
  EXPECT_EQ(same.upstream_of(regions, {3, 3}, regions), (il::PartitionRange{3, 3}));
  EXPECT_EQ(same.downstream_of(regions, {1, 2}, regions), (il::PartitionRange{1, 2}));

  const il::PartitionSpan whole;
  const auto every = il::PartitionMapping::between(nullptr, &kDaily);
  EXPECT_EQ(every.upstream_of(days, {5, 5}, whole), (il::PartitionRange{0, 0}));
  EXPECT_EQ(every.downstream_of(whole, {0, 0}, days), days.all());
}

TEST(PartitionConfigShare, ARequestCoversEachPartitioningsOwnPartitions) {
  const auto year = il::TimePartitionWindow::parse("2026");
  EXPECT_EQ(kDaily.share(year)->size(), 365u);
  EXPECT_EQ(kMonthly.share(year)->to_string(), "2026-01..2026-12");
  const auto late = time_config(il::TimeGranularity::DAY, std::chrono::year{2026} / November / 20);
  IL_EXPECT_THROW_WITH(late.share(il::TimePartitionWindow::parse("2026-10")), il::PartitionError,
                       "window 2026-10 lies entirely before start 2026-11-20T00:00:00");
  // Another kind's window is passed on as it is; check() then says whether it is servable.
  const auto value = kRegions.parse_window("2026");
  EXPECT_TRUE(kRegions.share(*value)->same_partitions(*value));
}

TEST(ReadWindow, ThePartitioningDecidesNotTheShapeOfTheText) {
  using Form = il::PartitionConfig::TextForm;
  // "2026" is a year to a daily partitioning and a value to a list holding it.
  EXPECT_EQ(kDaily.read_window("2026")->as_time_window()->granularity(), il::TimeGranularity::YEAR);
  EXPECT_EQ(kRegions.read_window("2026")->keys(), std::vector<std::string>{"2026"});
  EXPECT_EQ(kRegions.read_window("2026", Form::key)->keys(), std::vector<std::string>{"2026"});
  EXPECT_EQ(kRegions.read_window("Q1..Q3")->keys(), (std::vector<std::string>{"Q1", "Q2", "Q3"}));
  EXPECT_EQ(kRegions.read_window("emea..us")->size(), 5u);
  EXPECT_EQ(kDaily.read_window("2026-11-03", Form::key)->to_string(), "2026-11-03");
  EXPECT_THROW(kDaily.read_window("emea"), std::invalid_argument);
  EXPECT_THROW(kDaily.read_window("emea", Form::key), std::invalid_argument);
  IL_EXPECT_THROW_WITH(kRegions.read_window("2027"), il::PartitionError, "'2027'");
  IL_EXPECT_THROW_WITH(kRegions.read_window("Q3..Q1"), il::PartitionError, "runs backwards");
}

TEST(SelectWindow, GivesThePartitioningsOwnPartitions) {
  EXPECT_EQ(kMonthly.select_window("2026-11-03")->to_string(), "2026-11");
  EXPECT_EQ(kHourly.select_window("2026-11-03")->size(), 24u);
  EXPECT_EQ(kDaily.select_window("2026-11-01..2026-11-30")->size(), 30u);
  EXPECT_EQ(kRegions.select_window("Q2")->to_string(), "Q2");
}

TEST(PartitionConfigQueries, TimeAxisAndDeclaredWindow) {
  const auto axis = kDaily.time_axis();
  ASSERT_TRUE(axis);
  EXPECT_EQ(axis->column, "date");
  EXPECT_EQ(axis->granularity, il::TimeGranularity::DAY);
  EXPECT_FALSE(axis->start);
  EXPECT_EQ(kDaily.declared_window(), nullptr);
  EXPECT_FALSE(kRegions.time_axis());
  EXPECT_EQ(kRegions.declared_window()->keys(), kRegions.values());
}

TEST(SamePartitions, ComparesPartitionsNotTypes) {
  EXPECT_TRUE(window("2026-11")->same_partitions(*window("2026-11")));
  EXPECT_FALSE(window("2026-11")->same_partitions(*window("2026-11-01..2026-11-30")));
  EXPECT_FALSE(window("2026")->same_partitions(*kRegions.parse_window("2026")));
  EXPECT_FALSE(kRegions.parse_window("2026")->same_partitions(*window("2026")));
  const il::ListPartitionConfig other("region", {"2026", "x"});
  EXPECT_TRUE(kRegions.parse_window("2026")->same_partitions(*other.parse_window("2026")));
}

TEST(ListValueRules, AreEnforcedByTheConfigItself) {
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {"eu", "a..b"}), il::PartitionError,
                       "list partitioning of column 'region': list value 'a..b' contains '..'");
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {"v2."}), il::PartitionError,
                       "list value 'v2.' begins or ends with '.'");
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {".hidden"}), il::PartitionError,
                       "list value '.hidden' begins or ends with '.'");
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {std::string("a\0b", 3)}),
                       il::PartitionError, "list value 'a b' holds the control character 0x00");
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {"a\nb"}), il::PartitionError,
                       "control character 0x0a");
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {"del\x7f"}), il::PartitionError,
                       "control character 0x7f");
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig::check_value(""), il::PartitionError,
                       "must not be empty");
  // Dots inside a value, and values shaped like time keys, are fine.
  EXPECT_NO_THROW(il::ListPartitionConfig("version", {"v1.2", "2026", "2026-Q1", "a.b.c"}));
  // A definition is held to the same rules.
  IL_EXPECT_THROW_WITH(
      il::PartitionConfig::from_definition(
          R"({"kind":"list","column":"r","values":["x..y"],"allow_window":false})"),
      il::PartitionError, "'x..y'");
}

}  // namespace
