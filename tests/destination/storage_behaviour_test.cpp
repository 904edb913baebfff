// Behaviour shared by the on-disk destinations (files as JSON lines and CSV, SQLite), checked
// directly against real storage in a temporary directory.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"

namespace interloper {
namespace {

using testing::at;
using testing::day;
using testing::TempDir;

struct JsonFiles {
  static std::unique_ptr<Destination> open(const TempDir& dir) {
    return std::make_unique<FileDestination>(dir / "files", FileDestination::Format::jsonl);
  }
};
struct CsvFiles {
  static std::unique_ptr<Destination> open(const TempDir& dir) {
    return std::make_unique<FileDestination>(dir / "files", FileDestination::Format::csv);
  }
};
struct Sqlite {
  static std::unique_ptr<Destination> open(const TempDir& dir) {
    return std::make_unique<SqliteDestination>(dir / "db/warehouse.db");
  }
};

template <typename Kind>
class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override { destination = Kind::open(dir); }
  void reopen() { destination = Kind::open(dir); }

  TempDir dir;
  std::unique_ptr<Destination> destination;
  TimePartitionConfig daily{"date", {.granularity = TimeGranularity::DAY, .allow_window = true}};
  TimePartitionConfig monthly{"date",
                              {.granularity = TimeGranularity::MONTH, .allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
  DatasetRef monthly_stats{"ads", "monthly", &monthly};
};

using Kinds = ::testing::Types<JsonFiles, CsvFiles, Sqlite>;
TYPED_TEST_SUITE(StorageTest, Kinds);

Table clicks(std::initializer_list<std::pair<std::chrono::year_month_day, int>> rows) {
  Table t;
  for (const auto& [d, n] : rows) t.append({{"date", d}, {"clicks", n}});
  return t;
}

TYPED_TEST(StorageTest, WindowRoundTripsInWindowOrder) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 3));
  // Rows arrive out of partition order; reads give partition order, input order within.
  Table rows = clicks(
      {{day(2026, 1, 3), 1}, {day(2026, 1, 1), 2}, {day(2026, 1, 3), 3}, {day(2026, 1, 1), 4}});
  EXPECT_EQ(this->destination->write(this->stats, &window, rows), 4);
  Table expected = clicks(
      {{day(2026, 1, 1), 2}, {day(2026, 1, 1), 4}, {day(2026, 1, 3), 1}, {day(2026, 1, 3), 3}});
  EXPECT_EQ(this->destination->read(this->stats, &window), expected);
  this->reopen();
  EXPECT_EQ(this->destination->read(this->stats, &window), expected);

  TimePartition first(day(2026, 1, 1));
  TimePartition second(day(2026, 1, 2));
  EXPECT_EQ(this->destination->row_count(this->stats, &first), 2);
  EXPECT_EQ(this->destination->row_count(this->stats, &second), 0);
  EXPECT_EQ(this->destination->row_count(this->stats, nullptr), 4);

  auto counts = this->destination->partition_counts(this->stats, window);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0].key, "2026-01-01");
  EXPECT_EQ(counts[0].rows, 2);
  EXPECT_TRUE(counts[1].written);  // written empty
  EXPECT_EQ(counts[1].rows, 0);
  EXPECT_EQ(counts[2].rows, 2);
}

TYPED_TEST(StorageTest, RewritingAPartitionReplacesOnlyIt) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 3));
  this->destination->write(
      this->stats, &window,
      clicks({{day(2026, 1, 1), 1}, {day(2026, 1, 2), 2}, {day(2026, 1, 3), 3}}));
  TimePartitionWindow middle(day(2026, 1, 2), day(2026, 1, 2));
  this->destination->write(this->stats, &middle,
                           clicks({{day(2026, 1, 2), 20}, {day(2026, 1, 2), 21}}));
  EXPECT_EQ(this->destination->read(this->stats, &window), clicks({{day(2026, 1, 1), 1},
                                                                   {day(2026, 1, 2), 20},
                                                                   {day(2026, 1, 2), 21},
                                                                   {day(2026, 1, 3), 3}}));
  // A window write that brings no rows for a partition empties it.
  this->destination->write(this->stats, &middle,
                           Table(this->destination->schema(this->stats).value()));
  auto counts = this->destination->partition_counts(this->stats, window);
  EXPECT_EQ(counts[1].rows, 0);
  EXPECT_TRUE(counts[1].written);
  EXPECT_EQ(this->destination->read(this->stats, &middle).num_rows(), 0u);
}

TYPED_TEST(StorageTest, NeverWrittenPartitionsAreNotWritten) {
  TimePartitionWindow window(day(2026, 2, 1), day(2026, 2, 2));
  EXPECT_EQ(this->destination->read(this->stats, &window), Table());
  EXPECT_FALSE(this->destination->schema(this->stats).has_value());
  auto first = window.partition_at(0)->as_window();
  this->destination->write(this->stats, first.get(), clicks({{day(2026, 2, 1), 1}}));
  auto counts = this->destination->partition_counts(this->stats, window);
  EXPECT_TRUE(counts[0].written);
  EXPECT_FALSE(counts[1].written);
  EXPECT_EQ(counts[1].rows, 0);
}

TYPED_TEST(StorageTest, RowOutsideTheWindowWritesNothing) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 2));
  this->destination->write(this->stats, &window, clicks({{day(2026, 1, 1), 1}}));
  try {
    this->destination->write(this->stats, &window,
                             clicks({{day(2026, 1, 1), 5}, {day(2026, 1, 9), 6}}));
    FAIL() << "expected DestinationError";
  } catch (const DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("2026-01-09"), std::string::npos) << e.what();
  }
  EXPECT_EQ(this->destination->read(this->stats, &window), clicks({{day(2026, 1, 1), 1}}));
  Table no_date;
  no_date.append({{"clicks", 1}});
  EXPECT_THROW(this->destination->write(this->stats, &window, no_date), DestinationError);
}

TYPED_TEST(StorageTest, MonthlyPartitionsHoldDailyRowsAndReadsSelectByBounds) {
  TimePartitionWindow months(day(2026, 1, 1), day(2026, 2, 1), TimeGranularity::MONTH);
  this->destination->write(
      this->monthly_stats, &months,
      clicks({{day(2026, 1, 5), 1}, {day(2026, 1, 20), 2}, {day(2026, 2, 3), 3}}));
  // A daily window over monthly storage selects rows by bounds.
  TimePartitionWindow days(day(2026, 1, 19), day(2026, 2, 3));
  EXPECT_EQ(this->destination->read(this->monthly_stats, &days),
            clicks({{day(2026, 1, 20), 2}, {day(2026, 2, 3), 3}}));
  TimePartition jan5(day(2026, 1, 5));
  EXPECT_EQ(this->destination->row_count(this->monthly_stats, &jan5), 1);
  TimePartition january(day(2026, 1, 1), TimeGranularity::MONTH);
  EXPECT_EQ(this->destination->row_count(this->monthly_stats, &january), 2);
  auto counts = this->destination->partition_counts(this->monthly_stats, days);
  ASSERT_EQ(counts.size(), 16u);
  EXPECT_EQ(counts[1].rows, 1);   // 2026-01-20
  EXPECT_EQ(counts[15].rows, 1);  // 2026-02-03
  // And a yearly window reads everything.
  TimePartitionWindow year(day(2026, 1, 1), day(2026, 1, 1), TimeGranularity::YEAR);
  EXPECT_EQ(this->destination->read(this->monthly_stats, &year).num_rows(), 3u);
}

TYPED_TEST(StorageTest, DailyStorageReadThroughAMonthWindow) {
  TimePartitionWindow days(day(2026, 1, 30), day(2026, 2, 2));
  this->destination->write(this->stats, &days,
                           clicks({{day(2026, 2, 2), 4},
                                   {day(2026, 1, 30), 1},
                                   {day(2026, 2, 1), 3},
                                   {day(2026, 1, 31), 2}}));
  TimePartitionWindow months(day(2026, 1, 1), day(2026, 2, 1), TimeGranularity::MONTH);
  Table back = this->destination->read(this->stats, &months);
  ASSERT_EQ(back.num_rows(), 4u);
  // Grouped by month, storage order inside each month.
  EXPECT_EQ(back.at(0, "date"), Value(day(2026, 1, 30)));
  EXPECT_EQ(back.at(1, "date"), Value(day(2026, 1, 31)));
  EXPECT_EQ(back.at(2, "date").as_date() >= std::chrono::sys_days(day(2026, 2, 1)), true);
  auto counts = this->destination->partition_counts(this->stats, months);
  EXPECT_EQ(counts[0].rows, 2);
  EXPECT_EQ(counts[1].rows, 2);
}

TYPED_TEST(StorageTest, HourPartitionsOverTimestamps) {
  TimePartitionConfig hourly{"ts", {.granularity = TimeGranularity::HOUR, .allow_window = true}};
  DatasetRef events{"web", "events", &hourly};
  TimePartitionWindow window(at(2026, 3, 1, 22), at(2026, 3, 2, 1), TimeGranularity::HOUR);
  Table rows;
  rows.append({{"ts", at(2026, 3, 1, 22, 15)}, {"n", 1}});
  rows.append({{"ts", at(2026, 3, 2, 0, 0)}, {"n", 2}});
  rows.append({{"ts", at(2026, 3, 2, 1, 59)}, {"n", 3}});
  this->destination->write(events, &window, rows);
  TimePartition midnight(at(2026, 3, 2, 0), TimeGranularity::HOUR);
  EXPECT_EQ(this->destination->row_count(events, &midnight), 1);
  EXPECT_EQ(this->destination->read(events, &window), rows);
  TimePartitionWindow day_window(day(2026, 3, 2), day(2026, 3, 2));
  EXPECT_EQ(this->destination->read(events, &day_window).num_rows(), 2u);
}

TYPED_TEST(StorageTest, EveryValueTypeRoundTripsExactly) {
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 1));
  Table rows;
  rows.append({{"date", day(2026, 1, 1)},
               {"flag", true},
               {"n", 42},
               {"x", 0.1},
               {"name", "a,\"b\"\nc"},
               {"ts", at(2026, 1, 1, 13, 5)},
               {"gone", nullptr}});
  rows.append({{"date", day(2026, 1, 1)},
               {"flag", false},
               {"n", -7},
               {"x", 1e300},
               {"name", ""},
               {"ts", at(2026, 1, 1, 0, 0)},
               {"gone", nullptr}});
  rows.append({{"date", day(2026, 1, 1)}, {"name", "2026-01-01"}});  // a date-looking string
  this->destination->write(this->stats, &window, rows);
  this->reopen();
  EXPECT_EQ(this->destination->read(this->stats, &window), rows);
  EXPECT_EQ(this->destination->schema(this->stats), rows.schema());
}

TYPED_TEST(StorageTest, NewColumnsAreAdded) {
  TimePartitionWindow jan1(day(2026, 1, 1), day(2026, 1, 1));
  TimePartitionWindow jan2(day(2026, 1, 2), day(2026, 1, 2));
  this->destination->write(this->stats, &jan1, clicks({{day(2026, 1, 1), 1}}));
  Table wider;
  wider.append({{"date", day(2026, 1, 2)}, {"clicks", 2}, {"cost", 1.5}});
  this->destination->write(this->stats, &jan2, wider);
  TimePartitionWindow both(day(2026, 1, 1), day(2026, 1, 2));
  Table expected;
  expected.append({{"date", day(2026, 1, 1)}, {"clicks", 1}, {"cost", nullptr}});
  expected.append({{"date", day(2026, 1, 2)}, {"clicks", 2}, {"cost", 1.5}});
  EXPECT_EQ(this->destination->read(this->stats, &both), expected);
  Table clash;
  clash.append({{"date", day(2026, 1, 2)}, {"clicks", "many"}});
  EXPECT_THROW(this->destination->write(this->stats, &jan2, clash), DestinationError);
}

TYPED_TEST(StorageTest, ListPartitionsWithHostileKeys) {
  std::vector<std::string> values = {"eu",
                                     "../x",
                                     "/",
                                     "%",
                                     ".",
                                     "..",
                                     std::string("a\0b", 3),
                                     "a=b",
                                     std::string(300, 'k'),
                                     std::string(300, '/') + "z",
                                     "caf\xc3\xa9 d'or"};
  ListPartitionConfig regions("region", values, true);
  DatasetRef sales{"shop", "sales", &regions};
  auto window = regions.window(values.front(), values.back());  // a ListPartitionWindow
  Table rows;
  for (std::size_t i = 0; i < values.size(); ++i) {
    rows.append({{"region", values[i]}, {"n", static_cast<int>(i)}});
  }
  this->destination->write(sales, &window, rows);
  this->reopen();
  EXPECT_EQ(this->destination->read(sales, &window), rows);
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto partition = regions.partition(values[i]);
    EXPECT_EQ(this->destination->row_count(sales, &partition), 1) << i;
    Table one = this->destination->read(sales, partition.as_window().get());
    ASSERT_EQ(one.num_rows(), 1u) << i;
    EXPECT_EQ(one.at(0, "region"), Value(values[i]));
  }
  auto counts = this->destination->partition_counts(sales, window);
  for (const auto& count : counts) EXPECT_EQ(count.rows, 1) << count.key;
  // Nothing escaped the destination's own directory.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(this->dir.path())) {
    auto rel = std::filesystem::relative(entry.path(), this->dir.path()).string();
    EXPECT_TRUE(rel.rfind("files", 0) == 0 || rel.rfind("db", 0) == 0) << rel;
  }
}

TYPED_TEST(StorageTest, UnpartitionedDatasetsAreReplacedWhole) {
  DatasetRef dims{"", "dims", nullptr};
  Table a;
  a.append({{"id", 1}, {"name", "one"}});
  a.append({{"id", 2}, {"name", "two"}});
  this->destination->write(dims, nullptr, a);
  EXPECT_EQ(this->destination->read(dims, nullptr), a);
  Table b;
  b.append({{"id", 3}, {"name", "three"}});
  this->destination->write(dims, nullptr, b);
  EXPECT_EQ(this->destination->read(dims, nullptr), b);
  EXPECT_EQ(this->destination->row_count(dims, nullptr), 1);
}

TYPED_TEST(StorageTest, ConcurrentWritersOfDifferentPartitions) {
  std::vector<std::thread> threads;
  for (unsigned d = 1; d <= 8; ++d) {
    threads.emplace_back([this, d] {
      TimePartitionWindow one(day(2026, 4, d), day(2026, 4, d));
      Table rows;
      for (int i = 0; i < 50; ++i) rows.append({{"date", day(2026, 4, d)}, {"clicks", i}});
      for (int round = 0; round < 3; ++round) this->destination->write(this->stats, &one, rows);
    });
  }
  for (auto& t : threads) t.join();
  TimePartitionWindow all(day(2026, 4, 1), day(2026, 4, 8));
  for (const auto& count : this->destination->partition_counts(this->stats, all)) {
    EXPECT_EQ(count.rows, 50) << count.key;
  }
}

}  // namespace
}  // namespace interloper
