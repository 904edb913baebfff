// The datasets of the destination fixtures written in an earlier layout (tests/fixtures/), and the
// check that such a store is read, and updated in place, as it was: exact decimals, timestamps
// to the microsecond, json, a retired column, an unpartitioned dataset.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "interloper/destination.hpp"

namespace interloper::testing {

inline const TimePartitionConfig& daily() {
  static const TimePartitionConfig config{
      "day", {.granularity = TimeGranularity::DAY, .allow_window = true}};
  return config;
}

inline DatasetRef orders() { return {"shop", "orders", &daily()}; }
inline DatasetRef regions() { return {"", "regions", nullptr}; }

inline Value micros_at(const char* text) { return Value(*parse_timestamp(text)); }
inline Value decimal(const char* text) { return Value(*Decimal::parse(text)); }

// The first day's rows: a column "note" that the second day's write no longer has (retired).
inline Table first_day(const char* amount = "12.3400") {
  Table t;
  t.append({{"day", Value(std::chrono::year_month_day(std::chrono::year(2026), std::chrono::January,
                                                      std::chrono::day(1)))},
            {"id", 1},
            {"amount", decimal(amount)},
            {"at", micros_at("2026-01-01T10:00:00.123456")},
            {"meta", Value(parse_json(R"({"tags":["a","b"],"n":1})"))},
            {"note", "first"}});
  t.append({{"day", Value(std::chrono::year_month_day(std::chrono::year(2026), std::chrono::January,
                                                      std::chrono::day(1)))},
            {"id", 2},
            {"amount", decimal("-0.000001")},
            {"at", micros_at("2026-01-01T23:59:59.999999")},
            {"meta", Value(parse_json("null"))},
            {"note", nullptr}});
  return t;
}

inline Table second_day(unsigned d = 2) {
  Table t;
  t.append({{"day", Value(std::chrono::year_month_day(std::chrono::year(2026), std::chrono::January,
                                                      std::chrono::day(d)))},
            {"id", 3},
            {"amount", decimal("99999999999999999999.5")},
            {"at", micros_at("2026-01-02T00:00:00.000001")},
            {"meta", Value(parse_json(R"({"k":"v"})"))}});
  return t;
}

inline Table region_rows() {
  Table t;
  t.append({{"code", "emea"}, {"share", 0.25}});
  t.append({{"code", "us"}, {"share", 0.75}});
  return t;
}

inline TimePartitionWindow day_window(unsigned d) {
  const auto day = std::chrono::year_month_day(std::chrono::year(2026), std::chrono::January,
                                               std::chrono::day(d));
  return TimePartitionWindow(day, day);
}

// Writes the fixture's datasets with `destination`.
inline void write_layout_fixture(Destination& destination) {
  auto one = day_window(1), two = day_window(2);
  destination.write(orders(), &one, first_day());
  destination.write(orders(), &two, second_day());
  destination.write(regions(), nullptr, region_rows());
}

// Reads the fixture through `destination`, updates it, and reads it again through a destination
// `reopen` opens anew on the same store.
inline void check_layout_fixture(Destination& destination,
                                 const std::function<std::unique_ptr<Destination>()>& reopen) {
  auto one = day_window(1), two = day_window(2), three = day_window(3);
  // Read as written: exact decimals, microseconds, json, the retired column null on day 2.
  Table day1 = destination.read(orders(), &one);
  ASSERT_EQ(day1.num_rows(), 2u);
  EXPECT_EQ(day1.at(0, "amount"), decimal("12.3400"));
  EXPECT_EQ(day1.at(1, "amount"), decimal("-0.000001"));
  EXPECT_EQ(day1.at(0, "at"), micros_at("2026-01-01T10:00:00.123456"));
  EXPECT_EQ(day1.at(1, "at"), micros_at("2026-01-01T23:59:59.999999"));
  EXPECT_EQ(day1.at(0, "meta"), Value(parse_json(R"({"tags":["a","b"],"n":1})")));
  EXPECT_EQ(day1.at(0, "note"), Value("first"));
  Table day2 = destination.read(orders(), &two);
  ASSERT_EQ(day2.num_rows(), 1u);
  EXPECT_EQ(day2.at(0, "amount"), decimal("99999999999999999999.5"));
  EXPECT_TRUE(day2.at(0, "note").is_null());
  EXPECT_EQ(destination.retired_columns(orders()), std::vector<std::string>{"note"});
  const std::optional<Schema> schema = destination.schema(orders());
  ASSERT_TRUE(schema);
  EXPECT_EQ(schema->field(*schema->find("amount")).type, DataType::decimal);
  EXPECT_EQ(schema->field(*schema->find("at")).type, DataType::timestamp);
  EXPECT_EQ(schema->field(*schema->find("meta")).type, DataType::json);
  EXPECT_EQ(destination.read(regions(), nullptr), region_rows());
  EXPECT_EQ(destination.row_count(orders(), nullptr), 3);

  // Updated in place: day 1 replaced (with the retired column back), day 3 added, a new column.
  destination.write(orders(), &one, first_day("1.5"));
  Table third = second_day(3);
  std::vector<std::pair<std::string, Value>> cells;
  for (std::size_t c = 0; c < third.num_columns(); ++c) {
    cells.emplace_back(third.schema().field(c).name, third.column(c)[0]);
  }
  cells.emplace_back("extra", Value(7));
  Table widened;
  widened.append(cells);
  destination.write(orders(), &three, widened);

  std::unique_ptr<Destination> again = reopen();
  Destination& reopened = *again;
  EXPECT_EQ(reopened.read(orders(), &one).at(0, "amount"), decimal("1.5"));
  EXPECT_EQ(reopened.read(orders(), &two).num_rows(), 1u);
  EXPECT_EQ(reopened.read(orders(), &three).at(0, "extra"), Value(7));
  EXPECT_EQ(reopened.row_count(orders(), nullptr), 4);
  EXPECT_EQ(reopened.retired_columns(orders()), std::vector<std::string>{"note"});
}

}  // namespace interloper::testing
