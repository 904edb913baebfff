// The JSON-lines reader against nlohmann's parser as the reference: on every line both accept
// or both refuse, and what is accepted reads as the same values. Lines come from a list of
// awkward cases and from a seeded generator that spells and misspells JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "interloper/data.hpp"

namespace interloper {
namespace {

// What the reference makes of one line: nullopt when it is not an object (malformed, or another
// value), else the values the reader must give, by column (an array or object as JSON whose
// text the reader spells canonically; the comparison parses it back).
std::optional<std::vector<std::pair<std::string, Value>>> reference(const std::string& line) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  if (!j.is_object()) return std::nullopt;
  std::vector<std::pair<std::string, Value>> cells;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const nlohmann::json& v = it.value();
    Value value;
    if (v.is_object() || v.is_array()) value = Value(Json{v.dump()});
    if (v.is_boolean()) value = Value(v.get<bool>());
    if (v.is_number_integer() && !v.is_number_unsigned()) value = Value(v.get<long long>());
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      value = u > static_cast<std::uint64_t>(INT64_MAX) ? Value(std::to_string(u))
                                                        : Value(static_cast<long long>(u));
    }
    if (v.is_number_float()) value = Value(v.get<double>());
    if (v.is_string()) value = Value(v.get<std::string>());
    cells.emplace_back(it.key(), std::move(value));
  }
  return cells;
}

// True when the line spells an integer too large for nlohmann, which reads it as a double
// where the reader keeps its digits; such lines are compared on acceptance only.
bool has_huge_integer(const std::string& line) {
  std::size_t run = 0;
  for (char c : line) {
    run = c >= '0' && c <= '9' ? run + 1 : 0;
    if (run > 19) return true;
  }
  return false;
}

void expect_same_as_reference(const std::string& line) {
  SCOPED_TRACE("line: " + line);
  const auto expected = reference(line);
  std::optional<Table> got;
  try {
    got = parse_json_lines(line);
  } catch (const DataError& e) {
    // A name given twice is refused by design; the reference keeps the last.
    if (std::string(e.what()).find("twice") != std::string::npos) return;
    EXPECT_FALSE(expected.has_value()) << "refused, but the reference accepts: " << e.what();
    return;
  }
  if (line.find_first_not_of(" \t\r") == std::string::npos) return;  // blank lines are skipped
  ASSERT_TRUE(expected.has_value()) << "accepted, but the reference refuses";
  ASSERT_EQ(got->num_rows(), 1u);
  if (has_huge_integer(line)) return;
  ASSERT_EQ(got->num_columns(), expected->size());
  for (const auto& [name, value] : *expected) {
    ASSERT_TRUE(got->schema().find(name).has_value()) << name;
    const Value& cell = got->column(name).at(0);
    if (value.type() == DataType::float64 && cell.type() == DataType::float64) {
      EXPECT_EQ(cell.as_double(), value.as_double()) << name;
    } else if (value.type() == DataType::json && cell.type() == DataType::json) {
      EXPECT_EQ(nlohmann::json::parse(cell.as_json().text),
                nlohmann::json::parse(value.as_json().text))
          << name;
    } else {
      EXPECT_EQ(cell, value) << name;
    }
  }
}

TEST(JsonLineReader, AgreesWithTheReferenceOnAwkwardLines) {
  const std::vector<std::string> lines = {
      R"({})",
      R"( { } )",
      R"({"a":1})",
      R"({"a":-0})",
      R"({"a":0.5e-3})",
      R"({"a":1E+2})",
      R"({"a":01})",
      R"({"a":-})",
      R"({"a":1.})",
      R"({"a":.5})",
      R"({"a":+1})",
      R"({"a":1e})",
      R"({"a":9223372036854775807})",
      R"({"a":-9223372036854775808})",
      R"({"a":9223372036854775808})",
      R"({"a":18446744073709551616})",
      R"({"a":1e400})",
      R"({"a":-1e400})",
      R"({"a":1e-400})",
      R"({"a":true,"b":false,"c":null})",
      R"({"a":tru})",
      R"({"a":nul})",
      R"({"a":"x\"y\\z\/\b\f\n\r\t"})",
      R"({"a":"\u00e9\u20ac\ud83d\ude00"})",
      R"({"a":"\ud83d"})",
      R"({"a":"\ude00"})",
      R"({"a":"\ud83dx"})",
      R"({"a":"\u12"})",
      R"({"a":"\x"})",
      "{\"a\":\"tab\there\"}",
      "{\"a\":\"caf\xc3\xa9\"}",
      "{\"a\":\"\xc3\x28\"}",
      "{\"a\":\"\xed\xa0\x80\"}",
      "{\"a\":\"\xc0\xaf\"}",
      "{\"a\":\"\xf4\x90\x80\x80\"}",
      "{\"a\":\"\xf0\x9f\x98\x80\"}",
      "{\"a\":\"\xe2\x82\"}",
      R"({"a":1,})",
      R"({,"a":1})",
      R"({"a" 1})",
      R"({"a":1 "b":2})",
      R"({"a":1}})",
      R"({"a":1} x)",
      R"({"a":1})"
      "\r",
      R"([1,2])",
      R"("text")",
      R"(12)",
      R"(null)",
      R"({"a":[1]})",
      R"({"a":{"b":1}})",
      R"({"a")",
      R"({"a":)",
      R"({"a":"unclosed)",
      R"({)",
      R"({"a":1,"a":2})",
      R"({"":1})",
      R"({"a\u0000b":1})",
      "{\"a\":\"\\u0000\"}",
      "\t{}\t",
      R"({"a":-01})",
      R"({"a":1.5E-07})",
      R"({"a":123456789012345678901234})",
      "{\"a\":\x01}",
  };
  for (const std::string& line : lines) expect_same_as_reference(line);
  // A raw NUL byte is valid nowhere in JSON (the reference stops reading at it instead).
  for (const std::string& line : {std::string("{\"a\":1}\0xyz", 11), std::string("{\"a\":1}\0", 8),
                                  std::string("\0{\"a\":1}", 8), std::string("{\"a\":1\0}", 8),
                                  std::string("{\"a\":\"x\0y\"}", 11)}) {
    SCOPED_TRACE(testing::PrintToString(line));
    EXPECT_THROW(parse_json_lines(line), DataError);
  }
}

// Lines spelled from JSON's pieces, right and wrong, and then mutated byte by byte.
TEST(JsonLineReader, AgreesWithTheReferenceOnGeneratedLines) {
  const std::vector<std::string> pieces = {
      "{",
      "}",
      "[",
      "]",
      ":",
      ",",
      " ",
      "\"a\"",
      "\"b\"",
      "\"k\\u00e9\"",
      "1",
      "-1",
      "0",
      "1.5",
      "2e3",
      "-0.0",
      "1e-9",
      "true",
      "false",
      "null",
      "\"s\"",
      "\"\\n\\t\"",
      "\"\\ud83d\\ude00\"",
      "\"\xc3\xa9\"",
      "99999999999999999999",
      "\"\\",
      "\\u",
      "e",
      ".",
      "tru",
      "\"\xff\"",
      "\t",
      "\r",
  };
  std::mt19937 random(20261203);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
  const std::vector<std::string> values = {"1",     "-2.5e-3", "true",        "null",
                                           "\"v\"", "0",       "\"\\u20ac\"", "12345678901234567"};
  for (int round = 0; round < 20000; ++round) {
    std::string line;
    if (round % 2 == 0) {
      // Mostly well formed: an object of a few members.
      line = "{";
      const std::size_t members = pick(4);
      for (std::size_t m = 0; m < members; ++m) {
        if (m > 0) line += ",";
        line += "\"c" + std::to_string(m) + "\":" + values[pick(values.size())];
      }
      line += "}";
    } else {
      for (std::size_t n = pick(12); n > 0; --n) line += pieces[pick(pieces.size())];
    }
    // A mutation now and then: a byte replaced, dropped or doubled.
    if (!line.empty() && pick(3) == 0) {
      const std::size_t at = pick(line.size());
      switch (pick(3)) {
        case 0:
          line[at] = static_cast<char>(pick(128));
          break;
        case 1:
          line.erase(at, 1);
          break;
        default:
          line.insert(at, 1, line[at]);
      }
    }
    if (line.find('\n') != std::string::npos) continue;  // one line at a time
    expect_same_as_reference(line);
    if (::testing::Test::HasFailure()) break;
  }
}

// Decimals of every length and scale read as the nearest double, whether the reader computes
// them itself (few digits, small powers of ten) or hands them on.
TEST(JsonLineReader, ReadsDecimalsAsTheNearestDouble) {
  std::mt19937_64 random(20261204);
  auto digits = [&](std::size_t n, bool leading_zero_ok) {
    std::string out;
    for (std::size_t k = 0; k < n; ++k) {
      const auto d = static_cast<char>('0' + random() % 10);
      out += k == 0 && !leading_zero_ok && d == '0' ? '7' : d;
    }
    return out;
  };
  for (int round = 0; round < 20000; ++round) {
    std::string text = random() % 2 ? "-" : "";
    text += random() % 4 == 0 ? "0" : digits(1 + random() % 20, false);
    const bool fraction = random() % 4 != 0;
    if (fraction) text += "." + digits(1 + random() % 20, true);
    if (!fraction || random() % 2) {
      text += random() % 2 ? "e" : "E";
      const long power = static_cast<long>(random() % 61) - 30;
      text += (power >= 0 && random() % 2 ? "+" : "") + std::to_string(power);
    }
    SCOPED_TRACE(text);
    const Table t = parse_json_lines("{\"x\":" + text + "}");
    ASSERT_EQ(t.column(0).at(0).type(), DataType::float64);
    EXPECT_EQ(t.column(0).at(0).as_double(), std::strtod(text.c_str(), nullptr));
    EXPECT_EQ(std::signbit(t.column(0).at(0).as_double()), text[0] == '-');
  }
}

TEST(JsonLineReader, NamesTheColumnOfAMistake) {
  try {
    parse_json_lines("{\"a\":1}\n{\"a\": 01}\n");
    FAIL() << "accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2: malformed JSON at column 8"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace interloper
