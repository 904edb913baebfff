// TableStreamParser: text arriving in pieces reads like the whole text, in bounded batches.
#include <string>
#include <vector>

#include "data/test_helpers.hpp"

namespace interloper {
namespace {

using testing::expect_data_error;
using Format = TableStreamParser::Format;

// Feeds `text` in pieces of `piece` bytes; returns the batches.
std::vector<Table> stream(Format format, std::string_view text, std::size_t piece,
                          std::size_t batch_rows) {
  std::vector<Table> batches;
  TableStreamParser parser(format, [&](Table&& batch) { batches.push_back(std::move(batch)); },
                           {.rows = batch_rows, .bytes = std::size_t{1} << 20});
  for (std::size_t i = 0; i < text.size(); i += piece) parser.feed(text.substr(i, piece));
  parser.finish();
  return batches;
}

Table concatenated(const std::vector<Table>& batches) {
  Table all;
  for (const Table& batch : batches) all.append_table(batch);
  return all;
}

std::string awkward_json() {
  std::string text;
  for (int i = 0; i < 50; ++i) {
    text += "{\"d\":\"2026-03-" + std::to_string(10 + i % 10) + "\",\"i\":" + std::to_string(i);
    if (i % 7 == 0) text += ",\"late\":\"a\\nb\"";
    text += i > 30 ? ",\"f\":1.5}\n" : "}\n";
    if (i % 11 == 0) text += "\n";  // blank lines are skipped but counted
  }
  return text + "{\"i\":99}";  // no newline at the end
}

TEST(TableStreamParser, JsonLinesInAnyPiecesReadAsTheWholeText) {
  const std::string text = awkward_json();
  const Table whole = parse_json_lines(text);
  for (std::size_t piece : {1u, 3u, 64u, 100000u}) {
    std::vector<Table> batches = stream(Format::json_lines, text, piece, 8);
    ASSERT_EQ(batches.size(), 7u) << piece;  // 51 rows in batches of 8
    for (std::size_t b = 0; b + 1 < batches.size(); ++b) EXPECT_EQ(batches[b].num_rows(), 8u);
    EXPECT_EQ(concatenated(batches), whole) << piece;
  }
}

TEST(TableStreamParser, CsvWithQuotedLineBreaksInAnyPiecesReadsAsTheWholeText) {
  std::string text = "id,note,amount\r\n";
  for (int i = 0; i < 40; ++i) {
    text +=
        std::to_string(i) + ",\"line\none, \"\"quoted\"\"\"," + std::to_string(i * 2) + ".5\r\n";
    text += std::to_string(i) + ",plain,\n";
  }
  const Table whole = parse_csv(text);
  for (std::size_t piece : {1u, 2u, 7u, 4096u}) {
    std::vector<Table> batches = stream(Format::csv, text, piece, 16);
    ASSERT_EQ(batches.size(), 5u) << piece;
    EXPECT_EQ(concatenated(batches), whole) << piece;
  }
}

TEST(TableStreamParser, EmptyTextsGiveTheirColumnsOrNothing) {
  EXPECT_TRUE(stream(Format::json_lines, "", 4, 8).empty());
  EXPECT_TRUE(stream(Format::csv, "", 4, 8).empty());
  std::vector<Table> header_only = stream(Format::csv, "a,b\n", 1, 8);
  ASSERT_EQ(header_only.size(), 1u);
  EXPECT_EQ(header_only[0], parse_csv("a,b\n"));
}

TEST(TableStreamParser, ErrorsNameTheLineWhateverTheBatch) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "{\"n\":" + std::to_string(i) + "}\n";
  expect_data_error([&] { stream(Format::json_lines, text + "{\"n\":\n", 5, 4); },
                    {"line 21", "malformed"});
  // A type clash with an earlier batch names the line of the clashing value.
  expect_data_error([&] { stream(Format::json_lines, text + "{\"n\":\"x\"}\n", 5, 4); },
                    {"line 21", "'n'", "string", "int"});
  std::string csv = "n,s\n";
  for (int i = 0; i < 20; ++i) csv += std::to_string(i) + ",x\n";
  expect_data_error([&] { stream(Format::csv, csv + "1\n", 3, 4); }, {"line 22", "1 fields"});
  expect_data_error([&] { stream(Format::csv, csv + "\"open\n", 3, 4); },
                    {"line 22", "unterminated"});
  expect_data_error([&] { stream(Format::csv, csv + "word,x\n", 3, 4); },
                    {"line 22", "'n'", "string", "int"});
}

TEST(TableStreamParser, BatchesAreBoundedByBytesToo) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "{\"s\":\"" + std::string(100, 'x') + "\"}\n";
  std::vector<Table> batches;
  TableStreamParser parser(Format::json_lines,
                           [&](Table&& batch) { batches.push_back(std::move(batch)); },
                           {.rows = 1000, .bytes = 1000});
  parser.feed(text);
  parser.finish();
  EXPECT_EQ(batches.size(), 10u);
  EXPECT_EQ(parser.rows(), 100u);
}

TEST(TableStreamParser, DeclaredSchemaIsApplied) {
  const Schema declared{{"d", DataType::date}, {"n", DataType::float64}};
  std::vector<Table> batches;
  TableStreamParser parser(
      Format::json_lines, [&](Table&& batch) { batches.push_back(std::move(batch)); },
      TableStreamParser::Limits{}, &declared);
  parser.feed("{\"d\":\"2026-01-01\",\"n\":1}\n{\"n\":2");
  parser.feed("}\n");
  parser.finish();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0], parse_json_lines("{\"d\":\"2026-01-01\",\"n\":1}\n{\"n\":2}\n", &declared));
}

// Feeds `text` in pieces of `piece` bytes with `options`; returns the batches.
std::vector<Table> stream_with(Format format, std::string_view text, std::size_t piece,
                               std::size_t batch_rows, const ReadOptions& options) {
  std::vector<Table> batches;
  TableStreamParser parser(
      format, [&](Table&& batch) { batches.push_back(std::move(batch)); },
      {.rows = batch_rows, .bytes = std::size_t{1} << 20}, options);
  for (std::size_t i = 0; i < text.size(); i += piece) parser.feed(text.substr(i, piece));
  parser.finish();
  return batches;
}

TEST(TableStreamParser, CsvTextReadAsTextInOneBatchStaysTextInTheNext) {
  // Row 1 keeps its leading zeros, so the column is text; row 9000, in the second batch of
  // 8192, holds a plain integer and is text too, as in the whole text.
  std::string text = "code,n\n007,1\n";
  for (int i = 2; i <= 9000; ++i) text += std::to_string(i % 100) + "," + std::to_string(i) + "\n";
  text += "99999999999999999999,2.5\n";  // beyond int64 stays text; n widens to double
  const Table whole = parse_csv(text);
  ASSERT_EQ(whole.schema(), (Schema{{"code", DataType::string}, {"n", DataType::float64}}));
  std::vector<Table> batches = stream(Format::csv, text, 4096, 8192);
  ASSERT_EQ(batches.size(), 2u);
  for (const Table& batch : batches) {
    EXPECT_EQ(batch.schema().field(0).type, DataType::string);
  }
  EXPECT_EQ(batches[1].column(0)[9000 - 8193], Value("0"));
  EXPECT_EQ(batches[1].column(0).back(), Value("99999999999999999999"));
  EXPECT_EQ(concatenated(batches), whole);
}

TEST(TableStreamParser, NumbersThatTurnToTextInALaterBatchSayHowToGoOn) {
  std::string text = "zip\n";
  for (int i = 0; i < 10; ++i) text += "1234\n";
  text += "01234\n";  // text that must keep its zero, after batches read as int
  expect_data_error([&] { stream(Format::csv, text, 7, 4); },
                    {"line 12", "'zip'", "string", "int", "declare the column's type"});
  // Declared as text, every batch reads it as text.
  std::vector<Table> batches =
      stream_with(Format::csv, text, 7, 4, {.schema = Schema{{"zip", DataType::string}}});
  EXPECT_EQ(concatenated(batches), parse_csv(text));
  EXPECT_EQ(concatenated(batches).column(0).back(), Value("01234"));
}

TEST(TableStreamParser, ReadOptionsApplyToEveryBatch) {
  const ReadOptions options{.schema = Schema{{"zip", DataType::string},
                                             {"amount", DataType::float64},
                                             {"missing", DataType::int64}},
                            .time_column = "d"};
  std::string json, csv = "d,zip,amount,other\n";
  for (int i = 0; i < 9; ++i) {
    const std::string day = "2026-11-0" + std::to_string(i + 1);
    json += "{\"d\":\"" + day + "\",\"zip\":" + std::to_string(1000 + i) +
            ",\"amount\":" + std::to_string(i) + ",\"other\":\"2026-01-01\"}\n";
    csv += day + ",0" + std::to_string(1000 + i) + "," + std::to_string(i) + ",2026-01-01\n";
  }
  const Schema expected{{"d", DataType::date},
                        {"zip", DataType::string},
                        {"amount", DataType::float64},
                        {"other", DataType::string},
                        {"missing", DataType::int64}};
  for (Format format : {Format::json_lines, Format::csv}) {
    const std::string& text = format == Format::csv ? csv : json;
    std::vector<Table> batches = stream_with(format, text, 5, 2, options);
    ASSERT_EQ(batches.size(), 5u);
    for (const Table& batch : batches) EXPECT_EQ(batch.schema(), expected);
    const Table whole =
        format == Format::csv ? parse_csv(text, options) : parse_json_lines(text, options);
    EXPECT_EQ(concatenated(batches), whole);
  }
  // A value that does not convert names its row counted over every batch.
  expect_data_error([&] { stream_with(Format::csv, csv + "2026-11-10,1,n/a,x\n", 5, 2, options); },
                    {"row 10 (line 11)", "'amount'", "\"n/a\""});
  expect_data_error(
      [&] { stream_with(Format::json_lines, json + "{\"amount\":\"n/a\"}\n", 5, 2, options); },
      {"row 10 (line 10)", "'amount'", "\"n/a\""});
}

}  // namespace
}  // namespace interloper
