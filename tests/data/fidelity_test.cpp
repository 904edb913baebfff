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

TEST(Timestamps, Rfc3339OffsetsAndFractionsBecomeUtcMicroseconds) {
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00+00:00"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00Z"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03t10:00:00z"), kTen);
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00+00"), kTen);  // as PostgreSQL prints it
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00.123456"), kTen + microseconds(123456));
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00.5"), kTen + milliseconds(500));
  EXPECT_EQ(parse_timestamp("2026-11-03T10:00:00.000000"), kTen);
  // More than six digits is refused, never rounded.
  EXPECT_FALSE(parse_timestamp("2026-11-03T10:00:00.999999999Z"));
  EXPECT_TRUE(timestamp_too_precise("2026-11-03T10:00:00.1234567Z"));
  EXPECT_FALSE(timestamp_too_precise("2026-11-03T10:00:00.123456Z"));
  EXPECT_FALSE(timestamp_too_precise("soon"));
  // Python: datetime(2026, 11, 3, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
  //         .isoformat()
  EXPECT_EQ(parse_timestamp("2026-11-03T12:00:00.123456+02:00"), kTen + microseconds(123456));
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

// SQLite's SUM of decimal text is a double: 0.10 + 0.20 gives 0.30000000000000004, which a
// decimal(38,2) cannot hold. The message says the value was a double, not a decimal as given.
TEST(Conform, ADoubleTooPreciseForADecimalIsNamedAsADouble) {
  Table t;
  t.append({{"revenue", 0.1 + 0.2}});
  Field revenue{"revenue", DataType::decimal, 38, 2};
  expect_data_error([&] { t.conform(Schema{revenue}); },
                    {"row 1", "'revenue'", "double 0.30000000000000004", "decimal(38,2)",
                     "a double is not exact"});
  Table exact;
  exact.append({{"revenue", 0.5}});
  exact.conform(Schema{revenue});
  EXPECT_EQ(exact.row(0)[0].as_decimal().to_string(), "0.50");
  Table wide;
  wide.append({{"revenue", Value(*Decimal::parse("1.234"))}});
  try {
    wide.conform(Schema{revenue});
    ADD_FAILURE() << "1.234 fitted decimal(38,2)";
  } catch (const DataError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("decimal 1.234 does not fit"), std::string::npos) << message;
    EXPECT_EQ(message.find("double"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace interloper

namespace interloper {
namespace {

using namespace std::chrono;
using testing::expect_data_error;

const sys_seconds kEleven = sys_seconds(sys_days(year{2026} / 11 / 1)) + hours(10);

TEST(Microseconds, PrintOnlyWhenThereIsAFraction) {
  EXPECT_EQ(Value(kEleven).to_string(), "2026-11-01T10:00:00");
  EXPECT_EQ(Value(kEleven + microseconds(123456)).to_string(), "2026-11-01T10:00:00.123456");
  EXPECT_EQ(Value(kEleven + milliseconds(500)).to_string(), "2026-11-01T10:00:00.500000");
  // Before the epoch the fraction still counts forward from the whole second.
  EXPECT_EQ(Value(sys_seconds(sys_days(year{1969} / 12 / 31)) + hours(23) + minutes(59) +
                  seconds(59) + microseconds(1))
                .to_string(),
            "1969-12-31T23:59:59.000001");
}

TEST(Microseconds, RoundTripThroughJsonLinesAndCsv) {
  Table t;
  t.append({{"at", Value(kEleven + microseconds(123456))}, {"n", 1}});
  t.append({{"at", Value(kEleven)}, {"n", 2}});
  const std::string json = to_json_lines(t);
  EXPECT_EQ(json,
            "{\"at\":\"2026-11-01T10:00:00.123456\",\"n\":1}\n"
            "{\"at\":\"2026-11-01T10:00:00\",\"n\":2}\n");
  EXPECT_EQ(parse_json_lines(json, &t.schema()), t);
  EXPECT_EQ(parse_csv(to_csv(t), &t.schema()), t);
  // Read from a command's output with a zone, in the time column.
  Table read = parse_json_lines("{\"at\":\"2026-11-01T10:00:00.123456Z\"}\n",
                                ReadOptions{.time_column = "at"});
  EXPECT_EQ(read.at(0, "at"), Value(kEleven + microseconds(123456)));
}

TEST(Microseconds, SevenDigitsAreRefusedNamingTheColumnAndTheRow) {
  const std::string seven = "2026-11-01T10:00:00.1234567Z";
  const std::string json = "{\"at\":\"2026-11-01T10:00:00Z\"}\n{\"at\":\"" + seven + "\"}\n";
  for (const ReadOptions& options :
       {ReadOptions{.schema = Schema{{"at", DataType::timestamp}}},
        ReadOptions{.schema = Schema{{"at", DataType::timestamp}}, .only_declared = true},
        ReadOptions{.time_column = "at"}}) {
    expect_data_error([&] { parse_json_lines(json, options); },
                      {"row 2", "'at'", seven, "more than six fractional digits"});
  }
  const std::string csv = "at\n2026-11-01T10:00:00Z\n" + seven + "\n";
  expect_data_error(
      [&] {
        parse_csv(csv, ReadOptions{.schema = {{"at", DataType::timestamp}}});
      },
      {"row 2", "'at'", seven, "more than six fractional digits"});
  expect_data_error([&] { parse_csv(csv, ReadOptions{.time_column = "at"}); },
                    {"line 3", "'at'", seven, "more than six fractional digits"});
  expect_data_error([&] { convert(Value(seven), DataType::timestamp); }, {seven, "more than six"});
}

TEST(Decimals, ParseKeepEveryDigitAndCompareAsNumbers) {
  const Decimal d = *Decimal::parse("12345678901234567890.12");
  EXPECT_EQ(d.scale(), 2);
  EXPECT_EQ(d.digits(), 22);
  EXPECT_EQ(d.to_string(), "12345678901234567890.12");
  EXPECT_EQ(Decimal::parse("-0.05")->to_string(), "-0.05");
  EXPECT_EQ(Decimal::parse("1.5e3")->to_string(), "1500");
  EXPECT_EQ(Decimal::parse("15e-3")->to_string(), "0.015");
  EXPECT_EQ(Decimal::parse("+7")->to_string(), "7");
  EXPECT_EQ(*Decimal::parse("1.5"), *Decimal::parse("1.50"));
  EXPECT_FALSE(*Decimal::parse("1.5") == *Decimal::parse("1.51"));
  EXPECT_EQ(Decimal::parse("99999999999999999999999999999999999999")->digits(), 38);
  EXPECT_FALSE(Decimal::parse("100000000000000000000000000000000000000"));  // 39 digits
  EXPECT_FALSE(Decimal::parse("1e38"));
  for (const char* bad : {"", "-", ".", "1.2.3", "abc", "1e", "nan", "1,5", "0x10"})
    EXPECT_FALSE(Decimal::parse(bad)) << bad;
  EXPECT_EQ(Decimal::parse("12.5")->rescaled(2)->to_string(), "12.50");
  EXPECT_FALSE(Decimal::parse("12.345")->rescaled(2));  // a digit would be lost
  EXPECT_TRUE(Decimal::parse("12.340")->fits(4, 2));
  EXPECT_FALSE(Decimal::parse("123.4")->fits(4, 2));
  EXPECT_EQ(Value(*Decimal::parse("0.1")).as_double(), 0.1);
}

TEST(Decimals, DeclaredJsonNumbersKeepTheirDigits) {
  const Schema declared{{"amount", DataType::decimal, 38, 2}};
  const std::string text =
      "{\"amount\":12345678901234567890.12}\n{\"amount\":0.1}\n{\"amount\":\"7\"}\n"
      "{\"amount\":3}\n{\"amount\":null}\n";
  for (bool only : {false, true}) {
    Table t = parse_json_lines(text, ReadOptions{.schema = declared, .only_declared = only});
    EXPECT_EQ(t.schema(), declared);
    std::vector<std::string> shown;
    for (const Value& v : t.column("amount")) shown.push_back(v.to_string());
    EXPECT_EQ(shown, (std::vector<std::string>{"12345678901234567890.12", "0.10", "7.00", "3.00",
                                               "null"}));
    EXPECT_EQ(to_json_lines(t).substr(0, 36), "{\"amount\":12345678901234567890.12}\n{");
    EXPECT_EQ(parse_json_lines(to_json_lines(t), &t.schema()), t);
    EXPECT_EQ(parse_csv(to_csv(t), &t.schema()), t);
  }
  // Undeclared, a fraction stays a double (inference keeps doubles).
  EXPECT_EQ(parse_json_lines("{\"x\":0.5}\n").schema(), (Schema{{"x", DataType::float64}}));
  expect_data_error(
      [&] {
        parse_json_lines("{\"amount\":1}\n{\"amount\":1.234}\n", ReadOptions{.schema = declared});
      },
      {"row 2 (line 2)", "'amount'", "1.234", "decimal(38,2)"});
  expect_data_error(
      [] {
        parse_json_lines("{\"a\":1234.5}\n",
                         ReadOptions{.schema = {{"a", DataType::decimal, 5, 2}}});
      },
      {"row 1", "'a'", "1234.5", "decimal(5,2)"});
  expect_data_error([&] { parse_csv("amount\n1.5\n99.999\n", ReadOptions{.schema = declared}); },
                    {"row 2", "'amount'", "99.999"});
}

TEST(Decimals, SchemasSpellTheirSize) {
  EXPECT_EQ(field_of_type("a", "decimal(38,2)"), (Field{"a", DataType::decimal, 38, 2}));
  EXPECT_EQ(field_of_type("a", "decimal(10)"), (Field{"a", DataType::decimal, 10, 0}));
  EXPECT_EQ(field_of_type("a", "decimal( 12, 4 )"), (Field{"a", DataType::decimal, 12, 4}));
  EXPECT_EQ(field_of_type("a", "decimal"), (Field{"a", DataType::decimal, 0, 0}));
  EXPECT_EQ(field_of_type("a", "json"), (Field{"a", DataType::json}));
  for (const char* bad : {"decimal(39,2)", "decimal(0)", "decimal(5,6)", "decimal(a,b)",
                          "decimal(5,-1)", "decimal()", "decimal(5,2"})
    EXPECT_THROW(field_of_type("a", bad), DataError) << bad;
  const Schema s{{"a", DataType::decimal, 38, 2}, {"j", DataType::json}};
  EXPECT_EQ(s.to_string(), "a: decimal(38,2), j: json");
  EXPECT_EQ(schema_from_json(schema_to_json(s)), s);
}

TEST(Json, NestedValuesAreKeptAsCanonicalText) {
  Table t = parse_json_lines(
      "{\"id\":1,\"tags\":[\"a\", \"b\"],\"meta\":{\"z\": 1, \"a\": {\"k\": [1.50, 1e2, -0]}}}\n"
      "{\"id\":2,\"tags\":[],\"meta\":{}}\n");
  EXPECT_EQ(t.schema(),
            (Schema{{"id", DataType::int64}, {"tags", DataType::json}, {"meta", DataType::json}}));
  EXPECT_EQ(t.at(0, "tags").to_string(), "[\"a\",\"b\"]");
  EXPECT_EQ(t.at(0, "meta").to_string(), "{\"a\":{\"k\":[1.50,100,0]},\"z\":1}");
  EXPECT_EQ(to_json_lines(t),
            "{\"id\":1,\"tags\":[\"a\",\"b\"],\"meta\":{\"a\":{\"k\":[1.50,100,0]},\"z\":1}}\n"
            "{\"id\":2,\"tags\":[],\"meta\":{}}\n");
  EXPECT_EQ(parse_json_lines(to_json_lines(t), &t.schema()), t);
  EXPECT_EQ(to_csv(t).substr(0, 30), "id,tags,meta\n1,\"[\"\"a\"\",\"\"b\"\"]\"");
  EXPECT_EQ(parse_csv(to_csv(t), &t.schema()), t);
  // Declared string: the JSON text; declared json: scalars too.
  Table s = parse_json_lines("{\"tags\":[1, {\"b\":2,\"a\":1}]}\n{\"tags\":\"plain\"}\n",
                             ReadOptions{.schema = {{"tags", DataType::string}}});
  EXPECT_EQ(s.column("tags"), (std::vector<Value>{"[1,{\"a\":1,\"b\":2}]", "plain"}));
  Table j = parse_json_lines("{\"v\":\"plain\"}\n{\"v\":12}\n{\"v\":null}\n",
                             ReadOptions{.schema = {{"v", DataType::json}}, .only_declared = true});
  EXPECT_EQ(j.column("v"), (std::vector<Value>{Json{"\"plain\""}, Json{"12"}, Value()}));
  // Repeated names: the last wins; shorter names sort first.
  EXPECT_EQ(parse_json(R"({"bb":1,"a":2,"a":3})").text, R"({"a":3,"bb":1})");
  EXPECT_EQ(parse_json(" \"\\u00e9\\n\" ").text, "\"\xc3\xa9\\n\"");
  for (const char* bad : {"[1,]", "{\"a\"}", "[", "{\"a\":1,}", "01", "[1] 2", ""})
    EXPECT_THROW(parse_json(bad), DataError) << bad;
  // Hostile nesting is refused, not a stack overflow.
  EXPECT_THROW(parse_json(std::string(100000, '[') + std::string(100000, ']')), DataError);
  expect_data_error([] { parse_json_lines("{\"a\":[1,}\n"); }, {"line 1", "malformed JSON"});
  expect_data_error(
      [] {
        parse_csv("j\n[1\n", ReadOptions{.schema = {{"j", DataType::json}}});
      },
      {"row 1", "'j'", "malformed JSON"});
}

}  // namespace
}  // namespace interloper
