// Parquet files written by the codec read back exactly, by the codec and by DuckDB itself.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "interloper/duckdb/duckdb.hpp"
#include "interloper/parquet/parquet.hpp"
#include "support/temp_dir.hpp"

namespace interloper::parquet {
namespace {

using namespace std::chrono;
using interloper::testing::TempDir;

Value::Timestamp micros(std::int64_t us) { return Value::Timestamp(microseconds(us)); }
Value::Timestamp at(year_month_day day, std::int64_t us_of_day = 0) {
  return Value::Timestamp(sys_days(day)) + microseconds(us_of_day);
}

__int128 nines(int digits) {
  __int128 v = 0;
  for (int i = 0; i < digits; ++i) v = v * 10 + 9;
  return v;
}

// Every value type, with the edges each has.
Table every_type() {
  Schema schema{{"b", DataType::boolean},
                {"i", DataType::int64},
                {"d", DataType::float64},
                {"s", DataType::string},
                {"day", DataType::date},
                {"ts", DataType::timestamp},
                {"money", DataType::decimal, 38, 2},
                {"wide", DataType::decimal, 38, 0},
                {"tiny", DataType::decimal, 38, 38},
                {"loose", DataType::decimal},
                {"j", DataType::json},
                {"nothing", DataType::null}};
  Table t(schema);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::int64_t min = std::numeric_limits<std::int64_t>::min();
  auto row = [&](std::vector<Value> cells) { t.append_row(std::move(cells)); };
  row({true, max, -0.0, "", year{1969} / 12 / 31, micros(-1), Decimal(nines(38), 2),
       Decimal(nines(38), 0), Decimal(nines(38), 38), Decimal(15, 1),
       parse_json(R"({"a":[1,2.5,"x"],"b":null})"), nullptr});
  row({false, min, 1e308, "ünïcødé 日本語 🚀", year{1} / 1 / 1, at(year{1900} / 1 / 1, 123456),
       Decimal(-nines(38), 2), Decimal(-nines(38), 0), Decimal(-1, 38), Decimal(-5, 3),
       parse_json("[1,[2,[3]]]"), nullptr});
  row({nullptr, 0, -1e308, "quote ' \" \\ \n tab\t", year{9999} / 12 / 31,
       at(year{2039} / 1 / 19, 3'600'000'000LL * 3 + 1), Decimal(0, 2), Decimal(0, 0),
       Decimal(0, 38), Decimal(123456789, 0), parse_json(R"("just a string")"), nullptr});
  row({true, -1, 5e-324, nullptr, year{2038} / 1 / 20, at(year{9999} / 12 / 31, 86'399'999'999LL),
       nullptr, nullptr, nullptr, nullptr, parse_json("null"), nullptr});
  row({nullptr, nullptr, nullptr, "x", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
       nullptr, nullptr});
  row({true, 1, std::numeric_limits<double>::infinity(), "€", year{1970} / 1 / 1, micros(0),
       Decimal(1, 2), Decimal(1, 0), Decimal(5, 1).rescaled(38).value(), Decimal(-1, 0),
       parse_json("3.25"), nullptr});
  return t;
}

TEST(ParquetRoundTrip, EveryTypeAndEdgeReadsBackExactly) {
  TempDir dir("il-parquet");
  const Table t = every_type();
  const std::string path = dir / "all.parquet";
  EXPECT_EQ(write_file(path, t), t.num_rows());
  const Table back = read_file(path, &t.schema());
  EXPECT_EQ(back, t) << back;
  // == treats -0.0 and 0.0 alike: the sign bit is checked on its own.
  EXPECT_TRUE(std::signbit(back.at(0, "d").as_double()));
  EXPECT_EQ(back.at(1, "ts").as_timestamp(), at(year{1900} / 1 / 1, 123456));
  EXPECT_EQ(back.at(0, "money").as_decimal().to_string(),
            "999999999999999999999999999999999999.99");
  EXPECT_EQ(back.at(0, "j").as_json().text, R"({"a":[1,2.5,"x"],"b":null})");
}

TEST(ParquetRoundTrip, WithoutADeclaredSchemaTheFileSaysTheTypes) {
  TempDir dir("il-parquet");
  const Table t = every_type();
  const std::string path = dir / "all.parquet";
  write_file(path, t);
  const Schema schema = file_schema(path);
  EXPECT_EQ(schema.to_string(),
            "b: bool, i: int, d: double, s: string, day: date, ts: timestamp, "
            "money: decimal(38,2), wide: decimal(38,0), tiny: decimal(38,38), "
            "loose: decimal(38,3), j: json, nothing: string");
  const Table back = read_file(path);
  EXPECT_EQ(back.schema(), schema);
  for (std::size_t c = 0; c + 1 < t.num_columns(); ++c) {
    EXPECT_EQ(back.column(c), t.column(c)) << t.schema().field(c).name;
  }
  // An undeclared decimal column takes the largest scale of its values (-0.005 has 3): 1.5
  // reads back as 1.500, the same number.
  EXPECT_EQ(back.at(0, "loose").as_decimal().to_string(), "1.500");
  EXPECT_EQ(back.at(1, "loose").as_decimal(), Decimal(-5, 3));
}

TEST(ParquetRoundTrip, DuckDBReadsTheFileWithItsOwnReadParquet) {
  TempDir dir("il-parquet");
  const Table t = every_type();
  const std::string path = dir / "all.parquet";
  write_file(path, t);
  duckdb::Database db;
  duckdb::Connection con(db);
  duckdb::Statement types = con.prepare(
      "SELECT concat_ws(',', typeof(b), typeof(i), typeof(d), typeof(s), typeof(day), typeof(ts), "
      "typeof(money), typeof(loose), typeof(j)) FROM read_parquet(?) LIMIT 1");
  types.bind_text(1, path);
  duckdb::Result r = types.execute();
  std::optional<duckdb::Chunk> chunk = r.next();
  ASSERT_TRUE(chunk);
  EXPECT_EQ(chunk->text(0, 0),
            "BOOLEAN,BIGINT,DOUBLE,VARCHAR,DATE,TIMESTAMP WITH TIME ZONE,DECIMAL(38,2),"
            "DECIMAL(38,3),JSON");
  // Each row as DuckDB prints it; timestamps as microseconds since 1970 UTC.
  duckdb::Statement rows = con.prepare(
      "SELECT concat_ws('|', coalesce(b::VARCHAR, 'null'), coalesce(i::VARCHAR, 'null'), "
      "coalesce(d::VARCHAR, 'null'), coalesce(s, 'null'), coalesce(day::VARCHAR, 'null'), "
      "coalesce(epoch_us(ts)::VARCHAR, 'null'), coalesce(money::VARCHAR, 'null'), "
      "coalesce(wide::VARCHAR, 'null'), coalesce(j::VARCHAR, 'null'), "
      "coalesce(nothing, 'null')) FROM read_parquet(?)");
  rows.bind_text(1, path);
  duckdb::Result all = rows.execute();
  std::vector<std::string> got;
  while (std::optional<duckdb::Chunk> c = all.next()) {
    for (std::size_t row = 0; row < c->size(); ++row) got.emplace_back(c->text(0, row));
  }
  ASSERT_EQ(got.size(), t.num_rows());
  EXPECT_EQ(got[0],
            "true|9223372036854775807|-0.0||1969-12-31|-1|999999999999999999999999999999999999.99|"
            "99999999999999999999999999999999999999|{\"a\":[1,2.5,\"x\"],\"b\":null}|null");
  EXPECT_EQ(got[1],
            "false|-9223372036854775808|1e+308|ünïcødé 日本語 🚀|0001-01-01|-2208988799876544|"
            "-999999999999999999999999999999999999.99|-99999999999999999999999999999999999999|"
            "[1,[2,[3]]]|null");
  EXPECT_EQ(got[3].substr(0, got[3].find('|', 20)), "true|-1|5e-324|null|2038-01-20");
  EXPECT_NE(got[3].find("|253402300799999999|"), std::string::npos) << got[3];
  EXPECT_NE(got[2].find("|2179018800000001|"), std::string::npos) << got[2];
}

TEST(ParquetRoundTrip, StreamsBatchesInAndOut) {
  TempDir dir("il-parquet");
  Schema schema{{"n", DataType::int64}, {"name", DataType::string}, {"x", DataType::float64}};
  const std::string path = dir / "many.parquet";
  Writer writer(path, schema);
  Table expected(schema);
  std::int64_t n = 0;
  for (int b = 0; b < 7; ++b) {
    Table batch(schema);
    for (int r = 0; r < 3001; ++r, ++n) {
      // An int in a double column enters as a double (as Table::conform converts).
      batch.append_row({n, "name " + std::to_string(n), n % 3 == 0 ? Value(nullptr) : Value(n)});
      expected.append_row({n, "name " + std::to_string(n),
                           n % 3 == 0 ? Value(nullptr) : Value(static_cast<double>(n))});
    }
    writer.append(batch);
  }
  EXPECT_EQ(writer.finish(), 7u * 3001u);
  std::vector<std::size_t> sizes;
  Table back(schema);
  read_file(
      path,
      [&](Table&& batch) {
        sizes.push_back(batch.num_rows());
        back.append_table(std::move(batch));
      },
      &schema, 5000);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{5000, 5000, 5000, 5000, 1007}));
  EXPECT_EQ(back, expected);
}

TEST(ParquetRoundTrip, BatchesMayLackColumnsAndListThemInAnyOrder) {
  TempDir dir("il-parquet");
  Schema schema{{"a", DataType::int64}, {"b", DataType::string}};
  const std::string path = dir / "cols.parquet";
  Writer writer(path, schema);
  Table only_b;
  only_b.append({{"b", "x"}});
  writer.append(only_b);
  Table reversed;
  reversed.append({{"b", "y"}, {"a", 2}});
  writer.append(reversed);
  writer.finish();
  Table expected(schema);
  expected.append_row({nullptr, "x"});
  expected.append_row({2, "y"});
  EXPECT_EQ(read_file(path, &schema), expected);
}

TEST(ParquetRoundTrip, AWriterDroppedWithoutFinishLeavesNoFile) {
  TempDir dir("il-parquet");
  Schema schema{{"n", DataType::int64}};
  for (bool with_rows : {false, true}) {
    const std::string path = dir / "dropped.parquet";
    {
      Writer writer(path, schema);
      Table batch(schema);
      for (int i = 0; i < 5000 && with_rows; ++i) batch.append_row({i});
      writer.append(batch);
    }
    EXPECT_FALSE(std::filesystem::exists(path)) << with_rows;
  }
}

TEST(ParquetRoundTrip, AFileThereIsReplaced) {
  TempDir dir("il-parquet");
  const std::string path = dir / "again.parquet";
  Table first;
  for (int i = 0; i < 1000; ++i) first.append({{"i", i}});
  write_file(path, first);
  Table second;
  second.append({{"s", "only row"}});
  write_file(path, second);
  EXPECT_EQ(read_file(path), second);
}

TEST(ParquetRoundTrip, AnEmptyTableIsAFileWithColumnsAndNoRows) {
  TempDir dir("il-parquet");
  Schema schema{{"a", DataType::int64}, {"when", DataType::timestamp}};
  const std::string path = dir / "empty.parquet";
  EXPECT_EQ(write_file(path, Table(schema)), 0u);
  int batches = 0;
  read_file(path, [&](Table&& batch) {
    ++batches;
    EXPECT_EQ(batch, Table(schema));
  });
  EXPECT_EQ(batches, 1);
}

TEST(ParquetRoundTrip, NaNAndInfinityAreDoublesLikeAnyOther) {
  TempDir dir("il-parquet");
  Table t;
  t.append({{"d", std::numeric_limits<double>::quiet_NaN()}});
  t.append({{"d", -std::numeric_limits<double>::infinity()}});
  const std::string path = dir / "nan.parquet";
  write_file(path, t);
  const Table back = read_file(path);
  EXPECT_TRUE(std::isnan(back.at(0, "d").as_double()));
  EXPECT_EQ(back.at(1, "d"), Value(-std::numeric_limits<double>::infinity()));
}

}  // namespace
}  // namespace interloper::parquet

namespace interloper::parquet {
namespace {

// More rows than the writer's memory limit holds: streamed, and staged (an undeclared decimal
// column), where DuckDB spills them to the given directory.
TEST(ParquetRoundTrip, APartitionLargerThanTheMemoryLimitIsWritten) {
  for (bool staged : {false, true}) {
    TempDir dir("il-parquet");
    Schema schema{{"n", DataType::int64}, {"text", DataType::string}};
    if (staged) schema.add({"loose", DataType::decimal});
    const std::string path = dir / "big.parquet";
    std::filesystem::create_directories(dir / "spill");
    WriteOptions options{.temp_directory = dir / "spill", .memory_limit = "32MB", .threads = 1};
    constexpr std::int64_t kRows = 600'000;
    {
      Writer writer(path, schema, options);
      for (std::int64_t first = 0; first < kRows; first += 10'000) {
        Table batch(schema);
        for (std::int64_t n = first; n < first + 10'000; ++n) {
          std::vector<Value> row{n, "a string long enough not to be inlined " + std::to_string(n)};
          if (staged) row.emplace_back(Decimal(n, 2));
          batch.append_row(std::move(row));
        }
        writer.append(batch);
      }
      EXPECT_EQ(writer.finish(), static_cast<std::uint64_t>(kRows));
    }
    std::int64_t rows = 0;
    std::int64_t sum = 0;
    bool ordered = true;
    read_file(path, [&](Table&& batch) {
      for (std::size_t r = 0; r < batch.num_rows(); ++r) {
        const std::int64_t n = batch.at(r, "n").as_int();
        ordered = ordered && n == rows;
        if (staged) ordered = ordered && batch.at(r, "loose") == Value(Decimal(n, 2));
        sum += n;
        ++rows;
      }
    });
    EXPECT_EQ(rows, kRows) << staged;
    EXPECT_EQ(sum, kRows * (kRows - 1) / 2) << staged;
    EXPECT_TRUE(ordered) << staged;
    EXPECT_TRUE(std::filesystem::exists(dir / "spill"));  // the caller's directory is kept
  }
}

TEST(ParquetRoundTrip, TheWritersOwnTemporaryDirectoryGoesWithIt) {
  TempDir dir("il-parquet");
  auto count = [] {
    std::size_t n = 0;
    for (const auto& e :
         std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
      n += e.path().filename().string().rfind("interloper-parquet-", 0) == 0;
    }
    return n;
  };
  const std::size_t before = count();
  {
    Writer writer(dir / "x.parquet", Schema{{"a", DataType::int64}});
    EXPECT_EQ(count(), before + 1);
  }
  EXPECT_EQ(count(), before);
}

}  // namespace
}  // namespace interloper::parquet
