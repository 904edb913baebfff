// Every zone conversion from 1900 to 2100 agrees with Python's zoneinfo: tests/time/
// zone_oracle.py prints, for 40 zones, instants and civil times around each offset change (the
// stored ones and those the POSIX rule at the end of each file produces after 2037) and random
// ones in between, together with what zoneinfo makes of them.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "interloper/time.hpp"

namespace il = interloper;

namespace {

const std::vector<std::string> kZones = {
    "Europe/Berlin",      "Europe/London",       "Europe/Dublin",
    "Europe/Moscow",      "Europe/Lisbon",       "Europe/Chisinau",
    "Atlantic/Azores",    "America/New_York",    "America/Chicago",
    "America/Denver",     "America/Los_Angeles", "America/Phoenix",
    "America/St_Johns",   "America/Sao_Paulo",   "America/Santiago",
    "America/Havana",     "America/Nuuk",        "America/Scoresbysund",
    "America/Asuncion",   "America/Mexico_City", "America/Caracas",
    "Asia/Kathmandu",     "Asia/Kolkata",        "Asia/Tehran",
    "Asia/Jerusalem",     "Asia/Gaza",           "Asia/Tokyo",
    "Asia/Shanghai",      "Asia/Dhaka",          "Australia/Lord_Howe",
    "Australia/Sydney",   "Australia/Adelaide",  "Australia/Eucla",
    "Pacific/Chatham",    "Pacific/Auckland",    "Pacific/Apia",
    "Pacific/Kiritimati", "Africa/Casablanca",   "Africa/Cairo",
    "Antarctica/Troll",
};

std::string oracle_output() {
  std::string command = "/usr/bin/python3 " IL_TEST_SOURCE_DIR "/tests/time/zone_oracle.py";
  for (const std::string& z : kZones) command += " " + z;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::string out;
  char buf[1 << 16];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe.get())) > 0) out.append(buf, n);
  return out;
}

std::string text(std::int64_t s) { return il::TimePoint::from_epoch_seconds(s).to_string(); }

const char* kind_name(il::LocalTime::Kind k) {
  switch (k) {
    case il::LocalTime::Kind::skipped:
      return "skipped";
    case il::LocalTime::Kind::repeated:
      return "repeated";
    default:
      return "unique";
  }
}

constexpr std::int64_t k2038 = 2147483648;  // 2038-01-19T03:14:08Z

TEST(ZoneOracle, AgreesWithZoneinfoFrom1900To2100) {
  const std::string out = oracle_output();
  ASSERT_FALSE(out.empty()) << "running tests/time/zone_oracle.py printed nothing";
  std::istringstream in(out);
  std::string line;
  std::size_t probes = 0, after_2038 = 0, gaps = 0, repeats = 0, mismatches = 0;
  std::set<std::string> zones_seen;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string tag, zone;
    fields >> tag >> zone;
    zones_seen.insert(zone);
    ++probes;
    if (tag == "U") {
      std::int64_t utc = 0, local = 0;
      fields >> utc >> local;
      if (utc >= k2038) ++after_2038;
      const il::TimePoint got = il::to_local(il::TimePoint::from_epoch_seconds(utc), zone);
      if (got.epoch_seconds() != local && ++mismatches <= 20) {
        ADD_FAILURE() << zone << ": to_local(" << text(utc) << "Z) is " << got << ", zoneinfo says "
                      << text(local);
      }
    } else {
      ASSERT_EQ(tag, "L") << line;
      std::int64_t civil = 0, first = 0, second = 0;
      std::string kind;
      fields >> civil >> kind >> first >> second;
      if (civil >= k2038) ++after_2038;
      gaps += kind == "skipped";
      repeats += kind == "repeated";
      const il::LocalTime got = il::from_local(il::TimePoint::from_epoch_seconds(civil), zone);
      if ((kind != kind_name(got.kind) || got.first.epoch_seconds() != first ||
           got.second.epoch_seconds() != second) &&
          ++mismatches <= 20) {
        ADD_FAILURE() << zone << ": from_local(" << text(civil) << ") is " << kind_name(got.kind)
                      << " " << got.first << "Z/" << got.second << "Z, zoneinfo says " << kind
                      << " " << text(first) << "Z/" << text(second) << "Z";
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << probes << " probes";
  EXPECT_EQ(zones_seen, std::set<std::string>(kZones.begin(), kZones.end()));
  // The oracle really went around DST changes, including those the rule yields after 2037.
  EXPECT_GT(probes, 100000u);
  EXPECT_GT(after_2038, 20000u);
  EXPECT_GT(gaps, 5000u);
  EXPECT_GT(repeats, 5000u);
}

// The case that used to fail: July 2039 in New York is daylight time, like every July.
TEST(ZoneOracle, DaylightTimeContinuesAfter2037) {
  EXPECT_EQ(il::to_local(il::TimePoint::parse("2039-07-01T03:30:00"), "America/New_York"),
            il::TimePoint::parse("2039-06-30T23:30:00"));
  EXPECT_EQ(il::from_local(il::TimePoint::parse("2099-03-08T02:30:00"), "America/New_York").kind,
            il::LocalTime::Kind::skipped);
  EXPECT_EQ(il::from_local(il::TimePoint::parse("2099-10-25T02:30:00"), "Europe/Berlin").kind,
            il::LocalTime::Kind::repeated);
}

}  // namespace
