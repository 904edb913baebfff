#include <gtest/gtest.h>

#include "interloper/partitioning.hpp"
#include "support/expect.hpp"

namespace il = interloper;
using G = il::TimeGranularity;
using W = il::TimePartitionWindow;

namespace {

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }

// The key of the current day partition (lookback 1, offset 0) at UTC instant `now` in `zone`.
std::string today(const char* now, const char* zone, G g = G::DAY) {
  const auto w = W::lookback(at(now), 1, 0, g, std::nullopt, zone);
  return w ? w->to_string() : "<none>";
}

TEST(Lookback, WindowEndsOffsetPartitionsBack) {
  const auto now = at("2026-05-20T13:00:00");
  EXPECT_EQ(W::lookback(now, 3, 1, G::DAY)->to_string(), "2026-05-17..2026-05-19");
  EXPECT_EQ(W::lookback(now, 1, 0, G::DAY)->to_string(), "2026-05-20");
  EXPECT_EQ(W::lookback(now, 2, 0, G::DAY)->to_string(), "2026-05-19..2026-05-20");
  EXPECT_EQ(W::lookback(now, 3, 1, G::MONTH)->to_string(), "2026-02..2026-04");
  EXPECT_EQ(W::lookback(now, 1, 1, G::WEEK)->to_string(), "2026-W20");
  EXPECT_EQ(W::lookback(now, 2, 0, G::QUARTER)->to_string(), "2026-Q1..2026-Q2");
  EXPECT_EQ(W::lookback(now, 1, 1, G::YEAR)->to_string(), "2025");
  EXPECT_EQ(W::lookback(now, 24, 1, G::HOUR)->to_string(), "2026-05-19T13..2026-05-20T12");
}

TEST(Lookback, ClampsToStart) {
  const auto now = at("2026-05-20T13:00:00");
  EXPECT_EQ(W::lookback(now, 7, 1, G::DAY, at("2026-05-18"))->to_string(),
            "2026-05-18..2026-05-19");
  EXPECT_EQ(W::lookback(now, 7, 1, G::DAY, at("2026-05-19"))->to_string(), "2026-05-19");
  EXPECT_EQ(W::lookback(now, 7, 1, G::DAY, at("2026-05-01"))->size(), 7u);
  // The partition holding start is the earliest allowed.
  EXPECT_EQ(W::lookback(now, 12, 0, G::MONTH, at("2026-03-15"))->to_string(), "2026-03..2026-05");
}

TEST(Lookback, NulloptWhenClampingLeavesNothing) {
  const auto now = at("2026-05-20T13:00:00");
  EXPECT_EQ(W::lookback(now, 3, 1, G::DAY, at("2026-05-20")), std::nullopt);
  EXPECT_EQ(W::lookback(now, 3, 0, G::DAY, at("2026-06-01")), std::nullopt);
}

TEST(Lookback, RejectsBadArguments) {
  const auto now = at("2026-05-20T13:00:00");
  IL_EXPECT_THROW_WITH(W::lookback(now, 0, 0, G::DAY), std::invalid_argument, "0");
  IL_EXPECT_THROW_WITH(W::lookback(now, 1, -1, G::DAY), std::invalid_argument, "-1");
  IL_EXPECT_THROW_WITH(W::lookback(now, 1, 0, G::DAY, std::nullopt, "Europe/Atlantis"),
                       std::invalid_argument, "'Europe/Atlantis'");
  IL_EXPECT_THROW_WITH(W::lookback(now, 1, 0, G::HOUR, std::nullopt, "Europe/Atlantis"),
                       std::invalid_argument, "'Europe/Atlantis'");
}

TEST(Lookback, BerlinAcrossDstChanges) {
  // Spring forward on 2026-03-29: that day is 23 hours long.
  EXPECT_EQ(today("2026-03-28T22:59:59", "Europe/Berlin"), "2026-03-28");
  EXPECT_EQ(today("2026-03-28T23:00:00", "Europe/Berlin"), "2026-03-29");
  EXPECT_EQ(today("2026-03-29T21:59:59", "Europe/Berlin"), "2026-03-29");
  EXPECT_EQ(today("2026-03-29T22:00:00", "Europe/Berlin"), "2026-03-30");
  // Fall back on 2026-10-25: that day is 25 hours long.
  EXPECT_EQ(today("2026-10-24T21:59:59", "Europe/Berlin"), "2026-10-24");
  EXPECT_EQ(today("2026-10-24T22:00:00", "Europe/Berlin"), "2026-10-25");
  EXPECT_EQ(today("2026-10-25T22:59:59", "Europe/Berlin"), "2026-10-25");
  EXPECT_EQ(today("2026-10-25T23:00:00", "Europe/Berlin"), "2026-10-26");
  EXPECT_EQ(W::lookback(at("2026-10-25T23:30:00"), 2, 1, G::DAY, std::nullopt, "Europe/Berlin")
                ->to_string(),
            "2026-10-24..2026-10-25");
}

TEST(Lookback, NewYorkAcrossDstChanges) {
  EXPECT_EQ(today("2026-03-08T04:59:59", "America/New_York"), "2026-03-07");
  EXPECT_EQ(today("2026-03-08T05:00:00", "America/New_York"), "2026-03-08");
  EXPECT_EQ(today("2026-03-09T03:59:59", "America/New_York"), "2026-03-08");
  EXPECT_EQ(today("2026-03-09T04:00:00", "America/New_York"), "2026-03-09");
  EXPECT_EQ(today("2026-11-01T03:59:59", "America/New_York"), "2026-10-31");
  EXPECT_EQ(today("2026-11-01T04:00:00", "America/New_York"), "2026-11-01");
  EXPECT_EQ(today("2026-11-02T04:59:59", "America/New_York"), "2026-11-01");
  EXPECT_EQ(today("2026-11-02T05:00:00", "America/New_York"), "2026-11-02");
}

TEST(Lookback, LordHoweHalfHourDst) {
  EXPECT_EQ(today("2026-04-04T12:59:59", "Australia/Lord_Howe"), "2026-04-04");
  EXPECT_EQ(today("2026-04-04T13:00:00", "Australia/Lord_Howe"), "2026-04-05");
  EXPECT_EQ(today("2026-04-05T13:29:59", "Australia/Lord_Howe"), "2026-04-05");
  EXPECT_EQ(today("2026-04-05T13:30:00", "Australia/Lord_Howe"), "2026-04-06");
  EXPECT_EQ(today("2026-10-03T13:29:59", "Australia/Lord_Howe"), "2026-10-03");
  EXPECT_EQ(today("2026-10-03T13:30:00", "Australia/Lord_Howe"), "2026-10-04");
  EXPECT_EQ(today("2026-10-04T12:59:59", "Australia/Lord_Howe"), "2026-10-04");
  EXPECT_EQ(today("2026-10-04T13:00:00", "Australia/Lord_Howe"), "2026-10-05");
}

TEST(Lookback, FractionalOffsets) {
  EXPECT_EQ(today("2026-05-19T18:29:59", "Asia/Kolkata"), "2026-05-19");
  EXPECT_EQ(today("2026-05-19T18:30:00", "Asia/Kolkata"), "2026-05-20");
  EXPECT_EQ(today("2026-05-19T18:14:59", "Asia/Kathmandu"), "2026-05-19");
  EXPECT_EQ(today("2026-05-19T18:15:00", "Asia/Kathmandu"), "2026-05-20");
  // Longer periods follow the local calendar too.
  EXPECT_EQ(today("2026-05-31T18:29:59", "Asia/Kolkata", G::MONTH), "2026-05");
  EXPECT_EQ(today("2026-05-31T18:30:00", "Asia/Kolkata", G::MONTH), "2026-06");
  EXPECT_EQ(today("2026-12-31T18:15:00", "Asia/Kathmandu", G::YEAR), "2027");
  EXPECT_EQ(today("2026-05-17T22:30:00", "Europe/Berlin", G::WEEK), "2026-W21");
  EXPECT_EQ(today("2026-05-17T22:30:00", "UTC", G::WEEK), "2026-W20");
}

TEST(Lookback, HoursStayUtc) {
  EXPECT_EQ(today("2026-05-19T18:30:00", "Asia/Kolkata", G::HOUR), "2026-05-19T18");
  EXPECT_EQ(today("2026-03-29T01:30:00", "Europe/Berlin", G::HOUR), "2026-03-29T01");
  EXPECT_EQ(W::lookback(at("2026-05-19T18:30:00"), 3, 0, G::HOUR, std::nullopt, "Asia/Kathmandu")
                ->to_string(),
            "2026-05-19T16..2026-05-19T18");
}

}  // namespace
