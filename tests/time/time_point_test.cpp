#include <gtest/gtest.h>

#include <sstream>

#include "interloper/time.hpp"
#include "support/expect.hpp"

namespace il = interloper;
using namespace std::chrono;

namespace {

TEST(TimePoint, DefaultIsEpoch) {
  il::TimePoint t;
  EXPECT_EQ(t.epoch_seconds(), 0);
  EXPECT_EQ(t.to_string(), "1970-01-01T00:00:00");
}

TEST(TimePoint, ConstructsFromChronoTypesAndComparesWithThem) {
  const year_month_day ymd = year{2026} / May / 20;
  const il::TimePoint t = ymd;
  EXPECT_EQ(t, ymd);
  EXPECT_EQ(t, sys_days{ymd});
  EXPECT_EQ(t, sys_seconds{sys_days{ymd}});
  EXPECT_EQ(ymd, t);
  EXPECT_LT(t, sys_days{ymd} + days{1});
  EXPECT_GT(t, year_month_day{year{2026} / May / 19});
  EXPECT_EQ(t.date(), ymd);
  EXPECT_TRUE(t.is_midnight());
  EXPECT_FALSE(il::TimePoint(sys_days{ymd} + hours{1}).is_midnight());
}

TEST(TimePoint, FormatsAndStreams) {
  const il::TimePoint t = sys_days{year{2026} / May / 20} + hours{13} + minutes{5} + seconds{9};
  EXPECT_EQ(t.to_string(), "2026-05-20T13:05:09");
  EXPECT_EQ(t.date_string(), "2026-05-20");
  std::ostringstream out;
  out << t;
  EXPECT_EQ(out.str(), "2026-05-20T13:05:09");
  EXPECT_EQ(il::TimePoint(year{1969} / December / 31).to_string(), "1969-12-31T00:00:00");
  EXPECT_EQ(il::TimePoint::from_epoch_seconds(-1).to_string(), "1969-12-31T23:59:59");
}

TEST(TimePoint, ParsesAcceptedShapes) {
  const il::TimePoint day = year{2026} / May / 20;
  const il::TimePoint at = sys_days{year{2026} / May / 20} + hours{13} + minutes{5} + seconds{9};
  EXPECT_EQ(il::TimePoint::parse("2026-05-20"), day);
  EXPECT_EQ(il::TimePoint::parse("2026-05-20T13:05:09"), at);
  EXPECT_EQ(il::TimePoint::parse("2026-05-20 13:05:09"), at);
  EXPECT_EQ(il::TimePoint::parse("2026-05-20T13:05:09Z"), at);
  EXPECT_EQ(il::TimePoint::parse("2024-02-29"), il::TimePoint(year{2024} / February / 29));
}

TEST(TimePoint, RejectsMalformedText) {
  for (const char* bad : {"", "2026", "2026-05", "2026-5-20", "2026-02-30", "2026-13-01",
                          "2026-05-20T24:00:00", "2026-05-20T13:60:00", "2026-05-20T13:05",
                          "2026-05-20X13:05:09", "2026-05-20T13:05:09+01:00", "2100-02-29",
                          "2026-05-20Z", "2026-05-20 ", "x2026-05-20"}) {
    IL_EXPECT_THROW_WITH(il::TimePoint::parse(bad), std::invalid_argument,
                         "'" + std::string(bad) + "'");
  }
}

TEST(TimePoint, RoundTripsThroughText) {
  for (std::int64_t s : {std::int64_t{0}, std::int64_t{-86401}, std::int64_t{951782400},
                         std::int64_t{4102444799}, std::int64_t{1779282309}}) {
    const auto t = il::TimePoint::from_epoch_seconds(s);
    EXPECT_EQ(il::TimePoint::parse(t.to_string()), t);
  }
}

TEST(Clock, FixedClockShowsWhatItWasSet) {
  il::FixedClock clock(year{2026} / May / 20);
  const il::Clock& c = clock;
  EXPECT_EQ(c.now(), il::TimePoint(year{2026} / May / 20));
  clock.set(year{2027} / January / 1);
  EXPECT_EQ(c.now(), il::TimePoint(year{2027} / January / 1));
}

TEST(Clock, SystemClockIsRecent) {
  il::SystemClock clock;
  EXPECT_GT(clock.now(), il::TimePoint(year{2020} / January / 1));
}

}  // namespace
