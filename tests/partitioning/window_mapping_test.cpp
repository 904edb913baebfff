// Mappings a dependency declares: offsets and windows counted in upstream partitions, every
// partition, and the checks on a dependency of an asset on itself.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "interloper/mapping.hpp"
#include "interloper/partitioning.hpp"
#include "support/expect.hpp"

namespace il = interloper;
using namespace std::chrono;

namespace {

using G = il::TimeGranularity;
const std::vector<G> kAll = {G::HOUR, G::DAY, G::WEEK, G::MONTH, G::QUARTER, G::YEAR};

il::TimePartitionConfig config(G g, std::optional<il::TimePoint> start = std::nullopt) {
  return il::TimePartitionConfig("date", {.granularity = g, .allow_window = true, .start = start});
}

std::string read(const il::PartitionConfig& up, const il::PartitionConfig& down,
                 const il::DepMapping& m, std::string_view window) {
  const auto mapping = il::PartitionMapping::between(&up, &down, m);
  std::unique_ptr<il::PartitionWindow> w =
      mapping.upstream_window(*down.read_window(std::string(window)));
  return w == nullptr ? "nothing" : w->to_string();
}

TEST(DepMapping, ReadsAndPrintsWindowTexts) {
  EXPECT_EQ(il::DepMapping::parse_window("-6..0"), il::DepMapping::window(-6, 0));
  EXPECT_EQ(il::DepMapping::parse_window("-1"), il::DepMapping::offset(-1));
  EXPECT_EQ(il::DepMapping::parse_window("+2..3"), il::DepMapping::window(2, 3));
  EXPECT_EQ(il::DepMapping::offset(-1).to_string(), "offset -1");
  EXPECT_EQ(il::DepMapping::window(-6, 0).to_string(), "window -6..0");
  EXPECT_EQ(il::DepMapping::all().to_string(), "all");
  EXPECT_EQ(il::DepMapping().to_string(), "overlap");
  EXPECT_EQ(il::DepMapping::window(-6, 0).to_definition(), R"({"window":"-6..0"})");
  EXPECT_EQ(il::DepMapping::offset(-1).to_definition(), R"({"offset":-1})");
  EXPECT_EQ(il::DepMapping::all().to_definition(), R"({"all":true})");
  for (const char* bad : {"", "..", "-6..", "..0", "a..b", "1.5", "-6...0", "0..-6", "--1"}) {
    EXPECT_THROW(il::DepMapping::parse_window(bad), std::invalid_argument) << bad;
  }
  IL_EXPECT_THROW_WITH(il::DepMapping::parse_window("x..1"), std::invalid_argument, "'x..1'");
  IL_EXPECT_THROW_WITH(il::DepMapping::parse_window("0..-6"), std::invalid_argument,
                       "runs backwards");
}

// On every pair of granularities an offset K reads the overlap with both ends moved K upstream
// periods, and a window A..B its first end moved A and its last B.
TEST(WindowMapping, MovesTheOverlapOnEveryGranularityPair) {
  const il::TimePoint at = il::TimePoint(year{2027} / January / 1);  // a year end
  for (G ug : kAll) {
    for (G dg : kAll) {
      const auto up = config(ug);
      const auto down = config(dg);
      const std::string key = dg.format(at);
      const auto overlap = il::PartitionMapping::between(&up, &down).upstream_window(
          *down.read_window(key));
      const il::TimePartitionWindow o = *overlap->as_time_window();
      const il::TimePartitionWindow before(ug.advance(o.start(), -1), ug.advance(o.end(), -1), ug);
      EXPECT_EQ(read(up, down, il::DepMapping::offset(-1), key), before.to_string())
          << ug.name() << " <- " << dg.name();
      const il::TimePartitionWindow week(ug.advance(o.start(), -6), o.end(), ug);
      EXPECT_EQ(read(up, down, il::DepMapping::window(-6, 0), key), week.to_string())
          << ug.name() << " <- " << dg.name();
      const il::TimePartitionWindow ahead(ug.advance(o.start(), 1), ug.advance(o.end(), 2), ug);
      EXPECT_EQ(read(up, down, il::DepMapping::window(1, 2), key), ahead.to_string());
    }
  }
}

TEST(WindowMapping, CrossesMonthAndYearEnds) {
  const auto day = config(G::DAY), hour = config(G::HOUR), week = config(G::WEEK);
  const auto month = config(G::MONTH), quarter = config(G::QUARTER), years = config(G::YEAR);
  const auto yesterday = il::DepMapping::offset(-1);
  EXPECT_EQ(read(day, day, yesterday, "2027-01-01"), "2026-12-31");
  EXPECT_EQ(read(day, day, yesterday, "2026-03-01"), "2026-02-28");
  EXPECT_EQ(read(day, day, yesterday, "2028-03-01"), "2028-02-29");
  EXPECT_EQ(read(hour, hour, yesterday, "2027-01-01T00"), "2026-12-31T23");
  EXPECT_EQ(read(week, week, yesterday, "2027-W01"), "2026-W53");
  EXPECT_EQ(read(month, month, yesterday, "2027-01"), "2026-12");
  EXPECT_EQ(read(quarter, quarter, yesterday, "2027-Q1"), "2026-Q4");
  EXPECT_EQ(read(years, years, yesterday, "2027"), "2026");
  EXPECT_EQ(read(day, day, il::DepMapping::window(-6, 0), "2026-11-03"),
            "2026-10-28..2026-11-03");
  // A month reading the days of the month before.
  EXPECT_EQ(read(day, month, il::DepMapping::window(-31, -31), "2026-03"),
            "2026-01-29..2026-02-28");
  // A day reading last month.
  EXPECT_EQ(read(month, day, yesterday, "2027-01-15"), "2026-12");
  // Hours of the previous day.
  EXPECT_EQ(read(hour, day, il::DepMapping::window(-24, -24), "2026-11-03"),
            "2026-11-02T00..2026-11-02T23");
}

TEST(WindowMapping, IsClampedToTheUpstreamStart) {
  const auto day = config(G::DAY, year{2026} / November / 1);
  EXPECT_EQ(read(day, day, il::DepMapping::offset(-1), "2026-11-01"), "nothing");
  EXPECT_EQ(read(day, day, il::DepMapping::offset(-1), "2026-11-02"), "2026-11-01");
  EXPECT_EQ(read(day, day, il::DepMapping::window(-6, 0), "2026-11-03"),
            "2026-11-01..2026-11-03");
  const auto hour = config(G::HOUR, year{2026} / November / 1);
  EXPECT_EQ(read(hour, config(G::MONTH), il::DepMapping::offset(-1), "2026-11"),
            "2026-11-01T00..2026-11-30T22");
}

// Index arithmetic over spans agrees with itself in both directions, for every pair.
TEST(WindowMapping, SpansGoBothWaysOnEveryPair) {
  const il::TimePoint from = il::TimePoint(year{2026} / October / 1);
  const il::TimePoint to = il::TimePoint(year{2027} / March / 31);
  for (G ug : {G::DAY, G::WEEK, G::MONTH, G::QUARTER}) {
    for (G dg : {G::DAY, G::WEEK, G::MONTH, G::QUARTER}) {
      const auto up_config = config(ug), down_config = config(dg);
      const il::PartitionSpan up(std::make_shared<il::TimePartitionWindow>(from, to, ug));
      const il::PartitionSpan down(std::make_shared<il::TimePartitionWindow>(from, to, dg));
      for (const auto& m : {il::DepMapping::offset(-1), il::DepMapping::window(-6, 0),
                            il::DepMapping::window(1, 3)}) {
        const auto mapping = il::PartitionMapping::between(&up_config, &down_config, m);
        for (std::size_t d = 0; d < down.size(); ++d) {
          const auto reads = mapping.upstream_of(down, {d, d}, up);
          for (std::size_t u = 0; u < up.size(); ++u) {
            const bool read = reads && reads->first <= u && u <= reads->last;
            const auto readers = mapping.downstream_of(up, {u, u}, down);
            const bool reader = readers && readers->first <= d && d <= readers->last;
            ASSERT_EQ(read, reader) << ug.name() << " <- " << dg.name() << " " << m.to_string()
                                    << " d=" << d << " u=" << u;
          }
        }
      }
    }
  }
}

TEST(WindowMapping, GrowsAPlansShareAndFindsWhatLiesOutside) {
  const auto day = config(G::DAY, year{2026} / January / 1);
  const auto week = il::PartitionMapping::between(&day, &day, il::DepMapping::window(-6, 0));
  const auto share = il::TimePartitionWindow::parse("2026-11-01..2026-11-07");
  EXPECT_EQ(week.grown_share(share, share, false)->to_string(), "2026-10-26..2026-11-07");
  // Reading itself, an asset grows back to its start.
  const auto self = il::PartitionMapping::between(&day, &day, il::DepMapping::offset(-1));
  EXPECT_EQ(self.grown_share(share, share, true)->to_string(), "2026-01-01..2026-11-07");
  EXPECT_EQ(il::PartitionMapping::between(&day, &day).grown_share(share, share, false), nullptr);
  const auto outside = il::PartitionMapping::outside(
      il::TimePartitionWindow::parse("2026-10-26..2026-11-09"), share);
  ASSERT_EQ(outside.size(), 2u);
  EXPECT_EQ(outside[0]->to_string(), "2026-10-26..2026-10-31");
  EXPECT_EQ(outside[1]->to_string(), "2026-11-08..2026-11-09");
}

TEST(DepMappingRefusal, NamesWhatCannotBeMapped) {
  const auto day = config(G::DAY);
  const il::ListPartitionConfig regions("region", {"eu", "us"});
  EXPECT_EQ(il::PartitionMapping::refusal(&day, &day, il::DepMapping::offset(-1), true),
            std::nullopt);
  EXPECT_EQ(il::PartitionMapping::refusal(&day, &day, il::DepMapping::window(-7, -1), true),
            std::nullopt);
  for (const auto& m : {il::DepMapping::offset(0), il::DepMapping::window(-6, 0),
                        il::DepMapping(), il::DepMapping::all()}) {
    EXPECT_NE(il::PartitionMapping::refusal(&day, &day, m, true)->find("cycle"),
              std::string::npos)
        << m.to_string();
  }
  EXPECT_EQ(*il::PartitionMapping::refusal(&regions, &regions, il::DepMapping::offset(-1), false),
            "offset -1 counts periods of time: both assets must be partitioned by time");
  EXPECT_NE(il::PartitionMapping::refusal(nullptr, &day, il::DepMapping::offset(-1), false),
            std::nullopt);
  EXPECT_EQ(il::PartitionMapping::refusal(&regions, &day, il::DepMapping::all(), false),
            std::nullopt);
  EXPECT_TRUE(il::PartitionMapping::between(&day, &day, il::DepMapping::all()).reads_whole());
}

}  // namespace
