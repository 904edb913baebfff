#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <sstream>

#include "interloper/partitioning.hpp"
#include "support/expect.hpp"

namespace il = interloper;
using namespace std::chrono;
using G = il::TimeGranularity;

namespace {

il::TimePoint at(const char* text) { return il::TimePoint::parse(text); }

TEST(TimePartition, NormalizesToThePeriodStart) {
  const il::TimePartition p(year{2026} / May / 20, G::MONTH);
  EXPECT_EQ(p.value(), at("2026-05-01"));
  EXPECT_EQ(p.key(), "2026-05");
  EXPECT_EQ(p.to_string(), "2026-05");
  EXPECT_EQ(p.kind(), "time");
  EXPECT_EQ(p.granularity(), G::MONTH);
  EXPECT_EQ(p.bounds(), (il::Bounds{at("2026-05-01"), at("2026-06-01")}));
  EXPECT_EQ(p, il::TimePartition(year{2026} / May / 1, G::MONTH));
  EXPECT_FALSE(p == il::TimePartition(year{2026} / May / 1, G::DAY));
  std::ostringstream out;
  out << p;
  EXPECT_EQ(out.str(), "2026-05");
}

TEST(TimePartition, DefaultsToDays) {
  const il::TimePartition p(at("2026-01-15T10:00:00"));
  EXPECT_EQ(p.granularity(), G::DAY);
  EXPECT_EQ(p.key(), "2026-01-15");
}

TEST(TimePartition, FilterIsTheHalfOpenBounds) {
  const il::Filter f = il::TimePartition(year{2026} / May / 20).filter("date");
  EXPECT_EQ(f.kind(), il::Filter::Kind::range);
  EXPECT_EQ(f.column(), "date");
  EXPECT_EQ(f.start(), at("2026-05-20"));
  EXPECT_EQ(f.end(), at("2026-05-21"));
}

TEST(TimePartition, FromKeyInfersTheGranularity) {
  EXPECT_EQ(il::TimePartition::from_key("2026-08"), il::TimePartition(at("2026-08-01"), G::MONTH));
  EXPECT_EQ(il::TimePartition::from_key("2026").granularity(), G::YEAR);
  EXPECT_EQ(il::TimePartition::from_key("2026-Q3").value(), at("2026-07-01"));
  EXPECT_EQ(il::TimePartition::from_key("2026-W21").value(), at("2026-05-18"));
  EXPECT_EQ(il::TimePartition::from_key("2026-05-20T13").value(), at("2026-05-20T13:00:00"));
  for (const char* bad : {"", "eu", "2026-13", "2026-W54", "2026-Q5", "2026-5", "2026-05-20T13:00"}) {
    IL_EXPECT_THROW_WITH(il::TimePartition::from_key(bad), std::invalid_argument,
                         "'" + std::string(bad) + "'");
  }
}

TEST(TimePartition, WindowOfOne) {
  const il::TimePartition p(year{2026} / May / 20);
  const il::TimePartitionWindow w = p.window();
  EXPECT_EQ(w.size(), 1u);
  EXPECT_EQ(w.to_string(), "2026-05-20");
  EXPECT_TRUE(w.contains(p));
  const auto any = p.as_window();
  EXPECT_EQ(any->to_string(), "2026-05-20");
  EXPECT_EQ(p.clone()->key(), "2026-05-20");
}

TEST(TimePartitionWindow, SizeBoundsAndPrinting) {
  const il::TimePartitionWindow w(year{2026} / January / 1, year{2026} / January / 7);
  EXPECT_EQ(w.size(), 7u);
  EXPECT_EQ(w.to_string(), "2026-01-01..2026-01-07");
  EXPECT_EQ(w.start(), at("2026-01-01"));
  EXPECT_EQ(w.end(), at("2026-01-07"));
  EXPECT_EQ(w.bounds(), (il::Bounds{at("2026-01-01"), at("2026-01-08")}));
  EXPECT_EQ(w.kind(), "time");
  std::ostringstream out;
  out << static_cast<const il::PartitionWindow&>(w);
  EXPECT_EQ(out.str(), "2026-01-01..2026-01-07");
  const il::Filter f = w.filter("date");
  EXPECT_EQ(f.start(), at("2026-01-01"));
  EXPECT_EQ(f.end(), at("2026-01-08"));
}

TEST(TimePartitionWindow, NormalizesEnds) {
  const il::TimePartitionWindow w(at("2026-05-20"), at("2026-07-03"), G::MONTH);
  EXPECT_EQ(w.start(), at("2026-05-01"));
  EXPECT_EQ(w.end(), at("2026-07-01"));
  EXPECT_EQ(w.size(), 3u);
  EXPECT_EQ(w.to_string(), "2026-05..2026-07");
  EXPECT_EQ(w.bounds(), (il::Bounds{at("2026-05-01"), at("2026-08-01")}));
}

TEST(TimePartitionWindow, ReversedIsRejected) {
  IL_EXPECT_THROW_WITH(il::TimePartitionWindow(at("2026-01-07"), at("2026-01-01")),
                       std::invalid_argument, "2026-01-07..2026-01-01");
  // Same period: fine even when end < start inside it.
  EXPECT_EQ(il::TimePartitionWindow(at("2026-01-20"), at("2026-01-02"), G::MONTH).size(), 1u);
}

TEST(TimePartitionWindow, IteratesOldestFirst) {
  const il::TimePartitionWindow w(at("2025-11-15"), at("2026-02-01"), G::MONTH);
  std::vector<std::string> keys;
  for (il::TimePartition p : w) keys.push_back(p.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"2025-11", "2025-12", "2026-01", "2026-02"}));
  EXPECT_EQ(w.keys(), keys);
  const auto range = w.partitions();
  EXPECT_EQ(range.size(), 4u);
  EXPECT_EQ(std::distance(range.begin(), range.end()), 4);
  EXPECT_EQ((*std::next(range.begin(), 2)).key(), "2026-01");
  static_assert(std::forward_iterator<il::TimePartitionWindow::Iterator>);
  EXPECT_TRUE(std::all_of(range.begin(), range.end(),
                          [](const il::TimePartition& p) { return p.granularity() == G::MONTH; }));
}

TEST(TimePartitionWindow, RandomAccessByIndex) {
  const il::TimePartitionWindow w(at("2026-01-01"), at("2026-12-31"));
  EXPECT_EQ(w.at(0).key(), "2026-01-01");
  EXPECT_EQ(w.at(364).key(), "2026-12-31");
  EXPECT_EQ(w.partition_at(59)->key(), "2026-03-01");
  EXPECT_EQ(w.first().key(), "2026-01-01");
  EXPECT_EQ(w.last().key(), "2026-12-31");
  EXPECT_THROW(w.at(365), std::out_of_range);
  EXPECT_THROW(static_cast<void>(w.partition_at(365)), std::out_of_range);
}

TEST(TimePartitionWindow, Contains) {
  const il::TimePartitionWindow w(at("2026-01-01"), at("2026-01-07"));
  EXPECT_TRUE(w.contains(il::TimePartition(at("2026-01-01"))));
  EXPECT_TRUE(w.contains(il::TimePartition(at("2026-01-07T23:00:00"))));
  EXPECT_FALSE(w.contains(il::TimePartition(at("2026-01-08"))));
  EXPECT_FALSE(w.contains(il::TimePartition(at("2025-12-31"))));
  EXPECT_FALSE(w.contains(il::TimePartition(at("2026-01-01"), G::MONTH)));
  const il::Partition& list = il::ListPartition("eu");
  EXPECT_FALSE(w.contains(list));
}

TEST(TimePartitionWindow, Parse) {
  EXPECT_EQ(il::TimePartitionWindow::parse("2026-01-01..2026-01-07"),
            il::TimePartitionWindow(at("2026-01-01"), at("2026-01-07")));
  EXPECT_EQ(il::TimePartitionWindow::parse("2026-05"),
            il::TimePartitionWindow(at("2026-05-01"), at("2026-05-01"), G::MONTH));
  EXPECT_EQ(il::TimePartitionWindow::parse("2020-W52..2021-W02").size(), 4u);
  EXPECT_EQ(il::TimePartitionWindow::parse("2026-05-20T22..2026-05-21T01").size(), 4u);
  for (const char* bad : {"", "..", "2026-01..2026-01-07", "2026-01-07..2026-01-01",
                          "2026-02-30..2026-03-01", "2026-01-01...2026-01-02", "eu..us"}) {
    IL_EXPECT_THROW_WITH(il::TimePartitionWindow::parse(bad), std::invalid_argument,
                         "'" + std::string(bad) + "'");
  }
  const auto w = il::TimePartitionWindow::parse("2026-Q1..2026-Q4");
  EXPECT_EQ(il::TimePartitionWindow::parse(w.to_string()), w);
}

TEST(TimePartitionWindow, CopiesAndClones) {
  const il::TimePartitionWindow w(at("2026-01-01"), at("2026-01-07"));
  const auto c = w.clone();
  EXPECT_EQ(c->to_string(), w.to_string());
  EXPECT_EQ(c->size(), 7u);
  EXPECT_EQ(c->keys().front(), "2026-01-01");
}

}  // namespace

namespace {

TEST(TimePartitionWindow, IterationAgreesWithIndexingForEveryGranularity) {
  for (G g : {G::HOUR, G::DAY, G::WEEK, G::MONTH, G::QUARTER, G::YEAR}) {
    const il::TimePartitionWindow w(at("1999-11-28T22:00:00"), g.advance(at("1999-11-28T22:00:00"), 199), g);
    ASSERT_EQ(w.size(), 200u) << g;
    std::size_t i = 0;
    for (il::TimePartition p : w) {
      ASSERT_EQ(p, w.at(i)) << g << ' ' << i;
      ++i;
    }
    EXPECT_EQ(i, w.size());
    EXPECT_EQ(w.at(199).value(), w.end());
  }
}

}  // namespace
