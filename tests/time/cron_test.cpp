#include "interloper/cron.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "support/expect.hpp"

namespace il = interloper;

namespace {

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }
il::CronSchedule cron(const char* text) { return il::CronSchedule::parse(text); }

// The UTC instant of the next fire after the UTC instant `after`.
il::TimePoint next(const char* expr, const char* after, const char* zone) {
  return cron(expr).next_fire(at(after), zone);
}

std::size_t error_position(const char* text) {
  try {
    il::CronSchedule::parse(text);
  } catch (const il::CronSyntaxError& e) {
    return e.position();
  }
  return std::string::npos;
}

TEST(Cron, FieldsListsRangesStepsAndNames) {
  const auto c = cron("5,35 9-17/4 * jan,Jul MON-fri");
  EXPECT_TRUE(c.matches(at("2026-01-05T09:05:00")));   // a Monday
  EXPECT_TRUE(c.matches(at("2026-07-03T17:35:00")));   // a Friday
  EXPECT_FALSE(c.matches(at("2026-07-03T15:35:00")));  // 15 is not in 9-17/4
  EXPECT_FALSE(c.matches(at("2026-07-04T09:05:00")));  // a Saturday
  EXPECT_FALSE(c.matches(at("2026-02-02T09:05:00")));  // February
  EXPECT_TRUE(cron("10/20 * * * *").matches(at("2026-01-01T00:50:00")));
  EXPECT_FALSE(cron("10/20 * * * *").matches(at("2026-01-01T00:20:00")));
  EXPECT_TRUE(cron("0 0 * * 7").matches(at("2026-05-24T00:00:00")));  // 7 is Sunday
  EXPECT_TRUE(cron("0 0 * * 5-7").matches(at("2026-05-24T00:00:00")));
  EXPECT_EQ(cron("0 0 * * 0"), cron("0 0 * * sun"));
  EXPECT_EQ(cron("  0   0 * * 7 "), cron("0 0 * * 0"));
  EXPECT_EQ(cron("*/1 * 1-31 * 0-6"), cron("* * * * *"));
}

TEST(Cron, Macros) {
  EXPECT_EQ(cron("@hourly"), cron("0 * * * *"));
  EXPECT_EQ(cron("@daily"), cron("0 0 * * *"));
  EXPECT_EQ(cron("@midnight"), cron("0 0 * * *"));
  EXPECT_EQ(cron("@weekly"), cron("0 0 * * 0"));
  EXPECT_EQ(cron("@monthly"), cron("0 0 1 * *"));
  EXPECT_EQ(cron("@yearly"), cron("0 0 1 1 *"));
  EXPECT_EQ(cron("@annually"), cron("0 0 1 1 *"));
  EXPECT_EQ(cron("@daily").text(), "@daily");
}

// Both day fields restricted: either may match. One of them `*` (or every value): both must.
TEST(Cron, DayOfMonthOrDayOfWeek) {
  const auto either = cron("0 0 13 * fri");
  EXPECT_TRUE(either.matches(at("2026-05-13T00:00:00")));  // a Wednesday the 13th
  EXPECT_TRUE(either.matches(at("2026-05-15T00:00:00")));  // a Friday
  EXPECT_FALSE(either.matches(at("2026-05-14T00:00:00")));
  EXPECT_TRUE(cron("0 0 */2 * 1").matches(at("2026-05-18T00:00:00")));  // Monday the 18th
  const auto all_days = cron("0 0 1-31 * 1");  // the day of month restricts nothing
  EXPECT_FALSE(all_days.matches(at("2026-05-13T00:00:00")));
  EXPECT_TRUE(all_days.matches(at("2026-05-18T00:00:00")));
  EXPECT_EQ(next("0 0 13 * fri", "2026-05-13T00:00:00", "UTC"), at("2026-05-15T00:00:00"));
}

TEST(Cron, RejectsBadFieldsNamingThem) {
  IL_EXPECT_THROW_WITH(cron("61 * * * *"), il::CronSyntaxError, "minute 61 is out of range 0-59");
  IL_EXPECT_THROW_WITH(cron("* 24 * * *"), il::CronSyntaxError, "hour 24 is out of range 0-23");
  IL_EXPECT_THROW_WITH(cron("* * 0 * *"), il::CronSyntaxError, "day of month 0 is out of range");
  IL_EXPECT_THROW_WITH(cron("* * * 13 *"), il::CronSyntaxError, "month 13 is out of range");
  IL_EXPECT_THROW_WITH(cron("* * * * 8"), il::CronSyntaxError, "day of week 8 is out of range");
  IL_EXPECT_THROW_WITH(cron("* * * foo *"), il::CronSyntaxError, "unknown month 'foo'");
  IL_EXPECT_THROW_WITH(cron("5-3 * * * *"), il::CronSyntaxError, "range '5-3' is backwards");
  IL_EXPECT_THROW_WITH(cron("*/0 * * * *"), il::CronSyntaxError, "step must not be 0");
  IL_EXPECT_THROW_WITH(cron("1,,2 * * * *"), il::CronSyntaxError, "empty item");
  IL_EXPECT_THROW_WITH(cron("* * * *"), il::CronSyntaxError, "expected 5 fields");
  IL_EXPECT_THROW_WITH(cron("* * * * * *"), il::CronSyntaxError, "got 6");
  IL_EXPECT_THROW_WITH(cron(""), il::CronSyntaxError, "got 0");
  IL_EXPECT_THROW_WITH(cron("@reboot"), il::CronSyntaxError, "unknown macro '@reboot'");
  IL_EXPECT_THROW_WITH(cron("1x * * * *"), il::CronSyntaxError, "'1x' is not a number");
  IL_EXPECT_THROW_WITH(cron("-1 * * * *"), il::CronSyntaxError, "minute value missing");
  IL_EXPECT_THROW_WITH(cron("* * * * mon/x"), il::CronSyntaxError, "step 'x' is not a number");
  IL_EXPECT_THROW_WITH(cron("61 * * * *"), il::CronSyntaxError, "'61 * * * *'");
  // Positions point at the bad field (or item), for file:line:col messages.
  EXPECT_EQ(error_position("61 * * * *"), 0u);
  EXPECT_EQ(error_position("0 3 * * funday"), 8u);
  EXPECT_EQ(error_position("0 1,2,99 * * *"), 6u);
  EXPECT_EQ(error_position("  0 3 31 2 *"), 6u);
}

TEST(Cron, RejectsExpressionsThatNeverFire) {
  IL_EXPECT_THROW_WITH(cron("* * 31 2 *"), il::CronSyntaxError, "never fires");
  IL_EXPECT_THROW_WITH(cron("0 0 30 2 *"), il::CronSyntaxError, "never fires");
  IL_EXPECT_THROW_WITH(cron("0 0 31 apr,jun,sep,nov *"), il::CronSyntaxError, "never fires");
  // The 29th of February fires in leap years; a weekday makes any day possible.
  EXPECT_EQ(next("0 0 29 2 *", "2097-01-01T00:00:00", "UTC"), at("2104-02-29T00:00:00"));
  EXPECT_EQ(next("0 0 31 2 mon", "2026-02-01T00:00:00", "UTC"), at("2026-02-02T00:00:00"));
}

TEST(Cron, NextFireByFieldArithmetic) {
  EXPECT_EQ(next("0 3 * * *", "2026-05-20T02:59:59", "UTC"), at("2026-05-20T03:00:00"));
  EXPECT_EQ(next("0 3 * * *", "2026-05-20T03:00:00", "UTC"), at("2026-05-21T03:00:00"));
  EXPECT_EQ(next("59 23 31 12 *", "2026-12-31T23:59:00", "UTC"), at("2027-12-31T23:59:00"));
  EXPECT_EQ(next("0 0 1 * *", "2026-01-31T12:00:00", "UTC"), at("2026-02-01T00:00:00"));
  EXPECT_EQ(next("*/7 * * * *", "2026-01-01T00:56:00", "UTC"), at("2026-01-01T01:00:00"));
  EXPECT_EQ(next("0 12 * * sat", "2026-05-20T00:00:00", "UTC"), at("2026-05-23T12:00:00"));
  EXPECT_EQ(next("0 3 * * *", "2026-05-20T02:00:00", "Asia/Kathmandu"),
            at("2026-05-20T21:15:00"));  // 03:00 at +05:45
}

TEST(Cron, WallTimesSkippedByDaylightSavingFireAtTheEndOfTheGap) {
  // Berlin, 2026-03-29: 02:00 CET jumps to 03:00 CEST at 01:00Z.
  EXPECT_EQ(next("30 2 * * *", "2026-03-28T12:00:00", "Europe/Berlin"), at("2026-03-29T01:00:00"));
  EXPECT_EQ(next("30 2 * * *", "2026-03-29T01:00:00", "Europe/Berlin"), at("2026-03-30T00:30:00"));
  // Every skipped quarter of a fixed hour shares the one instant after the gap: one fire.
  EXPECT_EQ(next("*/15 2 * * *", "2026-03-29T00:50:00", "Europe/Berlin"),
            at("2026-03-29T01:00:00"));
  EXPECT_EQ(next("*/15 2 * * *", "2026-03-29T01:00:00", "Europe/Berlin"),
            at("2026-03-30T00:00:00"));
  // With every hour, skipped wall times do not fire: 03:00 is the next on the clock.
  EXPECT_EQ(next("*/15 * * * *", "2026-03-29T00:50:00", "Europe/Berlin"),
            at("2026-03-29T01:00:00"));
  EXPECT_EQ(next("30 * * * *", "2026-03-29T00:30:00", "Europe/Berlin"), at("2026-03-29T01:30:00"));
  EXPECT_EQ(next("*/15 * * * *", "2026-03-29T01:00:00", "Europe/Berlin"),
            at("2026-03-29T01:15:00"));
  // Lord Howe moves its clocks by half an hour: 02:00 becomes 02:30 on 2026-10-04 (15:30Z).
  EXPECT_EQ(next("15 2 * * *", "2026-10-03T00:00:00", "Australia/Lord_Howe"),
            at("2026-10-03T15:30:00"));
}

TEST(Cron, WallTimesRepeatedByDaylightSavingFireOnce) {
  // Berlin, 2026-10-25: 03:00 CEST goes back to 02:00 CET at 01:00Z; 02:30 happens at 00:30Z
  // and at 01:30Z and fires at the first.
  EXPECT_EQ(next("30 2 * * *", "2026-10-24T12:00:00", "Europe/Berlin"), at("2026-10-25T00:30:00"));
  EXPECT_EQ(next("30 2 * * *", "2026-10-25T00:30:00", "Europe/Berlin"), at("2026-10-26T01:30:00"));
  // A fixed hour's wall times do not fire again in the second pass through 02:00-03:00.
  EXPECT_EQ(next("*/20 2 * * *", "2026-10-25T01:10:00", "Europe/Berlin"),
            at("2026-10-26T01:00:00"));
  // With every hour, the clock is followed through both passes: 02:00 and 02:20 CET come round.
  EXPECT_EQ(next("*/20 * * * *", "2026-10-25T00:50:00", "Europe/Berlin"),
            at("2026-10-25T01:00:00"));
  EXPECT_EQ(next("*/20 * * * *", "2026-10-25T01:10:00", "Europe/Berlin"),
            at("2026-10-25T01:20:00"));
  // New York, 2026-11-01: 01:30 fires at 05:30Z (EDT), not again at 06:30Z (EST).
  EXPECT_EQ(next("30 1 * * *", "2026-11-01T05:30:00", "America/New_York"),
            at("2026-11-02T06:30:00"));
}

TEST(Cron, UnknownZone) {
  IL_EXPECT_THROW_WITH(cron("@daily").next_fire(at("2026-05-20"), "Mars/Olympus_Mons"),
                       std::invalid_argument, "unknown time zone 'Mars/Olympus_Mons'");
}

// ---- The oracle: tests/time/cron_oracle.py ----

const std::vector<std::string> kOracleZones = {
    "UTC",
    "Europe/Berlin",
    "America/New_York",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "America/St_Johns",
    "Europe/Dublin",
    "Africa/Casablanca",
    "America/Santiago",
    "Asia/Tehran",
    "America/Havana",
    "Asia/Kathmandu",
};

std::string run_oracle(int cases, int seed) {
  std::string command = "/usr/bin/python3 " IL_TEST_SOURCE_DIR "/tests/time/cron_oracle.py " +
                        std::to_string(cases) + " " + std::to_string(seed);
  for (const std::string& z : kOracleZones) command += " " + z;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::string out;
  char buf[1 << 16];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0) out.append(buf, n);
  return out;
}

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

std::string utc(std::int64_t s) { return il::TimePoint::from_epoch_seconds(s).to_string() + "Z"; }

// Thousands of random expressions, zones and instants near DST changes from 1975 to 2099, each
// followed through three successive fires, against a brute-force walk of wall-clock days.
TEST(Cron, AgreesWithABruteForceOracleAroundDaylightSavingChanges) {
  const std::string out = run_oracle(8000, 20260329);
  ASSERT_FALSE(out.empty()) << "running tests/time/cron_oracle.py printed nothing";
  std::istringstream in(out);
  std::string line;
  std::size_t fires = 0, rejected = 0, croniter_disagrees = 0, mismatches = 0, utc_cases = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = split_tabs(line);
    if (f[0] == "X") {
      ++croniter_disagrees;
      std::cout << "croniter disagrees with the brute-force oracle: " << f[1] << '\n';
      continue;
    }
    if (f[0] == "N") {
      ++rejected;
      EXPECT_THROW(il::CronSchedule::parse(f[1]), il::CronSyntaxError) << f[1];
      continue;
    }
    ASSERT_EQ(f.size(), 7u) << line;
    const il::CronSchedule c = il::CronSchedule::parse(f[1]);
    utc_cases += f[2] == "UTC";
    std::int64_t after = std::stoll(f[3]);
    for (int k = 0; k < 3; ++k) {
      const std::int64_t expected = std::stoll(f[4 + k]);
      const std::int64_t got =
          c.next_fire(il::TimePoint::from_epoch_seconds(after), f[2]).epoch_seconds();
      ++fires;
      if (got != expected && ++mismatches <= 20) {
        ADD_FAILURE() << "'" << f[1] << "' in " << f[2] << " after " << utc(after) << ": got "
                      << utc(got) << ", the oracle says " << utc(expected);
      }
      after = expected;
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << fires << " fires";
  EXPECT_GT(fires, 20000u);
  EXPECT_GT(rejected, 50u);
  // croniter checks the UTC cases independently; it is known to skip some fires after short
  // months, so it may disagree with the brute-force walk in a few cases, never in many.
  EXPECT_GT(utc_cases, 500u);
  EXPECT_LT(croniter_disagrees * 50, utc_cases);
}

}  // namespace
