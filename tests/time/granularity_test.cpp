#include <gtest/gtest.h>

#include <random>

#include "interloper/time.hpp"
#include "support/expect.hpp"

namespace il = interloper;
using namespace std::chrono;
using G = il::TimeGranularity;

namespace {

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }

const G kAll[] = {G::HOUR, G::DAY, G::WEEK, G::MONTH, G::QUARTER, G::YEAR};

TEST(TimeGranularity, NamesRoundTrip) {
  for (G g : kAll) EXPECT_EQ(G::from_name(g.name()), g);
  EXPECT_EQ(G::MONTH.name(), "month");
  EXPECT_EQ(G{}, G::DAY);
  IL_EXPECT_THROW_WITH(G::from_name("fortnight"), std::invalid_argument, "'fortnight'");
}

TEST(TimeGranularity, Truncate) {
  const il::TimePoint t = at("2026-05-20T13:45:10");
  EXPECT_EQ(G::HOUR.truncate(t), at("2026-05-20T13:00:00"));
  EXPECT_EQ(G::DAY.truncate(t), at("2026-05-20"));
  EXPECT_EQ(G::WEEK.truncate(t), at("2026-05-18"));  // Monday
  EXPECT_EQ(G::MONTH.truncate(t), at("2026-05-01"));
  EXPECT_EQ(G::QUARTER.truncate(t), at("2026-04-01"));
  EXPECT_EQ(G::YEAR.truncate(t), at("2026-01-01"));
  EXPECT_EQ(G::DAY.truncate(at("1969-12-31T23:59:59")), at("1969-12-31"));
  EXPECT_EQ(G::WEEK.truncate(at("1970-01-01")), at("1969-12-29"));
}

TEST(TimeGranularity, FormatKeys) {
  const il::TimePoint t = at("2026-05-20T13:45:10");
  EXPECT_EQ(G::HOUR.format(t), "2026-05-20T13");
  EXPECT_EQ(G::DAY.format(t), "2026-05-20");
  EXPECT_EQ(G::WEEK.format(t), "2026-W21");
  EXPECT_EQ(G::MONTH.format(t), "2026-05");
  EXPECT_EQ(G::QUARTER.format(t), "2026-Q2");
  EXPECT_EQ(G::YEAR.format(t), "2026");
}

TEST(TimeGranularity, LeapDays) {
  EXPECT_EQ(G::DAY.format(at("2024-02-29")), "2024-02-29");
  EXPECT_EQ(G::DAY.advance(at("2024-02-28"), 1), at("2024-02-29"));
  EXPECT_EQ(G::DAY.advance(at("2100-02-28"), 1), at("2100-03-01"));  // 2100 is not leap
  EXPECT_EQ(G::DAY.advance(at("2000-02-28"), 1), at("2000-02-29"));  // 2000 is
  EXPECT_EQ(G::DAY.parse("2000-02-29"), at("2000-02-29"));
  IL_EXPECT_THROW_WITH(G::DAY.parse("2100-02-29"), std::invalid_argument, "'2100-02-29'");
  IL_EXPECT_THROW_WITH(G::DAY.parse("2026-02-29"), std::invalid_argument, "'2026-02-29'");
  EXPECT_EQ(G::MONTH.bounds(at("2024-02-10")), (il::Bounds{at("2024-02-01"), at("2024-03-01")}));
  EXPECT_EQ(G::DAY.periods_between(at("2024-01-01"), at("2025-01-01")), 366);
  EXPECT_EQ(G::DAY.periods_between(at("2100-01-01"), at("2101-01-01")), 365);
  EXPECT_EQ(G::YEAR.advance(at("2024-02-29"), 1), at("2025-01-01"));
}

TEST(TimeGranularity, YearAndCenturyCrossings) {
  EXPECT_EQ(G::HOUR.advance(at("2025-12-31T23:00:00"), 1), at("2026-01-01T00:00:00"));
  EXPECT_EQ(G::DAY.advance(at("1999-12-31"), 1), at("2000-01-01"));
  EXPECT_EQ(G::MONTH.advance(at("2099-12-15"), 1), at("2100-01-01"));
  EXPECT_EQ(G::QUARTER.advance(at("2099-11-15"), 1), at("2100-01-01"));
  EXPECT_EQ(G::QUARTER.advance(at("2100-01-01"), -1), at("2099-10-01"));
  EXPECT_EQ(G::MONTH.periods_between(at("1999-11-30"), at("2000-02-01")), 3);
  EXPECT_EQ(G::YEAR.periods_between(at("1999-12-31"), at("2000-01-01")), 1);
  EXPECT_EQ(G::HOUR.periods_between(at("1969-12-31T23:30:00"), at("1970-01-01T00:10:00")), 1);
}

TEST(TimeGranularity, AdvanceAlwaysLandsOnPeriodStarts) {
  // Month ends: stepping never clamps, it moves from period start to period start.
  EXPECT_EQ(G::MONTH.advance(at("2026-03-31"), -1), at("2026-02-01"));
  EXPECT_EQ(G::MONTH.advance(at("2026-03-31"), -13), at("2025-02-01"));
  EXPECT_EQ(G::MONTH.advance(at("2024-01-31"), 1), at("2024-02-01"));
  EXPECT_EQ(G::MONTH.advance(at("2026-05-20"), 0), at("2026-05-01"));
  EXPECT_EQ(G::MONTH.advance(at("2026-01-31"), -25), at("2023-12-01"));
  EXPECT_EQ(G::QUARTER.advance(at("2026-05-31"), -5), at("2025-01-01"));
  EXPECT_EQ(G::WEEK.advance(at("2026-05-20"), -1), at("2026-05-11"));
  EXPECT_EQ(G::HOUR.advance(at("2026-05-20T13:59:59"), -14), at("2026-05-19T23:00:00"));
}

TEST(TimeGranularity, IsoWeeks) {
  EXPECT_EQ(G::WEEK.parse("2020-W53"), at("2020-12-28"));
  EXPECT_EQ(G::WEEK.format(at("2021-01-03")), "2020-W53");  // a Sunday
  EXPECT_EQ(G::WEEK.format(at("2021-01-04")), "2021-W01");
  EXPECT_EQ(G::WEEK.parse("2026-W53"), at("2026-12-28"));
  EXPECT_EQ(G::WEEK.parse("2027-W01"), at("2027-01-04"));
  EXPECT_EQ(G::WEEK.format(at("2027-01-03")), "2026-W53");
  EXPECT_EQ(G::WEEK.format(at("2024-12-30")), "2025-W01");  // week-year ahead of the date
  EXPECT_EQ(G::WEEK.parse("2025-W01"), at("2024-12-30"));
  EXPECT_EQ(G::WEEK.parse("2026-W01"), at("2025-12-29"));
  EXPECT_EQ(G::WEEK.advance(at("2020-12-28"), 1), at("2021-01-04"));
  EXPECT_EQ(G::WEEK.periods_between(at("2026-01-01"), at("2027-01-04")), 53);
  IL_EXPECT_THROW_WITH(G::WEEK.parse("2025-W53"), std::invalid_argument, "'2025-W53'");
  IL_EXPECT_THROW_WITH(G::WEEK.parse("2027-W53"), std::invalid_argument, "'2027-W53'");
}

TEST(TimeGranularity, QuarterEdges) {
  EXPECT_EQ(G::QUARTER.format(at("2026-03-31T23:59:59")), "2026-Q1");
  EXPECT_EQ(G::QUARTER.format(at("2026-04-01")), "2026-Q2");
  EXPECT_EQ(G::QUARTER.format(at("2026-12-31")), "2026-Q4");
  EXPECT_EQ(G::QUARTER.parse("2026-Q3"), at("2026-07-01"));
  EXPECT_EQ(G::QUARTER.bounds(at("2026-12-31")), (il::Bounds{at("2026-10-01"), at("2027-01-01")}));
  EXPECT_EQ(G::QUARTER.periods_between(at("2026-03-31"), at("2026-04-01")), 1);
  EXPECT_EQ(G::QUARTER.periods_between(at("2026-04-01"), at("2025-12-31")), -2);
}

TEST(TimeGranularity, PeriodsBetweenIsSignedWholePeriods) {
  EXPECT_EQ(G::DAY.periods_between(at("2026-05-20T23:00:00"), at("2026-05-21T01:00:00")), 1);
  EXPECT_EQ(G::DAY.periods_between(at("2026-05-21"), at("2026-05-20")), -1);
  EXPECT_EQ(G::MONTH.periods_between(at("2026-05-31"), at("2026-05-01")), 0);
  EXPECT_EQ(G::WEEK.periods_between(at("2026-05-24"), at("2026-05-25")), 1);  // Sun -> Mon
  EXPECT_EQ(G::YEAR.periods_between(at("2030-01-01"), at("2026-12-31")), -4);
}

TEST(TimeGranularity, PeriodRange) {
  const auto r = G::MONTH.period_range(at("2025-11-15"), at("2026-02-01"));
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r.front(), at("2025-11-01"));
  EXPECT_EQ(r.back(), at("2026-02-01"));
  EXPECT_TRUE(G::DAY.period_range(at("2026-01-02"), at("2026-01-01")).empty());
  EXPECT_EQ(G::DAY.period_range(at("2026-01-01"), at("2026-01-01")).size(), 1u);
}

TEST(TimeGranularity, ParseRejectsMalformedKeys) {
  const std::pair<G, const char*> cases[] = {
      {G::DAY, "2026-02-30"},  {G::DAY, ""},           {G::DAY, "2026-05-20x"},
      {G::DAY, "2026-5-20"},   {G::DAY, "2026-05"},    {G::DAY, "2026-00-10"},
      {G::DAY, "2026/05/20"},  {G::DAY, "2026-05-32"}, {G::MONTH, "2026-13"},
      {G::MONTH, "2026-5"},    {G::MONTH, "2026-00"},  {G::MONTH, "2026-05-01"},
      {G::MONTH, "2026-Q2"},   {G::WEEK, "2026-W54"},  {G::WEEK, "2026-W00"},
      {G::WEEK, "2026-W5"},    {G::WEEK, "2025-W53"},  {G::QUARTER, "2026-Q5"},
      {G::QUARTER, "2026-Q0"}, {G::QUARTER, "2026-q2"}, {G::YEAR, "26"},
      {G::YEAR, "2026x"},      {G::YEAR, ""},          {G::YEAR, "+202"},
      {G::HOUR, "2026-05-20T24"}, {G::HOUR, "2026-05-20 13"}, {G::HOUR, "2026-05-20T1"},
      {G::HOUR, "2026-05-20T13:00"},
  };
  for (const auto& [g, key] : cases) {
    IL_EXPECT_THROW_WITH(g.parse(key), std::invalid_argument, "'" + std::string(key) + "'");
  }
}

TEST(TimeGranularity, InferFromShape) {
  EXPECT_EQ(G::infer("2026"), G::YEAR);
  EXPECT_EQ(G::infer("2026-Q2"), G::QUARTER);
  EXPECT_EQ(G::infer("2026-05"), G::MONTH);
  EXPECT_EQ(G::infer("2026-W21"), G::WEEK);
  EXPECT_EQ(G::infer("2026-05-20"), G::DAY);
  EXPECT_EQ(G::infer("2026-05-20T13"), G::HOUR);
  EXPECT_EQ(G::infer(""), std::nullopt);
  EXPECT_EQ(G::infer("2026-5"), std::nullopt);
  EXPECT_EQ(G::infer("2026-05-20T13:00:00"), std::nullopt);
  EXPECT_EQ(G::infer("eu"), std::nullopt);
}

// Property tests over random instants between 1900 and 2200, with a fixed seed.
class GranularityProperties : public ::testing::TestWithParam<G> {};

TEST_P(GranularityProperties, HoldForRandomInstants) {
  const G g = GetParam();
  std::mt19937_64 rng(20260520);
  const std::int64_t lo = il::TimePoint(year{1900} / January / 1).epoch_seconds();
  const std::int64_t hi = il::TimePoint(year{2200} / January / 1).epoch_seconds();
  std::uniform_int_distribution<std::int64_t> dist(lo, hi);
  for (int i = 0; i < 5000; ++i) {
    const auto t = il::TimePoint::from_epoch_seconds(dist(rng));
    const auto u = il::TimePoint::from_epoch_seconds(dist(rng));
    const il::TimePoint start = g.truncate(t);
    ASSERT_LE(start, t);
    ASSERT_EQ(g.truncate(start), start);
    ASSERT_EQ(g.parse(g.format(t)), start) << t;
    ASSERT_EQ(G::infer(g.format(t)), g);
    ASSERT_EQ(g.advance(t, g.periods_between(t, u)), g.truncate(u)) << t << ' ' << u;
    ASSERT_EQ(g.periods_between(u, t), -g.periods_between(t, u));
    const il::Bounds b = g.bounds(t);
    ASSERT_EQ(b.start, start);
    ASSERT_LT(t, b.end);
    ASSERT_EQ(g.bounds(b.end).start, b.end);  // contiguous
    ASSERT_EQ(g.advance(b.end, -1), start);
    ASSERT_EQ(g.periods_between(start, b.end), 1);
    ASSERT_LT(g.format(t), g.format(b.end));  // keys sort chronologically
  }
}

INSTANTIATE_TEST_SUITE_P(AllGranularities, GranularityProperties, ::testing::ValuesIn(kAll),
                         [](const auto& info) { return std::string(info.param.name()); });

}  // namespace
