#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>

#include "data/test_helpers.hpp"

namespace interloper {
namespace {

using namespace std::chrono;
using testing::expect_data_error;

const sys_days kDay = year{2026} / 3 / 29;
const sys_seconds kTs = sys_seconds(kDay) + hours(1) + minutes(30) + seconds(5);

// Every type, nulls in every column, awkward strings.
Table sample() {
  Table t;
  t.append({{"d", kDay}, {"ts", kTs}, {"s", "plain"}, {"i", 1}, {"f", 0.1}, {"b", true}});
  t.append({{"d", Value()}, {"ts", Value()}, {"s", ""}, {"i", Value()}, {"f", 1.0}, {"b", false}});
  t.append({{"d", kDay + days(1)},
            {"ts", kTs + hours(30)},
            {"s", "a,b \"q\"\nline2\r\n\ttab \\"},
            {"i", -9007199254740993LL},
            {"f", Value()},
            {"b", Value()}});
  t.append(
      {{"d", kDay}, {"ts", kTs}, {"s", "ünïcödé 日本 🎉"}, {"i", 0}, {"f", -1e-300}, {"b", true}});
  t.append({{"d", kDay},
            {"ts", kTs},
            {"s", Value()},
            {"i", 9223372036854775807LL},
            {"f", 123456789.125},
            {"b", true}});
  t.add_column("nothing");
  return t;
}

TEST(JsonLines, WritesOneObjectPerRowInSchemaOrder) {
  Table t;
  t.append({{"date", kDay}, {"ts", kTs}, {"n", 1}, {"x", 2.0}, {"s", "a\"b\n"}, {"ok", true}});
  t.append({{"n", Value()}});
  EXPECT_EQ(to_json_lines(t),
            "{\"date\":\"2026-03-29\",\"ts\":\"2026-03-29T01:30:05\",\"n\":1,\"x\":2.0,"
            "\"s\":\"a\\\"b\\n\",\"ok\":true}\n"
            "{\"date\":null,\"ts\":null,\"n\":null,\"x\":null,\"s\":null,\"ok\":null}\n");
  std::ostringstream os;
  write_json_lines(t, os);
  EXPECT_EQ(os.str(), to_json_lines(t));
  EXPECT_EQ(to_json_lines(Table()), "");
}

TEST(JsonLines, ControlCharactersAreEscaped) {
  Table t;
  t.append({{"s", std::string("\x01\x1f", 2)}});
  EXPECT_EQ(to_json_lines(t), "{\"s\":\"\\u0001\\u001f\"}\n");
  EXPECT_EQ(parse_json_lines(to_json_lines(t)), t);
}

TEST(JsonLines, RoundTripWithoutSchemaKeepsEveryValue) {
  Table t = sample();
  Table back = parse_json_lines(to_json_lines(t));
  // Dates and timestamps come back as their text, which converts back exactly.
  EXPECT_EQ(back.schema().field(0).type, DataType::string);
  EXPECT_EQ(back.schema().field(1).type, DataType::string);
  back.conform(t.schema());
  EXPECT_EQ(back, t) << back << "\nvs\n" << t;
}

TEST(JsonLines, RoundTripWithDeclaredSchema) {
  Table t = sample();
  std::istringstream in(to_json_lines(t));
  Table back = read_json_lines(in, &t.schema());
  EXPECT_EQ(back, t);
}

TEST(JsonLines, DeclaredSchemaKeepsDateLikeStringsAsStrings) {
  Table t;
  t.append({{"s", "2026-01-05"}, {"d", "2026-01-05"}});
  Schema declared{{"s", DataType::string}, {"d", DataType::date}};
  Table back = parse_json_lines(to_json_lines(t), &declared);
  EXPECT_EQ(back.at(0, "s"), Value("2026-01-05"));
  EXPECT_EQ(back.at(0, "d"), Value(sys_days(year{2026} / 1 / 5)));
  // Without a schema both stay strings; only the time column becomes dates.
  Table inferred = parse_json_lines(to_json_lines(t));
  EXPECT_EQ(inferred.schema(), (Schema{{"s", DataType::string}, {"d", DataType::string}}));
  Table timed = parse_json_lines(to_json_lines(t), ReadOptions{.time_column = "d"});
  EXPECT_EQ(timed.schema(), (Schema{{"s", DataType::string}, {"d", DataType::date}}));
}

TEST(JsonLines, DeclaredSchemaConvertsAndAddsMissingColumns) {
  Schema declared{{"when", DataType::timestamp}, {"x", DataType::float64}, {"n", DataType::int64}};
  Table back = parse_json_lines(
      "{\"x\":1,\"when\":\"2026-03-29\"}\n\n{\"when\":\"2026-03-29 01:30:05Z\"}\n", &declared);
  EXPECT_EQ(back.schema(), declared);
  EXPECT_EQ(back.num_rows(), 2u);
  EXPECT_EQ(back.row(0), (std::vector<Value>{sys_seconds(kDay), 1.0, Value()}));
  EXPECT_EQ(back.row(1), (std::vector<Value>{kTs, Value(), Value()}));
}

TEST(JsonLines, DeclaredColumnsAreFoundInAnyOrderAndSpelling) {
  const Schema declared{{"a", DataType::int64},
                        {"q\"uote", DataType::string},
                        {"\xc3\xa9", DataType::float64},
                        {"d", DataType::date}};
  Table back = parse_json_lines(
      "{\"a\":1,\"q\\\"uote\":\"x\",\"\xc3\xa9\":0.5,\"d\":\"2026-03-29\"}\n"
      "{\"d\":\"2026-03-29\",\"\\u00e9\":2,\"q\\\"uote\":\"y\",\"\\u0061\":2}\n"
      "{\"a\":3,\"d\":\"2026-03-30\",\"a\":4}\n"
      "{\"d\":\"2026-03-30\",\"q\\\"uote\":\"2026-03-30\"}\n",
      &declared);
  ASSERT_EQ(back.num_rows(), 4u);
  EXPECT_EQ(back.row(0), (std::vector<Value>{1, "x", 0.5, kDay}));
  EXPECT_EQ(back.row(1), (std::vector<Value>{2, "y", 2.0, kDay}));
  EXPECT_EQ(back.row(2), (std::vector<Value>{4, Value(), Value(), kDay + days(1)}));
  EXPECT_EQ(back.row(3), (std::vector<Value>{Value(), "2026-03-30", Value(), kDay + days(1)}));
  expect_data_error([&] { parse_json_lines("{\"a\":1,\"b\":2}\n", &declared); },
                    {"line 1", "column 'b' is not in the declared schema"});
}

TEST(JsonLines, InferenceWidensAcrossLines) {
  Table t = parse_json_lines(
      "{\"x\":1,\"d\":\"2026-03-29\"}\n{\"x\":2.5,\"d\":\"2026-03-29T01:30:05\"}\n",
      ReadOptions{.time_column = "d"});
  EXPECT_EQ(t.schema(), (Schema{{"x", DataType::float64}, {"d", DataType::timestamp}}));
}

TEST(JsonLines, ErrorsNameTheLine) {
  expect_data_error([] { parse_json_lines("{\"a\":1}\n{\"a\":\n"); }, {"line 2", "malformed"});
  expect_data_error([] { parse_json_lines("{\"a\":1}\n\n[1,2]\n"); }, {"line 3", "object"});
  expect_data_error([] { parse_json_lines("{\"a\":{\"b\":1,}}\n"); }, {"line 1", "malformed"});
  expect_data_error([] { parse_json_lines("{\"a\":1}\n{\"a\":\"x\"}\n"); },
                    {"line 2", "'a'", "string", "int"});
  Schema declared{{"d", DataType::date}};
  expect_data_error(
      [&] { parse_json_lines("{\"d\":\"2026-03-29\"}\n\n{\"d\":\"soon\"}\n", &declared); },
      {"row 2 (line 3)", "'d'", "soon", "date"});
  expect_data_error([&] { parse_json_lines("{\"e\":1}\n", &declared); }, {"line 1", "'e'"});
}

// Doubles are written as the shortest text that reads back as them, spelled as std::to_chars
// spells it (".0" after a whole number), short decimals and every other value alike.
TEST(JsonLines, WritesEachDoubleAsToCharsSpellsIt) {
  std::mt19937_64 random(20261204);
  // Whole numbers, powers of ten either side of the switch to scientific, short decimals, the
  // extremes, and a value that needs all 17 digits.
  std::vector<double> values = {0.0,
                                -0.0,
                                1,
                                10,
                                100,
                                1e5,
                                12300,
                                2.5,
                                1e14,
                                1e15,
                                1e16,
                                1e-5,
                                1e21,
                                1e22,
                                1e23,
                                1.5e-9,
                                0.1,
                                0.001,
                                0.3,
                                -0.5,
                                99.99,
                                1e-10,
                                5e-324,
                                1234.56,
                                999999999999999.0,
                                123456789012345.6,
                                0.30000000000000004,
                                1.7976931348623157e308};
  const double powers[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
  for (int i = 0; i < 100000; ++i) {
    std::uint64_t scale = 1;
    for (auto k = random() % 17; k > 0; --k) scale *= 10;
    const auto n = static_cast<double>(random() % scale);
    values.push_back((random() % 2 ? -n : n) / powers[random() % 13]);
    const auto bits = random();
    double any;
    std::memcpy(&any, &bits, sizeof any);
    if (std::isfinite(any)) values.push_back(any);
  }
  Table t(Schema{{"x", DataType::float64}});
  std::string expected;
  for (double v : values) {
    t.append_row({Value(v)});
    char buf[40];
    std::string text(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    expected += "{\"x\":" + text + "}\n";
  }
  EXPECT_EQ(to_json_lines(t), expected);
}

TEST(JsonLines, NonFiniteDoubleCannotBeWritten) {
  Table t;
  t.append({{"f", std::numeric_limits<double>::infinity()}});
  expect_data_error([&] { to_json_lines(t); }, {"'f'", "row 1"});
}

TEST(Csv, WritesHeaderAndQuotesWhenNeeded) {
  Table t;
  t.append({{"d", kDay}, {"s", "a,b"}, {"n", 1}, {"x", 2.0}});
  t.append({{"s", ""}, {"n", Value()}});
  t.append({{"s", "say \"hi\""}});
  EXPECT_EQ(to_csv(t),
            "d,s,n,x\n"
            "2026-03-29,\"a,b\",1,2.0\n"
            ",\"\",,\n"
            ",\"say \"\"hi\"\"\",,\n");
  std::ostringstream os;
  write_csv(t, os);
  EXPECT_EQ(os.str(), to_csv(t));
}

TEST(Csv, RoundTripWithoutSchemaKeepsEveryValue) {
  Table t = sample();
  Table back = parse_csv(to_csv(t));
  EXPECT_EQ(back.schema().field(0).type, DataType::string);
  back.conform(t.schema());
  EXPECT_EQ(back, t) << back << "\nvs\n" << t;
}

TEST(Csv, RoundTripWithDeclaredSchema) {
  Table t;
  t.append({{"code", "007"}, {"flag", "true"}, {"when", kDay}, {"n", 5}, {"s", ""}});
  t.append({{"code", "12"}, {"flag", Value()}, {"when", sys_seconds(kDay)}, {"n", 2.0}});
  std::istringstream in(to_csv(t));
  Table back = read_csv(in, &t.schema());
  EXPECT_EQ(back, t);
  // Without the schema "007" stays text (an int would lose its zeros); "true" is a bool.
  Table inferred = parse_csv(to_csv(t));
  EXPECT_EQ(inferred.schema().field(0).type, DataType::string);
  EXPECT_EQ(inferred.schema().field(1).type, DataType::boolean);
}

TEST(Csv, InfersNarrowestType) {
  Table t = parse_csv(
      "b,i,f,d,ts,s,n,mixed\r\n"
      "true,1,1,2026-03-29,2026-03-29,x,,1\r\n"
      "false,-2,2.5,2026-03-30,2026-03-29T01:30:05,7,,true\r\n",
      ReadOptions{.time_column = "ts"});
  EXPECT_EQ(t.schema(), (Schema{{"b", DataType::boolean},
                                {"i", DataType::int64},
                                {"f", DataType::float64},
                                {"d", DataType::string},
                                {"ts", DataType::timestamp},
                                {"s", DataType::string},
                                {"n", DataType::null},
                                {"mixed", DataType::string}}));
  EXPECT_EQ(t.at(1, "ts"), Value(kTs));
  EXPECT_EQ(t.at(0, "ts"), Value(sys_seconds(kDay)));
  EXPECT_EQ(t.at(1, "s"), Value("7"));
}

TEST(Csv, QuotedFieldsSpanLines) {
  Table t = parse_csv("a,b\n\"x\ny\",1\n\"\",2\n");
  EXPECT_EQ(t.column("a"), (std::vector<Value>{"x\ny", ""}));
  EXPECT_EQ(t.column("b"), (std::vector<Value>{1, 2}));
}

TEST(Csv, SingleColumnNullRowsRoundTrip) {
  Table t;
  t.append({{"a", 1}});
  t.append({{"a", Value()}});
  EXPECT_EQ(parse_csv(to_csv(t)), t);
}

TEST(Csv, EmptyAndHeaderOnly) {
  EXPECT_EQ(parse_csv(""), Table());
  Table h = parse_csv("a,b\n");
  EXPECT_EQ(h.num_rows(), 0u);
  EXPECT_EQ(h.schema(), (Schema{{"a", DataType::null}, {"b", DataType::null}}));
  Schema declared{{"a", DataType::int64}, {"b", DataType::string}, {"c", DataType::date}};
  Table d = parse_csv("b,a\nx,1\n", &declared);
  EXPECT_EQ(d.schema(), declared);
  EXPECT_EQ(d.row(0), (std::vector<Value>{1, "x", Value()}));
}

TEST(Csv, ErrorsNameTheLine) {
  expect_data_error([] { parse_csv("a,b\n1,2\n\"x\ny\",3\n4\n"); }, {"line 5", "1 fields", "2"});
  expect_data_error([] { parse_csv("a\n1\n\"open\n"); }, {"line 3", "unterminated"});
  expect_data_error([] { parse_csv("a\n\"x\"y\n"); }, {"line 2", "closing quote"});
  expect_data_error([] { parse_csv("a,a\n1,2\n"); }, {"line 1", "'a'", "twice"});
  Schema declared{{"n", DataType::int64}};
  expect_data_error([&] { parse_csv("n\n1\nabc\n", &declared); },
                    {"row 2 (line 3)", "'n'", "abc", "int"});
  expect_data_error([&] { parse_csv("m\n1\n", &declared); }, {"line 1", "'m'"});
}

TEST(SchemaJson, RoundTrip) {
  Schema s{{"date", DataType::date}, {"clicks", DataType::int64}, {"we\"ird", DataType::null}};
  EXPECT_EQ(schema_to_json(Schema{{"date", DataType::date}, {"clicks", DataType::int64}}),
            "[{\"name\":\"date\",\"type\":\"date\"},{\"name\":\"clicks\",\"type\":\"int\"}]");
  EXPECT_EQ(schema_from_json(schema_to_json(s)), s);
  EXPECT_EQ(schema_from_json("[]"), Schema());
  expect_data_error([] { schema_from_json("[{\"name\":\"a\",\"type\":\"integer\"}]"); },
                    {"'integer'"});
  expect_data_error([] { schema_from_json("[{\"name\":\"a\"}]"); }, {"field 0"});
  expect_data_error([] { schema_from_json("{"); }, {"malformed"});
  expect_data_error([] { schema_from_json("{}"); }, {"array"});
}

}  // namespace
}  // namespace interloper

namespace interloper {
namespace {

TEST(JsonLines, ReadsUnicodeEscapesAndSkipsWhitespaceLines) {
  Table t = parse_json_lines("{\"s\":\"caf\\u00e9 \\ud83c\\udf89\"}\r\n   \n{\"s\":\"日本\"}");
  EXPECT_EQ(t.column("s"), (std::vector<Value>{"café 🎉", "日本"}));
  // What we write is what we read, byte for byte.
  EXPECT_EQ(to_json_lines(t), "{\"s\":\"café 🎉\"}\n{\"s\":\"日本\"}\n");
}

TEST(JsonLines, TopLevelScalarIsAnError) {
  testing::expect_data_error([] { parse_json_lines("5\n"); }, {"line 1", "object"});
  testing::expect_data_error([] { parse_json_lines("{\"a\":1} x\n"); }, {"line 1", "malformed"});
}

TEST(JsonLines, DuplicateKeyWithoutSchemaIsAnError) {
  testing::expect_data_error([] { parse_json_lines("{\"a\":1,\"a\":2}\n"); },
                             {"line 1", "'a'", "twice"});
}

}  // namespace
}  // namespace interloper
