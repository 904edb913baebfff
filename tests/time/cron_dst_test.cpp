// When cron expressions fire around daylight-saving changes, as tables of facts: each row is an
// expression, a zone, a UTC instant to start after, and the UTC instants of the fires that follow,
// in order. The rows are the cases of Dagster's cron iterator and scheduler time-zone tests and of
// croniter's DST tests, with the instants worked out by hand from the zones' rules, plus the
// zones those suites leave out (half-hour DST, offsets that are not whole hours).
//
// Two rules (cron(8)'s, see docs/schedules.md):
//   * an hour field of `*` or a step runs on the clock: both passes through a repeated hour fire,
//     a wall time that a gap skips does not;
//   * a fixed hour fires once a day: a repeated wall time at its first occurrence (Dagster picks
//     the second; those rows say so), a skipped one at the first instant after the gap.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "interloper/cron.hpp"

namespace il = interloper;

namespace {

struct Fires {
  const char* expr;
  const char* zone;
  const char* after;               // UTC
  std::vector<const char*> fires;  // UTC, in order
};

void expect_fires(const Fires& row) {
  const il::CronSchedule cron = il::CronSchedule::parse(row.expr);
  il::TimePoint after = il::TimePoint::parse(row.after);
  for (const char* expected : row.fires) {
    const il::TimePoint got = cron.next_fire(after, row.zone);
    EXPECT_EQ(got.to_string(), il::TimePoint::parse(expected).to_string())
        << "'" << row.expr << "' in " << row.zone << " after " << after.to_string() << "Z";
    after = il::TimePoint::parse(expected);
  }
  // Every instant strictly between two fires leads to the second one.
  for (std::size_t i = 0; i + 1 < row.fires.size(); ++i) {
    const il::TimePoint a = il::TimePoint::parse(row.fires[i]);
    const il::TimePoint b = il::TimePoint::parse(row.fires[i + 1]);
    const std::int64_t gap = b.epoch_seconds() - a.epoch_seconds();
    for (const std::int64_t k : {std::int64_t{1}, gap / 3, gap / 2, gap - 1}) {
      if (k <= 0 || k >= gap) continue;
      const auto t = il::TimePoint::from_epoch_seconds(a.epoch_seconds() + k);
      EXPECT_EQ(cron.next_fire(t, row.zone).to_string(), b.to_string())
          << "'" << row.expr << "' in " << row.zone << " after " << t.to_string() << "Z";
    }
  }
}

void expect_all(const std::vector<Fires>& rows) {
  for (const Fires& row : rows) expect_fires(row);
}

// Berlin 2023-10-29: 03:00 CEST goes back to 02:00 CET at 01:00Z. US/Central 2019-11-03 and
// 2023-11-05: 02:00 CDT goes back to 01:00 CST at 07:00Z. New York 2026-11-01: 02:00 EDT back to
// 01:00 EST at 06:00Z. Lord Howe 2026-04-05: 02:00 (+11) back to 01:30 (+10:30) at 15:00Z on the
// 4th.
TEST(CronDst, AnHourFieldOfStarOrStepFiresInBothPassesThroughARepeatedHour) {
  expect_all({
      // Dagster's hourly fall-back scheduler test: 1 AM CDT, 1 AM CST, 2 AM, 3 AM.
      {"@hourly",
       "US/Central",
       "2019-11-03T05:30:00",
       {"2019-11-03T06:00:00", "2019-11-03T07:00:00", "2019-11-03T08:00:00",
        "2019-11-03T09:00:00"}},
      {"0 * * * *",
       "Europe/Berlin",
       "2023-10-28T21:30:00",
       {"2023-10-28T22:00:00", "2023-10-28T23:00:00", "2023-10-29T00:00:00", "2023-10-29T01:00:00",
        "2023-10-29T02:00:00"}},
      {"45 * * * *",
       "Europe/Berlin",
       "2023-10-28T22:00:00",
       {"2023-10-28T22:45:00", "2023-10-28T23:45:00", "2023-10-29T00:45:00", "2023-10-29T01:45:00",
        "2023-10-29T02:45:00"}},
      {"*/15 * * * *",
       "Europe/Berlin",
       "2023-10-28T22:59:00",
       {"2023-10-28T23:00:00", "2023-10-28T23:15:00", "2023-10-28T23:30:00", "2023-10-28T23:45:00",
        "2023-10-29T00:00:00", "2023-10-29T00:15:00", "2023-10-29T00:30:00", "2023-10-29T00:45:00",
        "2023-10-29T01:00:00", "2023-10-29T01:15:00", "2023-10-29T01:30:00", "2023-10-29T01:45:00",
        "2023-10-29T02:00:00", "2023-10-29T02:15:00"}},
      {"@hourly",
       "America/New_York",
       "2026-11-01T03:30:00",
       {"2026-11-01T04:00:00", "2026-11-01T05:00:00", "2026-11-01T06:00:00",
        "2026-11-01T07:00:00"}},
      {"*/30 * * * *",
       "America/New_York",
       "2026-11-01T04:50:00",
       {"2026-11-01T05:00:00", "2026-11-01T05:30:00", "2026-11-01T06:00:00", "2026-11-01T06:30:00",
        "2026-11-01T07:00:00"}},
      {"0 */2 * * *",
       "America/New_York",
       "2026-11-01T03:30:00",  // 00 EDT, 02 EST, 04 EST
       {"2026-11-01T04:00:00", "2026-11-01T07:00:00", "2026-11-01T09:00:00"}},
      {"0 1-23/2 * * *",
       "America/New_York",
       "2026-11-01T04:30:00",  // 01 EDT, 01 EST, 03
       {"2026-11-01T05:00:00", "2026-11-01T06:00:00", "2026-11-01T08:00:00"}},
      // Half an hour repeats on Lord Howe: 01:30 and 01:45 fire twice, 01:00 and 02:00 once.
      {"*/15 * * * *",
       "Australia/Lord_Howe",
       "2026-04-04T14:20:00",
       {"2026-04-04T14:30:00", "2026-04-04T14:45:00", "2026-04-04T15:00:00", "2026-04-04T15:15:00",
        "2026-04-04T15:30:00"}},
      {"0 * * * *",
       "Australia/Lord_Howe",
       "2026-04-04T13:30:00",
       {"2026-04-04T14:00:00", "2026-04-04T15:30:00", "2026-04-04T16:30:00"}},
  });
}

// Berlin 2023-03-26: 02:00 CET jumps to 03:00 CEST at 01:00Z. US/Central 2019-03-10: 02:00 CST to
// 03:00 CDT at 08:00Z. New York 2026-03-08: 02:00 EST to 03:00 EDT at 07:00Z. Lord Howe
// 2026-10-04: 02:00 (+10:30) to 02:30 (+11) at 15:30Z on the 3rd.
TEST(CronDst, AnHourFieldOfStarOrStepSkipsTheGapWithoutAnExtraFire) {
  expect_all({
      // Dagster's hourly spring-forward scheduler test: 1 AM CST, 3 AM CDT, 4 AM CDT.
      {"@hourly",
       "US/Central",
       "2019-03-10T06:30:00",
       {"2019-03-10T07:00:00", "2019-03-10T08:00:00", "2019-03-10T09:00:00"}},
      {"45 * * * *",
       "Europe/Berlin",
       "2023-03-25T23:00:00",
       {"2023-03-25T23:45:00", "2023-03-26T00:45:00", "2023-03-26T01:45:00",
        "2023-03-26T02:45:00"}},
      {"0 * * * *",
       "Europe/Berlin",
       "2023-03-25T22:30:00",
       {"2023-03-25T23:00:00", "2023-03-26T00:00:00", "2023-03-26T01:00:00",
        "2023-03-26T02:00:00"}},
      {"*/15 * * * *",
       "Europe/Berlin",
       "2023-03-25T23:59:00",
       {"2023-03-26T00:00:00", "2023-03-26T00:15:00", "2023-03-26T00:30:00", "2023-03-26T00:45:00",
        "2023-03-26T01:00:00", "2023-03-26T01:15:00"}},
      {"30 * * * *",
       "America/New_York",
       "2026-03-08T05:00:00",
       {"2026-03-08T05:30:00", "2026-03-08T06:30:00", "2026-03-08T07:30:00"}},
      {"15,45 * * * *",
       "Australia/Lord_Howe",
       "2026-10-03T14:50:00",
       {"2026-10-03T15:15:00", "2026-10-03T15:45:00", "2026-10-03T16:15:00"}},
      {"0 * * * *",
       "Australia/Lord_Howe",
       "2026-10-03T14:00:00",
       {"2026-10-03T14:30:00", "2026-10-03T16:00:00", "2026-10-03T17:00:00"}},
  });
}

TEST(CronDst, AFixedHourInARepeatedHourFiresOnceAtTheFirstOccurrence) {
  expect_all({
      // Dagster's rows fire these at the second occurrence: 01:00Z, 01:30Z, 07:00Z, 07:30Z.
      {"0 2 * * *",
       "Europe/Berlin",
       "2023-10-27T12:00:00",
       {"2023-10-28T00:00:00", "2023-10-29T00:00:00", "2023-10-30T01:00:00"}},
      {"30 2 * * *",
       "Europe/Berlin",
       "2023-10-27T12:00:00",
       {"2023-10-28T00:30:00", "2023-10-29T00:30:00", "2023-10-30T01:30:00"}},
      {"0 2 * * 0",
       "Europe/Berlin",
       "2023-10-20T00:00:00",
       {"2023-10-22T00:00:00", "2023-10-29T00:00:00", "2023-11-05T01:00:00"}},
      {"0 1 5 * *",
       "US/Central",
       "2023-10-01T00:00:00",
       {"2023-10-05T06:00:00", "2023-11-05T06:00:00", "2023-12-05T07:00:00"}},
      {"30 1 5 * *",
       "US/Central",
       "2023-10-01T00:00:00",
       {"2023-10-05T06:30:00", "2023-11-05T06:30:00", "2023-12-05T07:30:00"}},
      // Dagster's doubled-time scheduler test (1:30 in US/Central).
      {"30 1 * * *",
       "US/Central",
       "2019-11-02T00:00:00",
       {"2019-11-02T06:30:00", "2019-11-03T06:30:00", "2019-11-04T07:30:00"}},
      {"0 1 * * 6-7",
       "US/Pacific",
       "2024-11-01T00:00:00",
       {"2024-11-02T08:00:00", "2024-11-03T08:00:00", "2024-11-09T09:00:00"}},
      {"0 2 * * 6-7",
       "Australia/Sydney",
       "2024-04-05T00:00:00",
       {"2024-04-05T15:00:00", "2024-04-06T15:00:00", "2024-04-12T16:00:00"}},
      {"30 1 * * *",
       "Australia/Lord_Howe",
       "2026-04-03T12:00:00",
       {"2026-04-03T14:30:00", "2026-04-04T14:30:00", "2026-04-05T15:00:00"}},
      // Hours next to the repeated one are unaffected.
      {"45 1 * * *",
       "Europe/Berlin",
       "2023-10-27T12:00:00",
       {"2023-10-27T23:45:00", "2023-10-28T23:45:00", "2023-10-30T00:45:00"}},
      {"0 3 * * *",
       "Europe/Berlin",
       "2023-10-27T12:00:00",
       {"2023-10-28T01:00:00", "2023-10-29T02:00:00", "2023-10-30T02:00:00"}},
      {"0 2 5 * *",
       "US/Central",
       "2023-10-01T00:00:00",
       {"2023-10-05T07:00:00", "2023-11-05T08:00:00", "2023-12-05T08:00:00"}},
      {"45 0 5 * *",
       "US/Central",
       "2023-10-01T00:00:00",
       {"2023-10-05T05:45:00", "2023-11-05T05:45:00", "2023-12-05T06:45:00"}},
      // Dagster's daily fall-back scheduler test: midnight, then the hour moves in UTC.
      {"0 0 * * *",
       "US/Central",
       "2019-11-02T12:00:00",
       {"2019-11-03T05:00:00", "2019-11-04T06:00:00", "2019-11-05T06:00:00"}},
  });
}

TEST(CronDst, AFixedHourInAGapFiresAtTheFirstInstantAfterIt) {
  expect_all({
      {"0 2 * * *",
       "Europe/Berlin",
       "2023-03-24T12:00:00",
       {"2023-03-25T01:00:00", "2023-03-26T01:00:00", "2023-03-27T00:00:00"}},
      {"30 2 * * *",
       "Europe/Berlin",
       "2023-03-24T12:00:00",
       {"2023-03-25T01:30:00", "2023-03-26T01:00:00", "2023-03-27T00:30:00"}},
      {"0 1 * * *",
       "Europe/Berlin",
       "2023-03-24T12:00:00",
       {"2023-03-25T00:00:00", "2023-03-26T00:00:00", "2023-03-26T23:00:00"}},
      {"0 3 * * *",
       "Europe/Berlin",
       "2023-03-24T12:00:00",
       {"2023-03-25T02:00:00", "2023-03-26T01:00:00", "2023-03-27T01:00:00"}},
      {"30 2 * * 0",
       "Europe/Berlin",
       "2023-03-13T00:00:00",
       {"2023-03-19T01:30:00", "2023-03-26T01:00:00", "2023-04-02T00:30:00"}},
      {"0 2 26 * *",
       "Europe/Berlin",
       "2023-02-01T00:00:00",
       {"2023-02-26T01:00:00", "2023-03-26T01:00:00", "2023-04-26T00:00:00"}},
      // Dagster's skipped-time scheduler test (2:30 in US/Central) and its daily test.
      {"30 2 * * *",
       "US/Central",
       "2019-03-09T00:00:00",
       {"2019-03-09T08:30:00", "2019-03-10T08:00:00", "2019-03-11T07:30:00"}},
      {"0 0 * * *",
       "US/Central",
       "2019-03-09T12:00:00",
       {"2019-03-10T06:00:00", "2019-03-11T05:00:00", "2019-03-12T05:00:00"}},
      {"0 2 * * 6-7",
       "US/Pacific",
       "2024-03-08T00:00:00",
       {"2024-03-09T10:00:00", "2024-03-10T10:00:00", "2024-03-16T09:00:00"}},
      {"30 2 * * 1-5",
       "Europe/Berlin",
       "2024-03-28T12:00:00",
       {"2024-03-29T01:30:00", "2024-04-01T00:30:00"}},
      // Half an hour skipped on Lord Howe: 02:00 and 02:15 fire at 02:30 (+11).
      {"0 2 * * *",
       "Australia/Lord_Howe",
       "2023-09-28T00:00:00",
       {"2023-09-28T15:30:00", "2023-09-29T15:30:00", "2023-09-30T15:30:00",
        "2023-10-01T15:00:00"}},
      {"15 2 * * *",
       "Australia/Lord_Howe",
       "2026-10-02T00:00:00",
       {"2026-10-02T15:45:00", "2026-10-03T15:30:00", "2026-10-04T15:15:00"}},
  });
}

// croniter's DST cases. Athens 2013-10-27: 04:00 EEST back to 03:00 EET at 01:00Z; 2013-03-31:
// 03:00 EET on to 04:00 EEST at 01:00Z. Warsaw 2017-03-26: 02:00 CET on to 03:00 CEST at 01:00Z;
// 2017-10-29: 03:00 CEST back to 02:00 CET at 01:00Z.
TEST(CronDst, CronitersDaylightSavingCases) {
  expect_all({
      {"*/30 * * * *",
       "Europe/Athens",
       "2013-10-26T23:00:00",
       {"2013-10-26T23:30:00", "2013-10-27T00:00:00", "2013-10-27T00:30:00", "2013-10-27T01:00:00",
        "2013-10-27T01:30:00", "2013-10-27T02:00:00"}},
      {"*/30 * * * *",
       "Europe/Athens",
       "2013-03-30T23:00:00",
       {"2013-03-30T23:30:00", "2013-03-31T00:00:00", "2013-03-31T00:30:00", "2013-03-31T01:00:00",
        "2013-03-31T01:30:00"}},
      {"0 0 * * *", "Europe/Warsaw", "2017-03-25T23:00:00", {"2017-03-26T22:00:00"}},
      {"0 * * * *", "Europe/Warsaw", "2017-03-26T00:00:00", {"2017-03-26T01:00:00"}},
      {"0 0 * * *", "Europe/Warsaw", "2017-10-28T22:00:00", {"2017-10-29T23:00:00"}},
      {"0 * * * *",
       "Europe/Warsaw",
       "2017-10-28T23:59:00",
       {"2017-10-29T00:00:00", "2017-10-29T01:00:00", "2017-10-29T02:00:00"}},
  });
}

TEST(CronDst, ZonesWhoseOffsetIsNotAWholeHourFireOnTheirOwnClock) {
  expect_all({
      {"0 * * * *",
       "Asia/Kolkata",
       "2026-02-15T18:00:00",
       {"2026-02-15T18:30:00", "2026-02-15T19:30:00", "2026-02-15T20:30:00"}},
      {"30 * * * *",
       "Asia/Kolkata",
       "2026-02-15T18:00:00",
       {"2026-02-15T19:00:00", "2026-02-15T20:00:00"}},
      {"0 * * * *",
       "Asia/Kathmandu",
       "2026-02-15T18:00:00",
       {"2026-02-15T18:15:00", "2026-02-15T19:15:00", "2026-02-15T20:15:00"}},
      {"30 * * * *",
       "Asia/Kathmandu",
       "2026-02-15T18:00:00",
       {"2026-02-15T18:45:00", "2026-02-15T19:45:00"}},
      {"0 0 * * *",
       "Asia/Kathmandu",
       "2026-02-15T00:00:00",
       {"2026-02-15T18:15:00", "2026-02-16T18:15:00"}},
  });
}

// Day of week as current croniter reads it: 7 is Sunday before a range or step applies; `N/S`
// runs from N to Saturday; `6/S` spans Saturday to Saturday, the whole week from Sunday.
// 2024-01-01 is a Monday.
TEST(CronDst, DayOfWeekStepsFromSaturdayOrSundayMeanWhatCroniterSays) {
  expect_all({
      {"0 0 * * 7/2",
       "UTC",
       "2024-01-01T00:00:00",  // Sun Tue Thu Sat
       {"2024-01-02T00:00:00", "2024-01-04T00:00:00", "2024-01-06T00:00:00", "2024-01-07T00:00:00",
        "2024-01-09T00:00:00"}},
      {"0 0 * * 6/1",
       "UTC",
       "2024-01-01T00:00:00",  // every day
       {"2024-01-02T00:00:00", "2024-01-03T00:00:00", "2024-01-04T00:00:00"}},
      {"0 0 * * sat/3",
       "UTC",
       "2024-01-01T00:00:00",  // Sun Wed Sat
       {"2024-01-03T00:00:00", "2024-01-06T00:00:00", "2024-01-07T00:00:00",
        "2024-01-10T00:00:00"}},
      {"0 0 * * 5/1",
       "UTC",
       "2024-01-01T00:00:00",  // Fri Sat, not Sunday
       {"2024-01-05T00:00:00", "2024-01-06T00:00:00", "2024-01-12T00:00:00"}},
      {"0 0 * * 1/2",
       "UTC",
       "2024-01-01T00:00:00",  // Mon Wed Fri
       {"2024-01-03T00:00:00", "2024-01-05T00:00:00", "2024-01-08T00:00:00"}},
      // Ranges reaching 7 keep Sunday, as in Dagster's weekend rows.
      {"0 0 * * 6-7",
       "Europe/Berlin",
       "2024-10-25T21:59:59",
       {"2024-10-25T22:00:00", "2024-10-26T22:00:00", "2024-11-01T23:00:00",
        "2024-11-02T23:00:00"}},
      {"0 0 * * 1-7/2",
       "UTC",
       "2024-01-01T00:00:00",  // Mon Wed Fri Sun
       {"2024-01-03T00:00:00", "2024-01-05T00:00:00", "2024-01-07T00:00:00",
        "2024-01-08T00:00:00"}},
  });
  EXPECT_EQ(il::CronSchedule::parse("0 0 * * 7/2"), il::CronSchedule::parse("0 0 * * 0/2"));
  EXPECT_EQ(il::CronSchedule::parse("0 0 * * 6/1"), il::CronSchedule::parse("0 0 * * *"));
}

}  // namespace
