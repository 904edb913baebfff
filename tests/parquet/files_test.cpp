// Parquet files written by DuckDB itself, and what the codec refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "interloper/duckdb/duckdb.hpp"
#include "interloper/parquet/parquet.hpp"
#include "support/expect.hpp"
#include "support/temp_dir.hpp"

namespace interloper::parquet {
namespace {

using interloper::testing::TempDir;

// Runs `sql` with `{}` standing for the quoted path `path`, in a database of its own.
void duckdb_writes(const std::string& path, const std::string& select) {
  duckdb::Database db;
  duckdb::Connection con(db);
  con.execute("COPY (" + select + ") TO '" + path + "' (FORMAT parquet)");
}

TEST(ParquetFiles, AFileWrittenByDuckDBIsRead) {
  TempDir dir("il-parquet");
  const std::string path = dir / "duck.parquet";
  duckdb_writes(path,
                "SELECT i::INTEGER AS small, i::SMALLINT AS smaller, (i / 4)::FLOAT AS f, "
                "(i * 1000000000000)::UBIGINT AS ub, (i::HUGEINT * "
                "10000000000000000000::HUGEINT)::DECIMAL(38,0) AS huge, "
                "(i / 8)::DECIMAL(4,1) AS d16, (i / 8)::DECIMAL(9,2) AS d32, "
                "(i / 8)::DECIMAL(18,3) AS d64, "
                "TIMESTAMP '2026-11-03 10:00:00' + INTERVAL (i) MINUTE AS naive, "
                "'2026-11-03 10:00:00.123456789'::TIMESTAMP_NS AS nanos, "
                "[i, i + 1] AS list, {'k': i, 'v': 'x' || i} AS struct, "
                "MAP {'a': i} AS map, 'bytes'::BLOB AS blob, "
                "'1d3a6a35-3bbf-4e6c-8c3a-0a9fa2f6e0a1'::UUID AS id, "
                "CASE WHEN i % 2 = 0 THEN NULL ELSE 'odd' END AS maybe "
                "FROM range(5) t(i)");
  const Table t = read_file(path);
  EXPECT_EQ(t.num_rows(), 5u);
  EXPECT_EQ(t.schema().to_string(),
            "small: int, smaller: int, f: double, ub: decimal(38,0), huge: decimal(38,0), "
            "d16: decimal(4,1), d32: decimal(9,2), d64: decimal(18,3), naive: timestamp, "
            "nanos: timestamp, list: json, struct: json, map: json, blob: string, id: string, "
            "maybe: string");
  EXPECT_EQ(t.at(3, "small"), Value(3));
  EXPECT_EQ(t.at(3, "f"), Value(0.75));
  EXPECT_EQ(t.at(3, "ub").as_decimal().to_string(), "3000000000000");
  EXPECT_EQ(t.at(3, "huge").as_decimal().to_string(), "30000000000000000000");
  EXPECT_EQ(t.at(3, "d16").as_decimal().to_string(), "0.4");
  EXPECT_EQ(t.at(3, "d32").as_decimal().to_string(), "0.38");
  EXPECT_EQ(t.at(3, "d64").as_decimal().to_string(), "0.375");
  EXPECT_EQ(t.at(3, "naive").to_string(), "2026-11-03T10:03:00");
  EXPECT_EQ(t.at(0, "nanos").to_string(), "2026-11-03T10:00:00.123456");
  EXPECT_EQ(t.at(3, "list").as_json().text, "[3,4]");
  EXPECT_EQ(t.at(3, "struct").as_json().text, R"({"k":3,"v":"x3"})");
  EXPECT_EQ(t.at(3, "map").as_json().text, R"({"a":3})");
  EXPECT_EQ(t.at(3, "blob"), Value("bytes"));
  EXPECT_EQ(t.at(3, "id"), Value("1d3a6a35-3bbf-4e6c-8c3a-0a9fa2f6e0a1"));
  EXPECT_TRUE(t.at(2, "maybe").is_null());
  EXPECT_EQ(t.at(3, "maybe"), Value("odd"));
}

TEST(ParquetFiles, ADeclaredSchemaConvertsWhatTheFileHolds) {
  TempDir dir("il-parquet");
  const std::string path = dir / "duck.parquet";
  duckdb_writes(path, "SELECT i::INTEGER AS n, (i / 2)::DECIMAL(9,1) AS amount FROM range(3) t(i)");
  Schema declared{{"n", DataType::float64},
                  {"amount", DataType::decimal, 12, 3},
                  {"missing", DataType::string}};
  const Table t = read_file(path, &declared);
  EXPECT_EQ(t.schema(), declared);
  EXPECT_EQ(t.at(2, "n"), Value(2.0));
  EXPECT_EQ(t.at(2, "amount").as_decimal().to_string(), "1.000");
  EXPECT_TRUE(t.at(2, "missing").is_null());
  Schema impossible{{"n", DataType::date}};
  IL_EXPECT_THROW_WITH(read_file(path, &impossible), DataError, path);
}

TEST(ParquetFiles, ACorruptFileIsAClearErrorNamingIt) {
  TempDir dir("il-parquet");
  const std::string garbage = dir.write("garbage.parquet", "this is not parquet at all").string();
  IL_EXPECT_THROW_WITH(read_file(garbage), DataError, "parquet '" + garbage + "': cannot be read");
  IL_EXPECT_THROW_WITH(file_schema(garbage), DataError, garbage);
  // A real file cut in half: its footer is gone.
  const std::string good = dir / "good.parquet";
  Table t;
  for (int i = 0; i < 10000; ++i) t.append({{"i", i}, {"s", "row " + std::to_string(i)}});
  write_file(good, t);
  const std::string cut = dir / "cut.parquet";
  std::filesystem::copy_file(good, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(good) / 2);
  IL_EXPECT_THROW_WITH(read_file(cut), DataError, "parquet '" + cut + "'");
  // Damaged bytes in the middle, footer intact: the error comes while the rows are read.
  const std::string damaged = dir / "damaged.parquet";
  std::filesystem::copy_file(good, damaged);
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64);
    const std::string junk(2000, '\xff');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  IL_EXPECT_THROW_WITH(read_file(damaged), DataError, "parquet '" + damaged + "'");
  IL_EXPECT_THROW_WITH(read_file(dir / "missing.parquet"), DataError, "missing.parquet");
}

TEST(ParquetFiles, AColumnNamedLikeAHiveDirectoryIsRefused) {
  TempDir dir("il-parquet");
  IL_EXPECT_THROW_WITH(Writer(dir / "x.parquet", Schema{{"date=2026-11-03", DataType::date}}),
                       DataError, "column 'date=2026-11-03' has '=' or '/' in its name");
  IL_EXPECT_THROW_WITH(Writer(dir / "x.parquet", Schema{{"a/b", DataType::int64}}), DataError,
                       "Hive directory");
  IL_EXPECT_THROW_WITH(
      Writer(dir / "x.parquet", Schema{{"Amount", DataType::int64}, {"amount", DataType::int64}}),
      DataError, "differ only by case");
  IL_EXPECT_THROW_WITH(Writer(dir / "x.parquet", Schema{}), DataError, "at least one column");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.parquet"));
}

TEST(ParquetFiles, AFileThatCannotBeWrittenIsADestinationErrorNamingIt) {
  TempDir dir("il-parquet");
  const std::string path = dir / "no/such/dir/x.parquet";
  Table t;
  t.append({{"a", 1}});
  IL_EXPECT_THROW_WITH(
      {
        Writer writer(path, t.schema());
        writer.append(t);
        writer.finish();
      },
      DestinationError, "no/such/dir/x.parquet");
}

TEST(ParquetFiles, ValuesAColumnCannotHoldAreRefusedNamingRowAndColumn) {
  TempDir dir("il-parquet");
  Schema schema{{"n", DataType::int64}, {"amount", DataType::decimal, 5, 2}};
  {
    Writer writer(dir / "x.parquet", schema);
    Table ok(schema);
    ok.append_row({1, Decimal(150, 2)});
    writer.append(ok);
    Table bad(schema);
    bad.append_row({2, Decimal(1, 0)});
    bad.append_row({3, Decimal(1234567, 2)});
    IL_EXPECT_THROW_WITH(writer.append(bad), DataError, "row 3");
    IL_EXPECT_THROW_WITH(writer.finish(), DestinationError, "finished or failed");
  }
  {
    Writer writer(dir / "x.parquet", schema);
    Table extra;
    extra.append({{"n", 1}, {"other", 2}});
    IL_EXPECT_THROW_WITH(writer.append(extra), DataError, "column 'other' is not in the schema");
    Table wrong;
    wrong.append({{"n", "seven"}});
    IL_EXPECT_THROW_WITH(writer.append(wrong), DataError, "column 'n'");
  }
  {
    Writer writer(dir / "x.parquet", Schema{{"s", DataType::string}});
    Table bad;
    bad.append({{"s", std::string("\xff\xfe")}});
    IL_EXPECT_THROW_WITH(writer.append(bad), DataError, "not valid UTF-8");
  }
  {
    Writer writer(dir / "x.parquet", Schema{{"loose", DataType::decimal}});
    Table t;
    t.append({{"loose", Decimal(*Decimal::parse("12345678901234567890123456789"))}});
    t.append({{"loose", Decimal(*Decimal::parse("0.0000000000001"))}});
    writer.append(t);
    IL_EXPECT_THROW_WITH(writer.finish(), DataError, "declare the column's precision and scale");
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "x.parquet"));
}

}  // namespace
}  // namespace interloper::parquet
