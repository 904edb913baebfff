// MemoryDestination (through the contract suite), split_by_partition and row slicing.
#include <gtest/gtest.h>

#include <chrono>

#include "destination_contract.hpp"
#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"

IL_INSTANTIATE_DESTINATION_CONTRACT(Memory, [](const std::string&) {
  return std::make_shared<interloper::MemoryDestination>();
});

namespace {

namespace il = interloper;
using namespace std::chrono;

TEST(SplitByPartition, TimeWindowByArithmeticIncludingIsoStrings) {
  il::TimePartitionConfig config("date", {.allow_window = true});
  il::DatasetRef ref{"s", "a", &config};
  il::Table t;
  t.append({{"date", "2026-01-03"}, {"n", 1}});
  t.append({{"date", "2026-01-01T23:00:00"}, {"n", 2}});
  t.append({{"date", "2026-01-03"}, {"n", 3}});
  il::TimePartitionWindow w(year{2026} / 1 / 1, year{2026} / 1 / 3);
  auto parts = il::split_by_partition(ref, w, t);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].num_rows(), 1u);
  EXPECT_EQ(parts[1].num_rows(), 0u);
  EXPECT_EQ(parts[1].schema(), t.schema());
  EXPECT_EQ(parts[2].num_rows(), 2u);
  EXPECT_EQ(parts[2].at(1, "n"), il::Value(3));
}

TEST(SplitByPartition, ListWindowByKeyAndErrorsNameTheColumn) {
  il::ListPartitionConfig config("region", {"eu", "us", "apac"}, true);
  il::DatasetRef ref{"s", "sales", &config};
  il::Table t;
  t.append({{"region", "us"}, {"n", 1}});
  t.append({{"region", "eu"}, {"n", 2}});
  auto w = config.window("eu", "us");
  auto parts = il::split_by_partition(ref, w, t);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].at(0, "n"), il::Value(2));
  EXPECT_EQ(parts[1].at(0, "n"), il::Value(1));

  il::Table apac;
  apac.append({{"region", "apac"}});
  try {
    il::split_by_partition(ref, w, apac);
    FAIL();
  } catch (const il::DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("apac"), std::string::npos) << e.what();
  }
  il::Table other;
  other.append({{"country", "fr"}});
  try {
    il::split_by_partition(ref, w, other);
    FAIL();
  } catch (const il::DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("'region'"), std::string::npos) << e.what();
  }
}

TEST(SplitByPartition, UnpartitionedDatasetIsRefused) {
  il::DatasetRef ref{"s", "a", nullptr};
  il::TimePartitionWindow w(year{2026} / 1 / 1, year{2026} / 1 / 1);
  EXPECT_THROW(il::split_by_partition(ref, w, il::Table()), il::DestinationError);
}

TEST(FilterApply, RangeUsesHalfOpenBoundsOverDatesTimestampsAndIsoStrings) {
  il::Table t;
  t.append({{"at", sys_seconds(sys_days(year{2026} / 1 / 1))}});
  t.append({{"at", sys_seconds(sys_days(year{2026} / 1 / 31) + hours(23))}});
  t.append({{"at", sys_seconds(sys_days(year{2026} / 2 / 1))}});
  t.append({{"at", nullptr}});
  il::TimePartition jan(year{2026} / 1 / 5, il::TimeGranularity::MONTH);
  EXPECT_EQ(jan.slice(t, "at").num_rows(), 2u);

  il::Table text;
  text.append({{"day", "2026-01-31"}});
  text.append({{"day", "2026-02-01"}});
  text.append({{"day", "not a date"}});
  EXPECT_EQ(jan.slice(text, "day").num_rows(), 1u);
  EXPECT_THROW(jan.slice(text, "missing"), il::DataError);
}

TEST(FilterApply, MembershipMatchesStringValues) {
  il::Table t;
  t.append({{"region", "eu"}});
  t.append({{"region", "us"}});
  t.append({{"region", "apac"}});
  il::Filter f = il::Filter::membership("region", {"eu", "apac"});
  il::Table kept = f.apply(t);
  ASSERT_EQ(kept.num_rows(), 2u);
  EXPECT_EQ(kept.at(1, "region"), il::Value("apac"));
}

TEST(MemoryDestination, PartitionedWriteWithoutWindowIsRefused) {
  il::MemoryDestination destination;
  il::TimePartitionConfig config("date");
  il::DatasetRef ref{"s", "a", &config};
  EXPECT_THROW(destination.write(ref, nullptr, il::Table()), il::DestinationError);
  EXPECT_EQ(destination.url(), "memory://");
}

TEST(MemoryDestination, DailyWriteOverMonthlySlotKeepsTheRestOfTheMonth) {
  il::MemoryDestination destination;
  il::TimePartitionConfig config("date", {.allow_window = true});
  il::DatasetRef ref{"s", "a", &config};
  il::Table month;
  for (int d : {1, 10, 20}) month.append({{"date", year{2026} / 1 / d}, {"v", d}});
  il::TimePartitionWindow jan(year{2026} / 1 / 1, year{2026} / 1 / 1, il::TimeGranularity::MONTH);
  destination.write(ref, &jan, month);
  il::Table tenth;
  tenth.append({{"date", year{2026} / 1 / 10}, {"v", 100}});
  il::TimePartitionWindow days(year{2026} / 1 / 5, year{2026} / 1 / 12);
  destination.write(ref, &days, tenth);
  il::Table back = destination.read(ref, &jan);
  ASSERT_EQ(back.num_rows(), 3u);
  EXPECT_EQ(back.at(0, "v"), il::Value(1));
  EXPECT_EQ(back.at(1, "v"), il::Value(100));
  EXPECT_EQ(back.at(2, "v"), il::Value(20));
}

TEST(MemoryDestination, PartitionsWrittenEmptyShareOneSlotAndStillReadAsWritten) {
  il::MemoryDestination destination;
  il::TimePartitionConfig config("date", {.allow_window = true});
  il::DatasetRef ref{"s", "a", &config};
  // Day by day, newest first, as a backfill writes them: 30 empty partitions.
  for (int d = 30; d >= 1; --d) {
    il::TimePartitionWindow day(year{2026} / 1 / d, year{2026} / 1 / d);
    destination.write(ref, &day, il::Table());
  }
  il::TimePartitionWindow month(year{2026} / 1 / 1, year{2026} / 1 / 31);
  std::vector<il::PartitionCount> counts = destination.partition_counts(ref, month);
  ASSERT_EQ(counts.size(), 31u);
  for (int d = 0; d < 30; ++d) {
    EXPECT_TRUE(counts[d].written) << counts[d].key;
    EXPECT_EQ(counts[d].rows, 0);
  }
  EXPECT_FALSE(counts[30].written);  // never written stays missing

  // A partition in the middle gets rows: its neighbours stay written and empty.
  il::Table rows;
  rows.append({{"date", year{2026} / 1 / 15}, {"v", 1}});
  il::TimePartitionWindow fifteenth(year{2026} / 1 / 15, year{2026} / 1 / 15);
  destination.write(ref, &fifteenth, rows);
  counts = destination.partition_counts(ref, month);
  EXPECT_EQ(counts[14].rows, 1);
  EXPECT_TRUE(counts[13].written);
  EXPECT_TRUE(counts[15].written);
  EXPECT_EQ(counts[13].rows + counts[15].rows, 0);
  EXPECT_EQ(destination.read(ref, &month).num_rows(), 1u);
}

}  // namespace
