#include <gtest/gtest.h>

#include "interloper/time.hpp"
#include "support/expect.hpp"

namespace il = interloper;
using Kind = il::LocalTime::Kind;

namespace {

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }

TEST(ToLocal, FixedAndFractionalOffsets) {
  EXPECT_EQ(il::to_local(at("2026-05-19T18:30:00"), "Asia/Kolkata"), at("2026-05-20T00:00:00"));
  EXPECT_EQ(il::to_local(at("2026-05-19T18:14:59"), "Asia/Kathmandu"),
            at("2026-05-19T23:59:59"));
  EXPECT_EQ(il::to_local(at("2026-05-19T18:15:00"), "Asia/Kathmandu"), at("2026-05-20T00:00:00"));
  EXPECT_EQ(il::to_local(at("2026-05-20T12:00:00"), "UTC"), at("2026-05-20T12:00:00"));
}

TEST(ToLocal, FollowsDaylightSaving) {
  // Europe/Berlin springs forward at 01:00 UTC on 2026-03-29 and falls back on 2026-10-25.
  EXPECT_EQ(il::to_local(at("2026-03-29T00:59:59"), "Europe/Berlin"), at("2026-03-29T01:59:59"));
  EXPECT_EQ(il::to_local(at("2026-03-29T01:00:00"), "Europe/Berlin"), at("2026-03-29T03:00:00"));
  EXPECT_EQ(il::to_local(at("2026-10-25T00:30:00"), "Europe/Berlin"), at("2026-10-25T02:30:00"));
  EXPECT_EQ(il::to_local(at("2026-10-25T01:30:00"), "Europe/Berlin"), at("2026-10-25T02:30:00"));
  // Alternating zones must not confuse the per-thread cache.
  EXPECT_EQ(il::to_local(at("2026-01-15T12:00:00"), "America/New_York"), at("2026-01-15T07:00:00"));
  EXPECT_EQ(il::to_local(at("2026-07-15T12:00:00"), "America/New_York"), at("2026-07-15T08:00:00"));
  EXPECT_EQ(il::to_local(at("2026-07-15T12:00:00"), "Europe/Berlin"), at("2026-07-15T14:00:00"));
  // Lord Howe shifts by 30 minutes.
  EXPECT_EQ(il::to_local(at("2026-04-04T14:59:59"), "Australia/Lord_Howe"),
            at("2026-04-05T01:59:59"));
  EXPECT_EQ(il::to_local(at("2026-04-04T15:00:00"), "Australia/Lord_Howe"),
            at("2026-04-05T01:30:00"));
}

TEST(ToLocal, TextCarriesTheOffsetOfTheInstant) {
  EXPECT_EQ(il::to_local_text(at("2026-03-29T00:59:59"), "Europe/Berlin"),
            "2026-03-29T01:59:59+01:00");
  EXPECT_EQ(il::to_local_text(at("2026-03-29T01:00:00"), "Europe/Berlin"),
            "2026-03-29T03:00:00+02:00");
  // The repeated hour of the fall-back reads the same on the clock; the offset tells them apart.
  EXPECT_EQ(il::to_local_text(at("2026-10-25T00:30:00"), "Europe/Berlin"),
            "2026-10-25T02:30:00+02:00");
  EXPECT_EQ(il::to_local_text(at("2026-10-25T01:30:00"), "Europe/Berlin"),
            "2026-10-25T02:30:00+01:00");
  EXPECT_EQ(il::to_local_text(at("2026-01-15T12:00:00"), "America/New_York"),
            "2026-01-15T07:00:00-05:00");
  EXPECT_EQ(il::to_local_text(at("2026-05-19T18:15:00"), "Asia/Kathmandu"),
            "2026-05-20T00:00:00+05:45");
  EXPECT_EQ(il::to_local_text(at("2026-05-20T12:00:00"), "UTC"), "2026-05-20T12:00:00+00:00");
  // Amsterdam kept +00:19:32 until 1937.
  EXPECT_EQ(il::to_local_text(at("1930-06-01T12:00:00"), "Europe/Amsterdam"),
            "1930-06-01T13:19:32+01:19:32");
}

TEST(ToLocal, UnknownZoneIsNamed) {
  IL_EXPECT_THROW_WITH(il::to_local(at("2026-05-20"), "Mars/Olympus_Mons"), std::invalid_argument,
                       "'Mars/Olympus_Mons'");
  IL_EXPECT_THROW_WITH(il::from_local(at("2026-05-20"), "Nowhere"), std::invalid_argument,
                       "'Nowhere'");
}

TEST(FromLocal, UniqueTime) {
  const il::LocalTime lt = il::from_local(at("2026-05-20T00:00:00"), "Europe/Berlin");
  EXPECT_EQ(lt.kind, Kind::unique);
  EXPECT_EQ(lt.first, at("2026-05-19T22:00:00"));
  EXPECT_EQ(lt.second, lt.first);
  EXPECT_EQ(il::from_local(at("2026-05-20T00:00:00"), "Asia/Kathmandu").first,
            at("2026-05-19T18:15:00"));
}

TEST(FromLocal, SkippedTimeReportsTheEndOfTheGap) {
  const il::LocalTime berlin = il::from_local(at("2026-03-29T02:30:00"), "Europe/Berlin");
  EXPECT_EQ(berlin.kind, Kind::skipped);
  EXPECT_EQ(berlin.first, at("2026-03-29T01:00:00"));
  const il::LocalTime ny = il::from_local(at("2026-03-08T02:00:00"), "America/New_York");
  EXPECT_EQ(ny.kind, Kind::skipped);
  EXPECT_EQ(ny.first, at("2026-03-08T07:00:00"));
  const il::LocalTime lh = il::from_local(at("2026-10-04T02:15:00"), "Australia/Lord_Howe");
  EXPECT_EQ(lh.kind, Kind::skipped);
  EXPECT_EQ(lh.first, at("2026-10-03T15:30:00"));
  EXPECT_EQ(il::from_local(at("2026-10-04T02:30:00"), "Australia/Lord_Howe").kind, Kind::unique);
}

TEST(FromLocal, RepeatedTimeReportsBothInstants) {
  const il::LocalTime berlin = il::from_local(at("2026-10-25T02:30:00"), "Europe/Berlin");
  EXPECT_EQ(berlin.kind, Kind::repeated);
  EXPECT_EQ(berlin.first, at("2026-10-25T00:30:00"));
  EXPECT_EQ(berlin.second, at("2026-10-25T01:30:00"));
  const il::LocalTime ny = il::from_local(at("2026-11-01T01:30:00"), "America/New_York");
  EXPECT_EQ(ny.kind, Kind::repeated);
  EXPECT_EQ(ny.first, at("2026-11-01T05:30:00"));
  EXPECT_EQ(ny.second, at("2026-11-01T06:30:00"));
  const il::LocalTime lh = il::from_local(at("2026-04-05T01:45:00"), "Australia/Lord_Howe");
  EXPECT_EQ(lh.kind, Kind::repeated);
  EXPECT_EQ(lh.first, at("2026-04-04T14:45:00"));
  EXPECT_EQ(lh.second, at("2026-04-04T15:15:00"));
}

}  // namespace
