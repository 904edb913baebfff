// Writing JSON lines, and a schema as JSON.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <istream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "interloper/data/format.hpp"
#include "interloper/data/json_lexer.hpp"
#include "interloper/data/memory.hpp"
#include "interloper/data/stream.hpp"
#include "interloper/data/table_columns.hpp"

namespace interloper {

namespace {

using detail::append_json_string;

[[noreturn]] void not_a_json_number(const Table& table, std::size_t c, std::size_t r) {
  throw DataError("cannot write " + detail::describe(table.column(c)[r]) + " as JSON (column '" +
                  table.schema().field(c).name + "' row " + std::to_string(r + 1) + ")");
}

// Writes rows of one table as JSON lines, reading its cells in place. A date column remembers
// the text of its last date, since the rows of a partition usually share one.
class RowWriter {
 public:
  explicit RowWriter(const Table& table) : table_(table) {
    for (std::size_t c = 0; c < table.num_columns(); ++c) {
      Column& column = columns_.emplace_back();
      append_json_string(column.key, table.schema().field(c).name);
      column.key.push_back(':');
      column.cells = &table.column(c);
    }
  }

  // Appends row r.
  void row(std::string& out, std::size_t r) {
    out.push_back('{');
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      Column& column = columns_[c];
      if (c > 0) out.push_back(',');
      out += column.key;
      const Value& v = (*column.cells)[r];
      switch (v.type()) {
        case DataType::null:
          out += "null";
          break;
        case DataType::boolean:
          out += v.as_bool() ? "true" : "false";
          break;
        case DataType::int64:
          detail::append_int(out, v.as_int());
          break;
        case DataType::float64: {
          double d = v.as_double();
          if (!std::isfinite(d)) not_a_json_number(table_, c, r);
          detail::append_double(out, d);
          break;
        }
        case DataType::string:
          append_json_string(out, v.as_string());
          break;
        case DataType::date:
          if (v.as_date() != column.date) {
            column.date = v.as_date();
            column.date_text.clear();
            column.date_text.push_back('"');
            detail::append_date(column.date_text, column.date);
            column.date_text.push_back('"');
          }
          out += column.date_text;
          break;
        case DataType::timestamp:
          out.push_back('"');
          detail::append_timestamp(out, v.as_timestamp());
          out.push_back('"');
          break;
        case DataType::decimal:  // a JSON number of the exact digits
          out += v.as_decimal().to_string();
          break;
        case DataType::json:  // nested as it is: canonical JSON text
          out += v.as_json().text;
          break;
      }
    }
    out += "}\n";
  }

 private:
  struct Column {
    std::string key;  // `"name":`
    const std::vector<Value>* cells = nullptr;
    Value::Date date = Value::Date::max();  // the date date_text spells, if any
    std::string date_text;
  };

  const Table& table_;
  std::vector<Column> columns_;
};

}  // namespace

void write_json_lines(const Table& table, std::ostream& out) {
  RowWriter writer(table);
  std::string buf;
  constexpr std::size_t kChunk = 4096;  // rows per buffered write
  for (std::size_t r = 0; r < table.num_rows(); r += kChunk) {
    buf.clear();
    for (std::size_t k = r; k < std::min(table.num_rows(), r + kChunk); ++k) writer.row(buf, k);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }
}

std::string to_json_lines(const Table& table) {
  std::string out;
  detail::append_json_lines(out, table);
  return out;
}

void detail::check_json_numbers(const Table& table) {
  for (std::size_t c = 0; c < table.num_columns(); ++c) {
    if (table.schema().field(c).type != DataType::float64) continue;
    const std::vector<Value>& cells = table.column(c);
    for (std::size_t r = 0; r < cells.size(); ++r) {
      if (cells[r].type() == DataType::float64 && !std::isfinite(cells[r].as_double()))
        not_a_json_number(table, c, r);
    }
  }
}

void detail::append_json_lines(std::string& out, const Table& table,
                               const std::vector<std::size_t>* rows) {
  const std::size_t n = rows ? rows->size() : table.num_rows();
  if (n == 0) return;
  RowWriter writer(table);
  append_rows_reserved(out, n, rows,
                       [&writer](std::string& text, std::size_t row) { writer.row(text, row); });
}

std::string schema_to_json(const Schema& schema) {
  std::string out = "[";
  for (const Field& f : schema.fields()) {
    if (out.size() > 1) out += ',';
    out += "{\"name\":";
    append_json_string(out, f.name);
    out += ",\"type\":\"";
    out += type_text(f);
    out += "\"}";
  }
  out += ']';
  return out;
}

}  // namespace interloper
