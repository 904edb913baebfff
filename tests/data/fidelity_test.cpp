// Readers keep what they read: text stays text unless a schema or the time column says
// otherwise, numbers are typed only when no digit is lost, and declared columns are converted
// with errors that name the row, the column and the value.
#include <sstream>

#include "data/test_helpers.hpp"

namespace interloper {
namespace {

using namespace std::chrono;
using testing::expect_data_error;

const sys_days kDay = year{2026} / 11 / 3;
const sys_seconds kTen = sys_seconds(kDay) + hours(10);

TEST(Timestamps, Rfc3339OffsetsAndFractionsBecomeUtcSeconds) {
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00+00:00"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00Z"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03t10:00:00z"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00.123456"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00.999999999Z"), kTen);
  // Python: datetime(2026, 11, 3, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
  //         .isoformat()
  EXPECT_EQ(parse_timestamp("2026-11-03T12:00:00.123456+02:00"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03 04:30:00-05:30"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03T15:30:00+0530"), kTen);
  // An offset can move the instant to another day.
  EXPECT_EQ(parse_timestamp("2026-11-03T23:30:00-01:00"),
            sys_seconds(kDay + days(1)) + minutes(30));
  for (const char* bad :
       {"2026-11-03T10:00:00.", "2026-11-03T10:00:00+2:00", "2026-11-03T10:00:00+24:00",
        "2026-11-03T10:00:00+02:60", "2026-11-03T10:00:00 Z", "2026-11-03T10:00:00+02:00x",
        "2026-11-03T10:00", "2026-11-03T10:00:00.5.5"}) {
    EXPECT_FALSE(parse_timestamp(bad)) << bad;
  }
}

TEST(JsonStrings, StayStringsWhateverTheyLookLike) {
  // One partition of list values printed as strings, then another: one type throughout.
  Table first = parse_json_lines(
      "{\"v\":\"1\"}\n{\"v\":\"010\"}\n{\"v\":\"2026-01-01\"}\n{\"v\":\"true\"}\n");
  Table second = parse_json_lines("{\"v\":\"v2\"}\n");
  EXPECT_EQ(first.schema(), (Schema{{"v", DataType::string}}));
  EXPECT_EQ(second.schema(), first.schema());
  EXPECT_EQ(first.column("v"), (std::vector<Value>{"1", "010", "2026-01-01", "true"}));
}

TEST(JsonStrings, OnlyTheTimeColumnBecomesDatesAndTimestamps) {
  Table t = parse_json_lines(
      "{\"date\":\"2026-11-03\",\"label\":\"2026-11-03\"}\n"
      "{\"date\":\"2026-11-03T12:00:00+02:00\",\"label\":\"v2\"}\n",
      ReadOptions{.time_column = "date"});
  EXPECT_EQ(t.schema(), (Schema{{"date", DataType::timestamp}, {"label", DataType::string}}));
  EXPECT_EQ(t.column("date"), (std::vector<Value>{sys_seconds(kDay), kTen}));
  // Text in the time column that is not a time stays text.
  Table text = parse_json_lines("{\"date\":\"soon\"}\n", ReadOptions{.time_column = "date"});
  EXPECT_EQ(text.at(0, "date"), Value("soon"));
}

TEST(JsonNumbers, IntegersBeyondInt64KeepTheirDigitsAsText) {
  Table t = parse_json_lines(
      "{\"u\":18446744073709551615,\"big\":99999999999999999999,\"neg\":-99999999999999999999,"
      "\"max\":9223372036854775807,\"x\":1e20}\n");
  EXPECT_EQ(t.row(0), (std::vector<Value>{"18446744073709551615", "99999999999999999999",
                                          "-99999999999999999999", 9223372036854775807LL, 1e20}));
  // Declared, they convert exactly as declared: text keeps the digits, double rounds by request.
  Schema declared{{"big", DataType::string}, {"x", DataType::string}};
  Table kept = parse_json_lines("{\"big\":99999999999999999999,\"x\":12}\n",
                                ReadOptions{.schema = declared});
  EXPECT_EQ(kept.row(0), (std::vector<Value>{"99999999999999999999", "12"}));
  expect_data_error(
      [] {
        parse_json_lines("{\"n\":99999999999999999999}\n",
                         ReadOptions{.schema = Schema{{"n", DataType::int64}}});
      },
      {"row 1 (line 1)", "'n'", "99999999999999999999", "int"});
}

TEST(JsonLines, InvalidUtf8IsRejected) {
  expect_data_error([] { parse_json_lines("{\"s\":\"ok\"}\n{\"s\":\"\xff\xfe\"}\n"); }, {"line 2"});
}

TEST(Csv, InferenceLosesNothing) {
  Table t = parse_csv(
      "zip,code,big,x,y,z,neg,zero\n"
      "01234,007,99999999999999999999,1.50,0.1000000000000000000001,1e5,-0,0\n");
  EXPECT_EQ(t.schema(), (Schema{{"zip", DataType::string},
                                {"code", DataType::string},
                                {"big", DataType::string},
                                {"x", DataType::float64},
                                {"y", DataType::string},
                                {"z", DataType::float64},
                                {"neg", DataType::string},
                                {"zero", DataType::int64}}));
  EXPECT_EQ(t.row(0), (std::vector<Value>{"01234", "007", "99999999999999999999", 1.5,
                                          "0.1000000000000000000001", 1e5, "-0", 0}));
  // A column mixing exact ints with a long one is text throughout: nothing becomes 1.0e+20.
  Table mixed = parse_csv("n\n1\n99999999999999999999\n");
  EXPECT_EQ(mixed.column("n"), (std::vector<Value>{"1", "99999999999999999999"}));
}

TEST(Csv, DatesOnlyInTheTimeColumn) {
  const char* text = "day,label\n2026-11-03,2026-11-03\n2026-11-03T10:00:00Z,x\n";
  Table plain = parse_csv(text);
  EXPECT_EQ(plain.schema(), (Schema{{"day", DataType::string}, {"label", DataType::string}}));
  Table timed = parse_csv(text, ReadOptions{.time_column = "day"});
  EXPECT_EQ(timed.column("day"), (std::vector<Value>{sys_seconds(kDay), kTen}));
}

TEST(Csv, InvalidUtf8IsRejected) {
  expect_data_error([] { parse_csv("a,b\nok,x\nfine,\xc3\x28\n"); }, {"line 3", "'b'", "UTF-8"});
  expect_data_error([] { parse_csv("a\n\"\xed\xa0\x80\"\n"); }, {"line 2", "UTF-8"});  // surrogate
  expect_data_error([] { parse_csv("\xc0\xaf\n1\n"); }, {"line 1", "UTF-8"});          // overlong
  Table ok = parse_csv("s\ncafé 🎉\n");
  EXPECT_EQ(ok.at(0, "s"), Value("café 🎉"));
}

TEST(DeclaredSchema, ConvertsDeclaredColumnsAndInfersTheRest) {
  Schema declared{{"zip", DataType::string},
                  {"amount", DataType::float64},
                  {"ts", DataType::timestamp},
                  {"missing", DataType::int64}};
  ReadOptions options{.schema = declared};
  Table json = parse_json_lines(
      "{\"zip\":1234,\"amount\":3,\"ts\":\"2026-11-03T12:00:00+02:00\",\"other\":\"007\"}\n"
      "{\"zip\":\"A1\",\"amount\":2.5,\"ts\":\"2026-11-03\",\"other\":\"x\"}\n",
      options);
  EXPECT_EQ(json.schema(), (Schema{{"zip", DataType::string},
                                   {"amount", DataType::float64},
                                   {"ts", DataType::timestamp},
                                   {"other", DataType::string},
                                   {"missing", DataType::int64}}));
  EXPECT_EQ(json.row(0), (std::vector<Value>{"1234", 3.0, kTen, "007", Value()}));
  Table csv = parse_csv(
      "zip,amount,ts,other\n01234,3,2026-11-03T10:00:00Z,007\nA1,2.5,2026-11-03,x\n", options);
  EXPECT_EQ(csv.schema(), json.schema());
  EXPECT_EQ(csv.row(0), (std::vector<Value>{"01234", 3.0, kTen, "007", Value()}));
}

TEST(DeclaredSchema, AFailedConversionNamesRowLineColumnAndValue) {
  ReadOptions options{.schema = Schema{{"amount", DataType::float64}}};
  expect_data_error([&] { parse_json_lines("{\"amount\":1}\n\n{\"amount\":\"n/a\"}\n", options); },
                    {"row 2 (line 3)", "'amount'", "\"n/a\"", "double"});
  expect_data_error([&] { parse_csv("amount\n1\n2\nn/a\n", options); },
                    {"row 3 (line 4)", "'amount'", "\"n/a\"", "double"});
}

TEST(Conform, ConvertsAddsAndNamesTheBadRow) {
  Table t;
  t.append({{"zip", 1234}, {"amount", 3}});
  t.append({{"zip", 99}, {"amount", Value()}});
  t.conform(Schema{
      {"zip", DataType::string}, {"amount", DataType::float64}, {"ts", DataType::timestamp}});
  EXPECT_EQ(t.schema(), (Schema{{"zip", DataType::string},
                                {"amount", DataType::float64},
                                {"ts", DataType::timestamp}}));
  EXPECT_EQ(t.row(1), (std::vector<Value>{"99", Value(), Value()}));

  Table bad;
  bad.append({{"n", "1"}});
  bad.append({{"n", "two"}});
  Table before = bad;
  expect_data_error(
      [&] {
        bad.conform(Schema{{"n", DataType::int64}});
      },
      {"row 2", "'n'", "\"two\"", "int"});
  EXPECT_EQ(bad, before);
  expect_data_error([&] { bad.conform(Schema{{"n", DataType::int64}}, 101); }, {"row 102"});
}

}  // namespace
}  // namespace interloper
