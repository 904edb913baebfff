// The destination contract (see destination_contract.hpp), run against every kind.
#include "destination_contract.hpp"

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"
#include "support/any_value_list.hpp"

namespace interloper_test {

namespace il = interloper;
using namespace std::chrono;

void DestinationContract::SetUp() {
  static std::atomic<int> counter{0};
  std::random_device device;
  temp_dir_ = std::filesystem::temp_directory_path() /
              ("il-destination-" + std::to_string(device()) + "-" + std::to_string(++counter));
  std::filesystem::create_directories(temp_dir_);
  destination_ = GetParam().make(temp_dir_.string());
  if (IsSkipped()) return;  // the factory found the service it needs missing
  ASSERT_NE(destination_, nullptr);
}

void DestinationContract::TearDown() {
  destination_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(temp_dir_, ignored);
}

namespace {

il::TimePoint day(int d, int month = 1) { return year{2026} / month / d; }

il::Table daily_rows(std::initializer_list<int> days, int clicks = 1) {
  il::Table t;
  for (int d : days) t.append({{"date", year{2026} / 1 / d}, {"clicks", clicks * d}});
  return t;
}

il::TimePartitionWindow days(int first, int last) {
  return il::TimePartitionWindow(day(first), day(last));
}

std::vector<std::pair<std::string, std::int64_t>> written(
    const std::vector<il::PartitionCount>& counts) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (const auto& c : counts) out.emplace_back(c.key, c.written ? c.rows : -1);
  return out;
}

const il::TimePartitionConfig kDaily("date", {.allow_window = true});
const il::DatasetRef kDailyRef{"ads", "stats", &kDaily};

}  // namespace

TEST_P(DestinationContract, NeverWrittenDatasetReadsEmpty) {
  auto w = days(1, 2);
  EXPECT_EQ(destination().read(kDailyRef, &w).num_rows(), 0u);
  EXPECT_EQ(destination().read(kDailyRef, nullptr).num_rows(), 0u);
  il::TimePartition p(day(1));
  EXPECT_EQ(destination().row_count(kDailyRef, &p), 0);
  EXPECT_EQ(destination().row_count(kDailyRef, nullptr), 0);
  EXPECT_EQ(
      written(destination().partition_counts(kDailyRef, w)),
      (std::vector<std::pair<std::string, std::int64_t>>{{"2026-01-01", -1}, {"2026-01-02", -1}}));
  EXPECT_FALSE(destination().schema(kDailyRef).has_value());
}

TEST_P(DestinationContract, WindowWriteReplacesEachPartition) {
  auto w = days(1, 3);
  EXPECT_EQ(destination().write(kDailyRef, &w, daily_rows({1, 1, 2, 3})), 4);
  auto w2 = days(2, 3);
  EXPECT_EQ(destination().write(kDailyRef, &w2, daily_rows({2}, 10)), 1);
  EXPECT_EQ(written(destination().partition_counts(kDailyRef, w)),
            (std::vector<std::pair<std::string, std::int64_t>>{
                {"2026-01-01", 2}, {"2026-01-02", 1}, {"2026-01-03", 0}}));
  il::Table two = destination().read(kDailyRef, &w2);
  ASSERT_EQ(two.num_rows(), 1u);
  EXPECT_EQ(two.at(0, "clicks"), il::Value(20));
  EXPECT_EQ(destination().read(kDailyRef, &w).num_rows(), 3u);
}

TEST_P(DestinationContract, PartitionWithoutRowsIsWrittenEmpty) {
  auto w = days(1, 3);
  destination().write(kDailyRef, &w, daily_rows({1, 3}));
  const auto counts = destination().partition_counts(kDailyRef, w);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_TRUE(counts[1].written);
  EXPECT_EQ(counts[1].rows, 0);
  EXPECT_EQ(counts[1].key, "2026-01-02");
  il::TimePartition second(day(2));
  EXPECT_EQ(destination().row_count(kDailyRef, &second), 0);
  // A window written with no rows at all still counts as written.
  auto later = days(10, 11);
  destination().write(kDailyRef, &later, il::Table());
  for (const auto& c : destination().partition_counts(kDailyRef, later)) {
    EXPECT_TRUE(c.written) << c.key;
    EXPECT_EQ(c.rows, 0) << c.key;
  }
}

TEST_P(DestinationContract, RowOutsideWindowIsAnErrorAndNothingIsWritten) {
  auto w = days(1, 2);
  destination().write(kDailyRef, &w, daily_rows({1, 2}));
  il::Table bad = daily_rows({1, 2, 3}, 100);
  try {
    destination().write(kDailyRef, &w, bad);
    FAIL() << "expected DestinationError";
  } catch (const il::DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("2026-01-03"), std::string::npos) << e.what();
  }
  il::Table back = destination().read(kDailyRef, &w);
  EXPECT_EQ(back, daily_rows({1, 2}));
}

TEST_P(DestinationContract, MissingOrNullPartitionColumnIsAnError) {
  auto w = days(1, 1);
  il::Table no_column;
  no_column.append({{"clicks", 1}});
  try {
    destination().write(kDailyRef, &w, no_column);
    FAIL() << "expected DestinationError";
  } catch (const il::DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("'date'"), std::string::npos) << e.what();
  }
  il::Table null_date;
  null_date.append({{"date", year{2026} / 1 / 1}, {"clicks", 1}});
  null_date.append({{"date", nullptr}, {"clicks", 2}});
  try {
    destination().write(kDailyRef, &w, null_date);
    FAIL() << "expected DestinationError";
  } catch (const il::DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("'date'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(destination().row_count(kDailyRef, nullptr), 0);
}

TEST_P(DestinationContract, ReadAndRowCountScopeByBounds) {
  // Timestamps late in a day belong to that day; the next midnight to the next.
  il::TimePartitionConfig config("ts", {.allow_window = true});
  il::DatasetRef ref{"", "events", &config};
  il::Table t;
  t.append({{"ts", sys_seconds(sys_days(year{2026} / 1 / 1))}, {"n", 1}});
  t.append(
      {{"ts", sys_seconds(sys_days(year{2026} / 1 / 1) + hours(23) + minutes(59) + seconds(59))},
       {"n", 2}});
  t.append({{"ts", sys_seconds(sys_days(year{2026} / 1 / 2))}, {"n", 3}});
  auto w = days(1, 2);
  ASSERT_EQ(destination().write(ref, &w, t), 3);
  il::TimePartition first(day(1));
  il::TimePartition second(day(2));
  EXPECT_EQ(destination().row_count(ref, &first), 2);
  EXPECT_EQ(destination().row_count(ref, &second), 1);
  auto only_second = days(2, 2);
  il::Table back = destination().read(ref, &only_second);
  ASSERT_EQ(back.num_rows(), 1u);
  EXPECT_EQ(back.at(0, "n"), il::Value(3));
}

TEST_P(DestinationContract, MonthlyPartitionsHoldDailyDates) {
  il::TimePartitionConfig monthly(
      "date", {.granularity = il::TimeGranularity::MONTH, .allow_window = true});
  il::DatasetRef ref{"ads", "monthly", &monthly};
  il::Table t;
  for (int d : {1, 15, 31}) t.append({{"date", year{2026} / 1 / d}, {"v", d}});
  for (int d : {1, 28}) t.append({{"date", year{2026} / 2 / d}, {"v", d}});
  il::TimePartitionWindow w(day(1, 1), day(1, 2), il::TimeGranularity::MONTH);
  ASSERT_EQ(destination().write(ref, &w, t), 5);
  il::TimePartition jan(day(1, 1), il::TimeGranularity::MONTH);
  il::TimePartition feb(day(20, 2), il::TimeGranularity::MONTH);
  EXPECT_EQ(destination().row_count(ref, &jan), 3);
  EXPECT_EQ(destination().row_count(ref, &feb), 2);
  EXPECT_EQ(destination().read(ref, jan.as_window().get()).num_rows(), 3u);
  EXPECT_EQ(written(destination().partition_counts(ref, w)),
            (std::vector<std::pair<std::string, std::int64_t>>{{"2026-01", 3}, {"2026-02", 2}}));
  // Rewriting February alone replaces only February.
  il::Table feb_rows;
  feb_rows.append({{"date", year{2026} / 2 / 14}, {"v", 14}});
  destination().write(ref, feb.as_window().get(), feb_rows);
  EXPECT_EQ(destination().row_count(ref, &jan), 3);
  EXPECT_EQ(destination().row_count(ref, &feb), 1);
}

TEST_P(DestinationContract, ReadsGiveWindowOrderThenInputOrder) {
  // Rows arrive out of partition order; reads give partition order, input order within.
  auto w = days(1, 3);
  il::Table rows;
  for (auto [d, n] : {std::pair{3, 1}, {1, 2}, {3, 3}, {1, 4}}) {
    rows.append({{"date", year{2026} / 1 / d}, {"clicks", n}});
  }
  EXPECT_EQ(destination().write(kDailyRef, &w, rows), 4);
  il::Table expected;
  for (auto [d, n] : {std::pair{1, 2}, {1, 4}, {3, 1}, {3, 3}}) {
    expected.append({{"date", year{2026} / 1 / d}, {"clicks", n}});
  }
  EXPECT_EQ(destination().read(kDailyRef, &w), expected);
  il::TimePartition first(day(1));
  EXPECT_EQ(destination().row_count(kDailyRef, &first), 2);
  EXPECT_EQ(destination().row_count(kDailyRef, nullptr), 4);
}

TEST_P(DestinationContract, PartitionsNeverWrittenStayUnwrittenBesideWrittenOnes) {
  auto w = days(1, 2);
  auto first = w.partition_at(0)->as_window();
  destination().write(kDailyRef, first.get(), daily_rows({1}));
  EXPECT_EQ(
      written(destination().partition_counts(kDailyRef, w)),
      (std::vector<std::pair<std::string, std::int64_t>>{{"2026-01-01", 1}, {"2026-01-02", -1}}));
}

TEST_P(DestinationContract, ADailyWindowOverMonthlyPartitionsSelectsByBounds) {
  il::TimePartitionConfig monthly(
      "date", {.granularity = il::TimeGranularity::MONTH, .allow_window = true});
  il::DatasetRef ref{"ads", "monthly", &monthly};
  il::Table t;
  for (auto [m, d] : {std::pair{1, 5}, {1, 20}, {2, 3}}) {
    t.append({{"date", year{2026} / m / d}, {"clicks", d}});
  }
  il::TimePartitionWindow months(day(1, 1), day(1, 2), il::TimeGranularity::MONTH);
  destination().write(ref, &months, t);
  il::TimePartitionWindow w(day(19, 1), day(3, 2));
  il::Table expected;
  expected.append({{"date", year{2026} / 1 / 20}, {"clicks", 20}});
  expected.append({{"date", year{2026} / 2 / 3}, {"clicks", 3}});
  EXPECT_EQ(destination().read(ref, &w), expected);
  il::TimePartition jan5(day(5, 1));
  EXPECT_EQ(destination().row_count(ref, &jan5), 1);
  auto counts = destination().partition_counts(ref, w);
  ASSERT_EQ(counts.size(), 16u);
  EXPECT_EQ(counts[1].rows, 1);   // 2026-01-20
  EXPECT_EQ(counts[15].rows, 1);  // 2026-02-03
  // And a yearly window reads everything.
  il::TimePartitionWindow year_window(day(1, 1), day(1, 1), il::TimeGranularity::YEAR);
  EXPECT_EQ(destination().read(ref, &year_window).num_rows(), 3u);
}

TEST_P(DestinationContract, DailyPartitionsReadThroughAMonthWindow) {
  auto w = il::TimePartitionWindow(day(30, 1), day(2, 2));
  il::Table t;
  for (auto [m, d] : {std::pair{2, 2}, {1, 30}, {2, 1}, {1, 31}}) {
    t.append({{"date", year{2026} / m / d}, {"clicks", d}});
  }
  destination().write(kDailyRef, &w, t);
  il::TimePartitionWindow months(day(1, 1), day(1, 2), il::TimeGranularity::MONTH);
  il::Table back = destination().read(kDailyRef, &months);
  ASSERT_EQ(back.num_rows(), 4u);
  // Grouped by month, partition order inside each month.
  EXPECT_EQ(back.at(0, "date"), il::Value(year{2026} / 1 / 30));
  EXPECT_EQ(back.at(1, "date"), il::Value(year{2026} / 1 / 31));
  EXPECT_TRUE(back.at(2, "date").as_date() >= sys_days(year{2026} / 2 / 1));
  EXPECT_TRUE(back.at(3, "date").as_date() >= sys_days(year{2026} / 2 / 1));
  EXPECT_EQ(written(destination().partition_counts(kDailyRef, months)),
            (std::vector<std::pair<std::string, std::int64_t>>{{"2026-01", 2}, {"2026-02", 2}}));
}

TEST_P(DestinationContract, HourlyPartitionsOverTimestamps) {
  il::TimePartitionConfig hourly("ts",
                                 {.granularity = il::TimeGranularity::HOUR, .allow_window = true});
  il::DatasetRef ref{"web", "events", &hourly};
  const auto at = [](int d, int h, int m = 0) {
    return sys_seconds(sys_days(year{2026} / 3 / d) + hours(h) + minutes(m));
  };
  il::TimePartitionWindow w(at(1, 22), at(2, 1), il::TimeGranularity::HOUR);
  il::Table rows;
  rows.append({{"ts", at(1, 22, 15)}, {"n", 1}});
  rows.append({{"ts", at(2, 0, 0)}, {"n", 2}});
  rows.append({{"ts", at(2, 1, 59)}, {"n", 3}});
  destination().write(ref, &w, rows);
  il::TimePartition midnight(at(2, 0), il::TimeGranularity::HOUR);
  EXPECT_EQ(destination().row_count(ref, &midnight), 1);
  EXPECT_EQ(destination().read(ref, &w), rows);
  il::TimePartitionWindow second_day(day(2, 3), day(2, 3));
  EXPECT_EQ(destination().read(ref, &second_day).num_rows(), 2u);
}

TEST_P(DestinationContract, NewColumnsAreAddedAndEarlierRowsReadThemAsNull) {
  auto first = days(1, 1);
  auto second = days(2, 2);
  destination().write(kDailyRef, &first, daily_rows({1}));
  il::Table wider;
  wider.append({{"date", year{2026} / 1 / 2}, {"clicks", 2}, {"cost", 1.5}});
  destination().write(kDailyRef, &second, wider);
  il::Table expected;
  expected.append({{"date", year{2026} / 1 / 1}, {"clicks", 1}, {"cost", nullptr}});
  expected.append({{"date", year{2026} / 1 / 2}, {"clicks", 2}, {"cost", 1.5}});
  auto both = days(1, 2);
  EXPECT_EQ(destination().read(kDailyRef, &both), expected);
}

TEST_P(DestinationContract, ListPartitionsSelectByMembership) {
  const std::vector<std::string> values = {"eu/west",    "..",        "../x", "it's \"quoted\"",
                                           "with space", "ünïcødé ☃", "%2F",  "us"};
  il::testing::AnyValueList config("region", values, true);
  il::DatasetRef ref{"shop", "sales", &config};
  il::Table t;
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (std::size_t k = 0; k <= i; ++k) {
      t.append({{"region", values[i]}, {"amount", static_cast<int>(10 * i + k)}});
    }
  }
  auto all = config.window(values.front(), values.back());
  ASSERT_EQ(destination().write(ref, &all, t), static_cast<std::int64_t>(t.num_rows()));
  for (std::size_t i = 0; i < values.size(); ++i) {
    il::ListPartition p(values[i]);
    EXPECT_EQ(destination().row_count(ref, &p), static_cast<std::int64_t>(i + 1)) << values[i];
    il::Table back = destination().read(ref, p.as_window().get());
    ASSERT_EQ(back.num_rows(), i + 1) << values[i];
    for (std::size_t r = 0; r < back.num_rows(); ++r) {
      EXPECT_EQ(back.at(r, "region"), il::Value(values[i]));
    }
  }
  auto middle = config.window("../x", "with space");
  EXPECT_EQ(destination().read(ref, &middle).num_rows(), 3u + 4u + 5u);
  // A row whose value is outside the window is refused.
  il::Table stray;
  stray.append({{"region", "us"}, {"amount", 1}});
  EXPECT_THROW(destination().write(ref, &middle, stray), il::DestinationError);
  EXPECT_EQ(destination().row_count(ref, nullptr), static_cast<std::int64_t>(t.num_rows()));
}

TEST_P(DestinationContract, AWriteWithoutAWindowFilesEachRowUnderItsListPartition) {
  const std::vector<std::string> values = {"eu", "../x", std::string(300, 'k'), "us"};
  il::testing::AnyValueList config("region", values, true);
  il::DatasetRef ref{"shop", "regions", &config};
  il::Table first;
  for (const std::string& v : values) first.append({{"region", v}, {"amount", 1}});
  auto all = config.window(values.front(), values.back());
  ASSERT_EQ(destination().write(ref, &all, first), 4);
  // The whole dataset again: two of the values, in no particular order.
  il::Table again;
  again.append({{"region", values[2]}, {"amount", 2}});
  again.append({{"region", "eu"}, {"amount", 3}});
  again.append({{"region", values[2]}, {"amount", 4}});
  ASSERT_EQ(destination().write(ref, nullptr, again), 3);
  EXPECT_EQ(destination().row_count(ref, nullptr), 3);
  il::ListPartition long_key(values[2]), eu("eu"), us("us");
  EXPECT_EQ(destination().row_count(ref, &long_key), 2);
  EXPECT_EQ(destination().row_count(ref, &eu), 1);
  EXPECT_EQ(destination().row_count(ref, &us), 0);
  EXPECT_EQ(destination().read(ref, &all).num_rows(), 3u);
  // A value the list does not declare belongs to no partition: nothing is written.
  il::Table stray;
  stray.append({{"region", "eu"}, {"amount", 5}});
  stray.append({{"region", "mars"}, {"amount", 6}});
  try {
    destination().write(ref, nullptr, stray);
    ADD_FAILURE() << "a value of no partition was written";
  } catch (const il::DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("mars"), std::string::npos) << e.what();
  }
  EXPECT_EQ(destination().row_count(ref, nullptr), 3);
}

TEST_P(DestinationContract, ListPartitionsWithHostileKeys) {
  // Keys that are path syntax, escapes, or too long for one path component.
  const std::vector<std::string> values = {"eu",
                                           "../x",
                                           "/",
                                           "%",
                                           ".",
                                           "..",
                                           "a=b",
                                           std::string(300, 'k'),
                                           std::string(300, '/') + "z",
                                           "caf\xc3\xa9 d'or"};
  il::testing::AnyValueList config("region", values, true);
  il::DatasetRef ref{"shop", "sales", &config};
  auto all = config.window(values.front(), values.back());
  il::Table rows;
  for (std::size_t i = 0; i < values.size(); ++i) {
    rows.append({{"region", values[i]}, {"n", static_cast<int>(i)}});
  }
  destination().write(ref, &all, rows);
  EXPECT_EQ(destination().read(ref, &all), rows);
  for (std::size_t i = 0; i < values.size(); ++i) {
    il::ListPartition p(values[i]);
    EXPECT_EQ(destination().row_count(ref, &p), 1) << i;
    il::Table one = destination().read(ref, p.as_window().get());
    ASSERT_EQ(one.num_rows(), 1u) << i;
    EXPECT_EQ(one.at(0, "region"), il::Value(values[i]));
  }
  for (const auto& count : destination().partition_counts(ref, all)) {
    EXPECT_EQ(count.rows, 1) << count.key;
  }
}

TEST_P(DestinationContract, UnpartitionedWriteReplacesEverything) {
  il::DatasetRef ref{"crm", "customers", nullptr};
  il::Table first;
  first.append({{"id", 1}, {"name", "a"}});
  first.append({{"id", 2}, {"name", "b"}});
  EXPECT_EQ(destination().write(ref, nullptr, first), 2);
  il::Table second;
  second.append({{"id", 3}, {"name", "c"}});
  EXPECT_EQ(destination().write(ref, nullptr, second), 1);
  EXPECT_EQ(destination().read(ref, nullptr), second);
  EXPECT_EQ(destination().row_count(ref, nullptr), 1);
}

TEST_P(DestinationContract, UnpartitionedDatasetMayChangeColumnsAndTypes) {
  il::DatasetRef ref{"crm", "snapshot", nullptr};
  il::Table first;
  first.append({{"id", 1}, {"zip", 1234}, {"gone", "x"}});
  destination().write(ref, nullptr, first);
  il::Table second;
  second.append({{"id", "A-1"}, {"zip", "01234"}, {"score", 0.5}});
  EXPECT_EQ(destination().write(ref, nullptr, second), 1);
  EXPECT_EQ(destination().schema(ref), second.schema());
  EXPECT_EQ(destination().read(ref, nullptr), second);
  EXPECT_EQ(destination().row_count(ref, nullptr), 1);
}

TEST_P(DestinationContract, PartitionedTypeThatCannotWidenFailsAndSaysHowToGoOn) {
  il::DatasetRef ref{"ads", "labels", &kDaily};
  auto first = days(1, 1);
  il::Table ints;
  ints.append({{"date", year{2026} / 1 / 1}, {"v", 1}});
  destination().write(ref, &first, ints);
  auto second = days(2, 2);
  il::Table text;
  text.append({{"date", year{2026} / 1 / 2}, {"v", "v2"}});
  try {
    destination().write(ref, &second, text);
    ADD_FAILURE() << "a column stored as int took a string";
  } catch (const il::DestinationError& e) {
    const std::string message = e.what();
    for (const char* part : {"'v'", "stored as int", "gives it string", "schema", "new column",
                             "interloper reset PIPELINE labels"}) {
      EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
    }
  }
  // Nothing changed, and a type that widens is still taken.
  EXPECT_EQ(destination().read(ref, &first), ints);
  EXPECT_EQ(destination().row_count(ref, second.partition_at(0).get()), 0);
  il::Table doubles;
  doubles.append({{"date", year{2026} / 1 / 2}, {"v", 2.5}});
  destination().write(ref, &second, doubles);
  EXPECT_EQ(destination().schema(ref),
            il::Schema({{"date", il::DataType::date}, {"v", il::DataType::float64}}));
}

TEST_P(DestinationContract, DropOfTheWholeDatasetLetsATypeChange) {
  il::DatasetRef ref{"ads", "labels", &kDaily};
  il::DatasetRef other{"ads", "kept", &kDaily};
  auto both = days(1, 2);
  destination().write(ref, &both, daily_rows({1, 2}));
  destination().write(other, &both, daily_rows({1, 2}));
  destination().drop(ref, nullptr);
  EXPECT_EQ(destination().schema(ref), std::nullopt);
  EXPECT_EQ(destination().read(ref, nullptr).num_rows(), 0u);
  EXPECT_EQ(destination().row_count(ref, nullptr), 0);
  EXPECT_EQ(
      written(destination().partition_counts(ref, both)),
      (std::vector<std::pair<std::string, std::int64_t>>{{"2026-01-01", -1}, {"2026-01-02", -1}}));
  // Another dataset is untouched; a drop of nothing does nothing.
  EXPECT_EQ(destination().read(other, &both), daily_rows({1, 2}));
  destination().drop(ref, nullptr);
  // What could not widen before the drop is now simply written.
  il::Table text;
  text.append({{"date", year{2026} / 1 / 2}, {"clicks", "many"}});
  auto second = days(2, 2);
  EXPECT_EQ(destination().write(ref, &second, text), 1);
  EXPECT_EQ(destination().schema(ref), text.schema());
  EXPECT_EQ(destination().read(ref, nullptr), text);
}

TEST_P(DestinationContract, DropOfAWindowLeavesTheOtherPartitions) {
  auto all = days(1, 4);
  destination().write(kDailyRef, &all, daily_rows({1, 2, 3, 4}));
  auto middle = days(2, 3);
  destination().drop(kDailyRef, &middle);
  EXPECT_EQ(written(destination().partition_counts(kDailyRef, all)),
            (std::vector<std::pair<std::string, std::int64_t>>{
                {"2026-01-01", 1}, {"2026-01-02", -1}, {"2026-01-03", -1}, {"2026-01-04", 1}}));
  EXPECT_EQ(destination().read(kDailyRef, &all), daily_rows({1, 4}));
  EXPECT_EQ(destination().schema(kDailyRef), daily_rows({1}).schema());
  destination().write(kDailyRef, &middle, daily_rows({2, 3}, 10));
  EXPECT_EQ(destination().read(kDailyRef, &middle), daily_rows({2, 3}, 10));
}

TEST_P(DestinationContract, DropOfListPartitionsLeavesTheOthers) {
  const std::vector<std::string> values = {"eu", "../x", "us"};
  il::testing::AnyValueList config("region", values, true);
  il::DatasetRef ref{"shop", "sales", &config};
  il::Table t;
  for (const auto& v : values) t.append({{"region", v}, {"amount", 1}});
  auto all = config.window("eu", "us");
  destination().write(ref, &all, t);
  auto first_two = config.window("eu", "../x");
  destination().drop(ref, &first_two);
  auto counts = destination().partition_counts(ref, all);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_FALSE(counts[0].written);
  EXPECT_FALSE(counts[1].written);
  EXPECT_TRUE(counts[2].written);
  EXPECT_EQ(counts[2].rows, 1);
  EXPECT_EQ(destination().read(ref, &all).num_rows(), 1u);
}

TEST_P(DestinationContract, DropOfAnUnpartitionedDatasetRemovesIt) {
  il::DatasetRef ref{"crm", "snapshot", nullptr};
  il::Table rows;
  rows.append({{"id", 1}});
  destination().write(ref, nullptr, rows);
  destination().drop(ref, nullptr);
  EXPECT_EQ(destination().schema(ref), std::nullopt);
  EXPECT_EQ(destination().row_count(ref, nullptr), 0);
}

TEST_P(DestinationContract, WindowedAndPerPartitionWritesStoreTheSame) {
  il::DatasetRef windowed{"ads", "windowed", &kDaily};
  il::DatasetRef single{"ads", "single", &kDaily};
  auto w = days(1, 4);
  il::Table rows = daily_rows({1, 1, 2, 4});
  destination().write(windowed, &w, rows);
  for (il::TimePartition p : w) {
    destination().write(single, p.as_window().get(), p.slice(rows, "date"));
  }
  EXPECT_EQ(destination().read(windowed, &w), destination().read(single, &w));
  EXPECT_EQ(written(destination().partition_counts(windowed, w)),
            written(destination().partition_counts(single, w)));
  for (il::TimePartition p : w) {
    EXPECT_EQ(destination().read(windowed, p.as_window().get()),
              destination().read(single, p.as_window().get()));
  }
}

TEST_P(DestinationContract, ColumnsTheLatestWriteDidNotProduceAreRetired) {
  using Names = std::vector<std::string>;
  il::DatasetRef ref{"ads", "renames", &kDaily};
  EXPECT_EQ(destination().retired_columns(ref), Names{});
  auto first = days(1, 1), second = days(2, 2), third = days(3, 3);
  il::Table before, after, both;
  before.append({{"date", year{2026} / 1 / 1}, {"old", 1}});
  after.append({{"date", year{2026} / 1 / 2}, {"renamed", 2}});
  both.append({{"date", year{2026} / 1 / 3}, {"old", 3}, {"renamed", 3}});
  destination().write(ref, &first, before);
  EXPECT_EQ(destination().retired_columns(ref), Names{});
  // The asset renamed `old`: the stored schema keeps it, and it is retired.
  destination().write(ref, &second, after);
  EXPECT_EQ(destination().schema(ref), il::Schema({{"date", il::DataType::date},
                                                   {"old", il::DataType::int64},
                                                   {"renamed", il::DataType::int64}}));
  EXPECT_EQ(destination().retired_columns(ref), Names{"old"});
  // A write that brings no columns says nothing about them; dropping a window changes nothing.
  destination().write(ref, &third, il::Table());
  EXPECT_EQ(destination().retired_columns(ref), Names{"old"});
  destination().drop(ref, &first);
  EXPECT_EQ(destination().retired_columns(ref), Names{"old"});
  // Produced again, it is no longer retired; batches of one write count together.
  destination().write(ref, &third, both);
  EXPECT_EQ(destination().retired_columns(ref), Names{});
  destination().write(ref, &second, after);
  auto writer = destination().open_writer(ref, &third);
  writer->append(after.select_rows({}));
  writer->append(both);
  writer->commit();
  EXPECT_EQ(destination().retired_columns(ref), Names{});
  destination().write(ref, &second, after);
  EXPECT_EQ(destination().retired_columns(ref), Names{"old"});
  // A dataset dropped whole starts again with nothing retired.
  destination().drop(ref, nullptr);
  EXPECT_EQ(destination().retired_columns(ref), Names{});
  destination().write(ref, &second, after);
  EXPECT_EQ(destination().retired_columns(ref), Names{});
  // A dataset replaced whole has the write's columns and nothing retired.
  il::DatasetRef whole{"crm", "renames", nullptr};
  destination().write(whole, nullptr, before);
  destination().write(whole, nullptr, after);
  EXPECT_EQ(destination().retired_columns(whole), Names{});
}

TEST_P(DestinationContract, SchemaIsTheLastWritten) {
  auto w = days(1, 1);
  destination().write(kDailyRef, &w, daily_rows({1}));
  auto schema = destination().schema(kDailyRef);
  ASSERT_TRUE(schema.has_value());
  EXPECT_EQ(*schema, il::Schema({{"date", il::DataType::date}, {"clicks", il::DataType::int64}}));
}

TEST_P(DestinationContract, ValuesRoundTripExactly) {
  il::TimePartitionConfig config("date", {.allow_window = true});
  il::DatasetRef ref{"types", "all", &config};
  il::Table t;
  t.append({{"date", year{2026} / 3 / 1},
            {"at", sys_seconds(sys_days(year{2026} / 3 / 1) + hours(13) + minutes(5) + seconds(9))},
            {"ratio", 0.1},
            {"big", 1e300},
            {"count", 9007199254740993LL},
            {"flag", true},
            {"label", "comma, \"quote\"\nnewline ünï"},
            {"maybe", nullptr}});
  t.append({{"date", year{2026} / 3 / 2},
            {"at", sys_seconds(sys_days(year{2026} / 3 / 2))},
            {"ratio", -2.5},
            {"big", 3.0},
            {"count", -1},
            {"flag", false},
            {"label", ""},
            {"maybe", "present"}});
  t.append({{"date", year{2026} / 3 / 2},
            {"at", nullptr},
            {"ratio", nullptr},
            {"big", nullptr},
            {"count", nullptr},
            {"flag", nullptr},
            {"label", nullptr},
            {"maybe", nullptr}});
  t.append({{"date", year{2026} / 3 / 2}, {"label", "2026-03-02"}});  // a date-looking string
  il::TimePartitionWindow w(year{2026} / 3 / 1, year{2026} / 3 / 2);
  destination().write(ref, &w, t);
  EXPECT_EQ(destination().read(ref, &w), t);
  EXPECT_EQ(destination().schema(ref), t.schema());
}

TEST_P(DestinationContract, ConcurrentWritersOfDistinctPartitions) {
  std::vector<std::thread> writers;
  for (int d = 1; d <= 4; ++d) {
    writers.emplace_back([this, d] {
      for (int round = 0; round < 5; ++round) {
        auto w = days(d, d);
        destination().write(kDailyRef, &w, daily_rows({d, d}, round));
      }
    });
  }
  for (auto& t : writers) t.join();
  auto w = days(1, 4);
  EXPECT_EQ(written(destination().partition_counts(kDailyRef, w)),
            (std::vector<std::pair<std::string, std::int64_t>>{
                {"2026-01-01", 2}, {"2026-01-02", 2}, {"2026-01-03", 2}, {"2026-01-04", 2}}));
}

// ---- The streaming writer: every write goes through it ------------------------------------

namespace {

// Files a writer left behind in the test's directory: temporary files or staging leftovers.
std::vector<std::string> leftovers(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp-") != std::string::npos) out.push_back(entry.path().string());
  }
  return out;
}

}  // namespace

TEST_P(DestinationContract, WriterAppendsBatchesAndCommitsThemAtOnce) {
  auto w = days(1, 3);
  destination().write(kDailyRef, &w, daily_rows({1, 2, 3}, 100));
  auto writer = destination().open_writer(kDailyRef, &w);
  writer->append(daily_rows({1, 3}));
  writer->append(daily_rows({3, 1}, 2));
  writer->append(il::Table());
  // Nothing is visible before the commit.
  EXPECT_EQ(destination().read(kDailyRef, &w), daily_rows({1, 2, 3}, 100));
  EXPECT_EQ(writer->commit(), 4);
  EXPECT_EQ(written(destination().partition_counts(kDailyRef, w)),
            (std::vector<std::pair<std::string, std::int64_t>>{
                {"2026-01-01", 2}, {"2026-01-02", 0}, {"2026-01-03", 2}}));
  il::Table expected;
  for (auto [d, clicks] : {std::pair{1, 1}, {1, 2}, {3, 3}, {3, 6}}) {
    expected.append({{"date", year{2026} / 1 / d}, {"clicks", clicks}});
  }
  EXPECT_EQ(destination().read(kDailyRef, &w), expected);
  EXPECT_TRUE(leftovers(temp_dir()).empty());
}

TEST_P(DestinationContract, WriterDroppedWithoutCommitLeavesStorageAsItWas) {
  auto w = days(1, 2);
  destination().write(kDailyRef, &w, daily_rows({1, 2}));
  {
    auto writer = destination().open_writer(kDailyRef, &w);
    for (int i = 0; i < 3; ++i) writer->append(daily_rows({1, 2, 2}, 50 + i));
  }
  EXPECT_EQ(destination().read(kDailyRef, &w), daily_rows({1, 2}));
  EXPECT_EQ(destination().row_count(kDailyRef, nullptr), 2);
  EXPECT_TRUE(leftovers(temp_dir()).empty());
  // The destination still writes normally afterwards.
  EXPECT_EQ(destination().write(kDailyRef, &w, daily_rows({2})), 1);
  EXPECT_EQ(destination().read(kDailyRef, &w), daily_rows({2}));
}

TEST_P(DestinationContract, RowOutsideTheWindowInALaterBatchFailsTheWholeWindow) {
  auto w = days(1, 2);
  destination().write(kDailyRef, &w, daily_rows({1, 2}));
  auto writer = destination().open_writer(kDailyRef, &w);
  writer->append(daily_rows({1, 2}, 7));
  try {
    writer->append(daily_rows({2, 5}, 7));
    FAIL() << "expected DestinationError";
  } catch (const il::DestinationError& e) {
    EXPECT_NE(std::string(e.what()).find("2026-01-05"), std::string::npos) << e.what();
  }
  EXPECT_THROW(writer->commit(), il::DestinationError);
  writer.reset();
  EXPECT_EQ(destination().read(kDailyRef, &w), daily_rows({1, 2}));
  EXPECT_TRUE(leftovers(temp_dir()).empty());
}

TEST_P(DestinationContract, WriterUnifiesTheSchemaAcrossBatches) {
  auto w = days(1, 2);
  auto writer = destination().open_writer(kDailyRef, &w);
  writer->append(daily_rows({1, 2}));
  il::Table wider;
  wider.append({{"date", year{2026} / 1 / 2}, {"clicks", 2.5}, {"note", "late, \"quoted\""}});
  writer->append(wider);
  EXPECT_EQ(writer->commit(), 3);
  const il::Schema expected_schema{{"date", il::DataType::date},
                                   {"clicks", il::DataType::float64},
                                   {"note", il::DataType::string}};
  EXPECT_EQ(destination().schema(kDailyRef), expected_schema);
  il::Table back = destination().read(kDailyRef, &w);
  ASSERT_EQ(back.num_rows(), 3u);
  EXPECT_EQ(back.schema(), expected_schema);
  EXPECT_EQ(back.at(0, "clicks"), il::Value(1.0));
  EXPECT_EQ(back.at(0, "note"), il::Value());
  EXPECT_EQ(back.at(1, "clicks"), il::Value(2.0));
  EXPECT_EQ(back.at(2, "clicks"), il::Value(2.5));
  EXPECT_EQ(back.at(2, "note"), il::Value("late, \"quoted\""));
}

TEST_P(DestinationContract, BatchesWhoseTypesClashWriteNothing) {
  auto w = days(1, 1);
  destination().write(kDailyRef, &w, daily_rows({1}));
  il::Table words;
  words.append({{"date", year{2026} / 1 / 1}, {"clicks", "many"}});
  EXPECT_THROW(
      {
        auto writer = destination().open_writer(kDailyRef, &w);
        writer->append(daily_rows({1}, 3));
        writer->append(words);
        writer->commit();
      },
      il::DestinationError);
  EXPECT_EQ(destination().read(kDailyRef, &w), daily_rows({1}));
  // A clash with what is stored fails the same way.
  EXPECT_THROW(destination().write(kDailyRef, &w, words), il::DestinationError);
  EXPECT_EQ(destination().read(kDailyRef, &w), daily_rows({1}));
  EXPECT_TRUE(leftovers(temp_dir()).empty());
}

TEST_P(DestinationContract, AWriteWithoutAWindowReplacesEveryPartitionOfAPartitionedDataset) {
  il::TimePartitionWindow first_days = days(1, 3);
  destination().write(kDailyRef, &first_days, daily_rows({1, 2, 3}));
  EXPECT_EQ(destination().write(kDailyRef, nullptr, daily_rows({2, 5}, 10)), 2);
  il::Table everything = destination().read(kDailyRef, nullptr);
  ASSERT_EQ(everything.num_rows(), 2u);
  EXPECT_EQ(destination().row_count(kDailyRef, nullptr), 2);
  // Each partition reads what the whole write gave it, and nothing of before.
  EXPECT_EQ(destination().read(kDailyRef, &first_days), daily_rows({2}, 10));
  il::TimePartitionWindow fifth = days(5, 5);
  EXPECT_EQ(destination().read(kDailyRef, &fifth), daily_rows({5}, 10));
  il::TimePartition day2(day(2)), day1(day(1));
  EXPECT_EQ(destination().row_count(kDailyRef, &day2), 1);
  EXPECT_EQ(destination().row_count(kDailyRef, &day1), 0);
}

TEST_P(DestinationContract, UnpartitionedWriterReplacesTheWholeDataset) {
  il::DatasetRef ref{"crm", "customers", nullptr};
  destination().write(ref, nullptr, daily_rows({9}));
  auto writer = destination().open_writer(ref, nullptr);
  writer->append(daily_rows({1}));
  writer->append(daily_rows({2}));
  EXPECT_EQ(writer->commit(), 2);
  EXPECT_EQ(destination().read(ref, nullptr), daily_rows({1, 2}));
}

}  // namespace interloper_test

namespace interloper_test {

namespace {

il::Value decimal(std::string_view text) {
  std::optional<il::Decimal> d = il::Decimal::parse(text);
  EXPECT_TRUE(d.has_value()) << text;
  return d ? il::Value(*d) : il::Value();
}

il::Value timestamp(std::string_view text) {
  std::optional<il::Value::Timestamp> t = il::parse_timestamp(text);
  EXPECT_TRUE(t.has_value()) << text;
  return t ? il::Value(*t) : il::Value();
}

}  // namespace

// Microseconds, exact decimals (declared decimal(38,2), and undeclared ones of their own scale
// beyond 2^53) and nested JSON come back as they were written, with their declared types.
TEST_P(DestinationContract, MicrosecondsDecimalsAndJsonRoundTripExactly) {
  il::TimePartitionConfig config("date", {.allow_window = true});
  il::DatasetRef ref{"types", "exact", &config};
  il::Table t;
  t.append({{"date", year{2026} / 11 / 1},
            {"at", timestamp("2026-11-01T10:00:00.123456Z")},
            {"amount", decimal("12345678901234567890.12")},
            {"total", decimal("9007199254740993")},
            {"payload", il::parse_json(R"({"b": [1, 2.50, {"c": null}], "a": "x\"y"})")}});
  t.append({{"date", year{2026} / 11 / 2},
            {"at", timestamp("2026-11-02T00:00:00Z")},
            {"amount", decimal("-0.05")},
            {"total", decimal("-123456789012345678901234567890.12345678")},
            {"payload", il::parse_json("[]")}});
  t.append({{"date", year{2026} / 11 / 2}, {"payload", il::parse_json("\"text, quoted\"")}});
  t.conform(il::Schema({{"amount", il::DataType::decimal, 38, 2}}));
  il::TimePartitionWindow w(year{2026} / 11 / 1, year{2026} / 11 / 2);
  destination().write(ref, &w, t);
  const il::Table back = destination().read(ref, &w);
  EXPECT_EQ(back, t);
  EXPECT_EQ(back.at(0, "at").to_string(), "2026-11-01T10:00:00.123456");
  EXPECT_EQ(back.at(1, "at").to_string(), "2026-11-02T00:00:00");  // whole seconds as before
  EXPECT_EQ(back.at(0, "amount").to_string(), "12345678901234567890.12");
  EXPECT_EQ(back.at(1, "amount").to_string(), "-0.05");
  EXPECT_EQ(back.at(1, "total").to_string(), "-123456789012345678901234567890.12345678");
  EXPECT_EQ(back.at(0, "payload").to_string(), R"({"a":"x\"y","b":[1,2.50,{"c":null}]})");
  EXPECT_EQ(destination().schema(ref), t.schema());
  EXPECT_EQ(il::type_text(destination().schema(ref)->field(2)), "decimal(38,2)");
}

// A timestamp partition column holds microseconds; a row at 23:59:59.5 belongs to its day (the
// bounds are whole seconds, half-open).
TEST_P(DestinationContract, AFractionalTimestampBelongsToTheDayThatHoldsIt) {
  il::TimePartitionConfig config("at", {.allow_window = true});
  il::DatasetRef ref{"types", "late", &config};
  il::Table t;
  t.append({{"at", timestamp("2026-11-01T23:59:59.5Z")}, {"n", 1}});
  t.append({{"at", timestamp("2026-11-02T00:00:00.000001Z")}, {"n", 2}});
  il::TimePartitionWindow both(year{2026} / 11 / 1, year{2026} / 11 / 2);
  destination().write(ref, &both, t);
  il::TimePartitionWindow first(year{2026} / 11 / 1, year{2026} / 11 / 1);
  il::TimePartitionWindow second(year{2026} / 11 / 2, year{2026} / 11 / 2);
  const il::Table day1 = destination().read(ref, &first);
  ASSERT_EQ(day1.num_rows(), 1u);
  EXPECT_EQ(day1.at(0, "at").to_string(), "2026-11-01T23:59:59.500000");
  const il::Table day2 = destination().read(ref, &second);
  ASSERT_EQ(day2.num_rows(), 1u);
  EXPECT_EQ(day2.at(0, "n"), il::Value(2));
  EXPECT_EQ(
      written(destination().partition_counts(ref, both)),
      (std::vector<std::pair<std::string, std::int64_t>>{{"2026-11-01", 1}, {"2026-11-02", 1}}));
  // Only the first day's partition written again: the second keeps its row.
  il::Table again;
  again.append({{"at", timestamp("2026-11-01T23:59:59.999999Z")}, {"n", 3}});
  destination().write(ref, &first, again);
  EXPECT_EQ(destination().read(ref, &first).at(0, "n"), il::Value(3));
  EXPECT_EQ(destination().read(ref, &second).at(0, "n"), il::Value(2));
}

}  // namespace interloper_test

namespace interloper_test {

// A partitioned column stored as double (as numeric query results were before decimals) keeps
// its type when a later write brings decimals: the stored data reads as before, and the new
// values are written as their nearest doubles.
TEST_P(DestinationContract, AColumnStoredAsDoubleStaysDoubleWhenDecimalsCome) {
  auto w1 = days(1, 1);
  auto w2 = days(2, 2);
  il::Table before;
  before.append({{"date", year{2026} / 1 / 1}, {"total", 1.5}});
  destination().write(kDailyRef, &w1, before);
  il::Table now;
  now.append({{"date", year{2026} / 1 / 2}, {"total", il::Value(*il::Decimal::parse("0.1"))}});
  destination().write(kDailyRef, &w2, now);
  EXPECT_EQ(destination().schema(kDailyRef),
            il::Schema({{"date", il::DataType::date}, {"total", il::DataType::float64}}));
  auto both = days(1, 2);
  const il::Table back = destination().read(kDailyRef, &both);
  ASSERT_EQ(back.num_rows(), 2u);
  EXPECT_EQ(back.at(0, "total"), il::Value(1.5));
  EXPECT_EQ(back.at(1, "total"), il::Value(0.1));
}

}  // namespace interloper_test
