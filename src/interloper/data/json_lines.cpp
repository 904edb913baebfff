// Reading JSON lines: whole texts (a stream fed in chunks is json_lines_stream.cpp), and a
// schema from its JSON.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "interloper/data/format.hpp"
#include "interloper/data/json_line_adder.hpp"
#include "interloper/data/memory.hpp"
#include "interloper/data/stream.hpp"
#include "interloper/data/table_columns.hpp"

namespace interloper {

namespace {

using detail::LineAdder;

// Adds the lines `next_line` gives (it returns false at the end) to `table`: a table of the
// declared columns when options.only_declared, else any table. Whenever the table has no room
// for another row it makes room at once for `lines_left()` more (the lines left, the one just
// given included; 0 when not known) or for half the rows it holds, whichever is more, rather
// than regrowing (and copying) its columns one at a time. So lines are counted only for a table
// that has not made room for them already.
template <typename NextLine, typename LinesLeft>
void add_lines(Table& table, NextLine&& next_line, const ReadOptions& options,
               LinesLeft&& lines_left) {
  const detail::TableColumns columns(table);
  LineAdder adder(options);
  std::string_view line;
  std::size_t line_no = 0;
  while (next_line(line)) {
    if (columns.full()) {
      const std::size_t rows = table.num_rows();
      table.reserve(rows + std::max(lines_left(), rows / 2));
    }
    adder.add(table, line, ++line_no);
  }
}

// Reads lines from `next_line` (returns false at the end) into a table.
template <typename NextLine, typename LinesLeft>
Table read_lines(NextLine&& next_line, const ReadOptions& options, LinesLeft&& lines_left) {
  Table table = options.only_declared ? Table(options.schema) : Table();
  add_lines(table, next_line, options, lines_left);
  if (!options.only_declared) table.conform(options.schema);
  return table;
}

// The lines of `text`, one at a time.
class TextLines {
 public:
  explicit TextLines(std::string_view text) : text_(text) {}
  bool operator()(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    std::size_t nl = text_.find('\n', pos_);
    if (nl == std::string_view::npos) nl = text_.size();
    line = text_.substr(pos_, nl - pos_);
    last_ = pos_;
    pos_ = nl + 1;
    return true;
  }
  // At most how many lines are left, the last one given included.
  std::size_t left() const {
    std::size_t n = 1;
    const char* end = text_.data() + text_.size();
    for (const char* p = text_.data() + last_; p < end; ++n) {
      p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      if (p == nullptr) break;
      ++p;
    }
    return n;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t last_ = 0;  // where the last line given starts
};

ReadOptions exactly(const Schema* declared) {
  ReadOptions options;
  if (declared != nullptr) {
    options.schema = *declared;
    options.only_declared = true;
  }
  return options;
}

}  // namespace

Table read_json_lines(std::istream& in, const ReadOptions& options) {
  std::string buffer;
  return read_lines(
      [&](std::string_view& line) {
        if (!std::getline(in, buffer)) return false;
        line = buffer;
        return true;
      },
      options, [] { return std::size_t{0}; });
}

Table parse_json_lines(std::string_view text, const ReadOptions& options) {
  TextLines lines(text);
  return read_lines(lines, options, [&] { return lines.left(); });
}

void detail::append_json_lines_text(Table& table, std::string_view text,
                                    const ReadOptions& options) {
  assert(options.only_declared || options.schema.empty());
  TextLines lines(text);
  add_lines(table, lines, options, [&] { return lines.left(); });
}

Table read_json_lines(std::istream& in, const Schema* declared) {
  return read_json_lines(in, exactly(declared));
}

Table parse_json_lines(std::string_view text, const Schema* declared) {
  return parse_json_lines(text, exactly(declared));
}

Schema schema_from_json(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw DataError(std::string("malformed schema JSON: ") + e.what());
  }
  if (!j.is_array())
    throw DataError("schema JSON must be an array, got " + std::string(j.type_name()));
  std::vector<Field> fields;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& f = j[i];
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("type") ||
        !f["type"].is_string())
      throw DataError("schema JSON field " + std::to_string(i) +
                      " must be an object with string \"name\" and \"type\": " + f.dump());
    fields.push_back(
        field_of_type(f["name"].get<std::string>(), f["type"].get_ref<const std::string&>()));
  }
  return Schema(std::move(fields));
}

}  // namespace interloper
