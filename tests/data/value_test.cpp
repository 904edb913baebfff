#include <sstream>

#include "data/test_helpers.hpp"

namespace interloper {
namespace {

using namespace std::chrono;
using testing::expect_data_error;

TEST(Value, ConstructsEachType) {
  EXPECT_EQ(Value().type(), DataType::null);
  EXPECT_EQ(Value(nullptr).type(), DataType::null);
  EXPECT_TRUE(Value().is_null());
  EXPECT_EQ(Value(true).type(), DataType::boolean);
  EXPECT_EQ(Value(1).type(), DataType::int64);
  EXPECT_EQ(Value(1L).type(), DataType::int64);
  EXPECT_EQ(Value(1LL).type(), DataType::int64);
  EXPECT_EQ(Value(std::int64_t{1}).type(), DataType::int64);
  EXPECT_EQ(Value(1.5).type(), DataType::float64);
  EXPECT_EQ(Value("x").type(), DataType::string);  // not bool
  EXPECT_EQ(Value(std::string("x")).type(), DataType::string);
  EXPECT_EQ(Value(std::string_view("x")).type(), DataType::string);
  EXPECT_EQ(Value(year{2026} / 1 / 5).type(), DataType::date);
  EXPECT_EQ(Value(sys_days(year{2026} / 1 / 5)).type(), DataType::date);
  EXPECT_EQ(Value(sys_seconds(sys_days(year{2026} / 1 / 5))).type(), DataType::timestamp);
  static_assert(!std::is_constructible_v<Value, int*>, "pointers must not become bool");
  static_assert(sizeof(Value) <= 48);
}

TEST(Value, Accessors) {
  EXPECT_TRUE(Value(true).as_bool());
  EXPECT_EQ(Value(-7).as_int(), -7);
  EXPECT_EQ(Value(2.5).as_double(), 2.5);
  EXPECT_EQ(Value(3).as_double(), 3.0);  // int widens
  EXPECT_EQ(Value("héllo").as_string(), "héllo");
  sys_days d = year{2026} / 3 / 29;
  EXPECT_EQ(Value(d).as_date(), d);
  EXPECT_EQ(Value(d).as_timestamp(), sys_seconds(d));  // date widens to midnight
  sys_seconds t = sys_seconds(d) + hours(2) + seconds(5);
  EXPECT_EQ(Value(t).as_timestamp(), t);
}

TEST(Value, WrongTypeNamesExpectedAndActual) {
  expect_data_error([] { (void)Value("abc").as_int(); }, {"int", "string", "abc"});
  expect_data_error([] { (void)Value(1.5).as_int(); }, {"int", "double"});
  expect_data_error([] { (void)Value().as_bool(); }, {"bool", "null"});
  expect_data_error([] { (void)Value(1).as_string(); }, {"string", "int"});
  expect_data_error([] { (void)Value(true).as_double(); }, {"double", "bool"});
  expect_data_error([] { (void)Value(sys_seconds{}).as_date(); }, {"date", "timestamp"});
  expect_data_error([] { (void)Value(3).as_timestamp(); }, {"timestamp", "int"});
}

TEST(Value, InvalidYearMonthDayThrows) {
  expect_data_error([] { Value v(year{2026} / 2 / 30); }, {"2026-2-30"});
}

TEST(Value, ToString) {
  EXPECT_EQ(Value().to_string(), "null");
  EXPECT_EQ(Value(false).to_string(), "false");
  EXPECT_EQ(Value(-42).to_string(), "-42");
  EXPECT_EQ(Value(1.0).to_string(), "1.0");
  EXPECT_EQ(Value(0.1).to_string(), "0.1");
  EXPECT_EQ(Value(1e300).to_string(), "1e+300");
  EXPECT_EQ(Value(-2.5).to_string(), "-2.5");
  EXPECT_EQ(Value("a b").to_string(), "a b");
  EXPECT_EQ(Value(year{2026} / 1 / 5).to_string(), "2026-01-05");
  EXPECT_EQ(Value(year{33} / 12 / 31).to_string(), "0033-12-31");
  EXPECT_EQ(
      Value(sys_seconds(sys_days(year{2026} / 10 / 25)) + hours(23) + minutes(59) + seconds(7))
          .to_string(),
      "2026-10-25T23:59:07");
  EXPECT_EQ(Value(sys_seconds(sys_days(year{1969} / 12 / 31)) + hours(1)).to_string(),
            "1969-12-31T01:00:00");
  std::ostringstream os;
  os << Value(12) << ' ' << DataType::float64;
  EXPECT_EQ(os.str(), "12 double");
}

TEST(Value, Equality) {
  EXPECT_EQ(Value(1), Value(1LL));
  EXPECT_NE(Value(1), Value(1.0));
  EXPECT_NE(Value(1), Value());
  EXPECT_EQ(Value(), Value(nullptr));
  EXPECT_EQ(Value("a"), Value(std::string("a")));
  EXPECT_NE(Value(sys_days(year{2026} / 1 / 1)), Value(sys_seconds(sys_days(year{2026} / 1 / 1))));
}

TEST(DataType, Names) {
  for (auto t : {DataType::null, DataType::boolean, DataType::int64, DataType::float64,
                 DataType::string, DataType::date, DataType::timestamp})
    EXPECT_EQ(type_from_name(type_name(t)), t);
  EXPECT_EQ(type_name(DataType::boolean), "bool");
  EXPECT_EQ(type_name(DataType::float64), "double");
  expect_data_error([] { type_from_name("integer"); }, {"'integer'"});
}

TEST(Parse, DatesAndTimestamps) {
  EXPECT_EQ(parse_date("2024-02-29"), sys_days(year{2024} / 2 / 29));
  EXPECT_FALSE(parse_date("2023-02-29"));
  EXPECT_FALSE(parse_date("2023-2-28"));
  EXPECT_FALSE(parse_date("2023-02-28 "));
  auto t = sys_seconds(sys_days(year{2026} / 1 / 5)) + hours(3) + minutes(4) + seconds(5);
  EXPECT_EQ(parse_timestamp("2026-01-05T03:04:05"), t);
  EXPECT_EQ(parse_timestamp("2026-01-05 03:04:05"), t);
  EXPECT_EQ(parse_timestamp("2026-01-05T03:04:05Z"), t);
  EXPECT_FALSE(parse_timestamp("2026-01-05T24:00:00"));
  EXPECT_FALSE(parse_timestamp("2026-01-05T03:04"));
  EXPECT_FALSE(parse_timestamp("2026-01-05"));
}

TEST(Convert, Rules) {
  EXPECT_EQ(convert(Value(2), DataType::float64), Value(2.0));
  sys_days d = year{2026} / 1 / 5;
  EXPECT_EQ(convert(Value(d), DataType::timestamp), Value(sys_seconds(d)));
  EXPECT_EQ(convert(Value("2026-01-05"), DataType::date), Value(d));
  EXPECT_EQ(convert(Value("2026-01-05"), DataType::timestamp), Value(sys_seconds(d)));
  EXPECT_EQ(convert(Value("12"), DataType::int64), Value(12));
  EXPECT_EQ(convert(Value("true"), DataType::boolean), Value(true));
  EXPECT_EQ(convert(Value(12), DataType::string), Value("12"));
  EXPECT_EQ(convert(Value(), DataType::int64), Value());
  expect_data_error([] { convert(Value("abc"), DataType::int64); }, {"abc", "int"});
  expect_data_error([] { convert(Value(1.5), DataType::int64); }, {"1.5", "int"});
}

}  // namespace
}  // namespace interloper
