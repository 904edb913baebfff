// CSV writing: RFC 4180 records, fields quoted only when they must be.
#include <algorithm>
#include <ostream>

#include "interloper/data/format.hpp"
#include "interloper/data/memory.hpp"

namespace interloper {

namespace {

void append_csv_field(std::string& out, std::string_view s) {
  if (s.empty()) {
    out += "\"\"";  // distinguishes an empty string from null
    return;
  }
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
    out += s;
    return;
  }
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

void append_header(std::string& out, const Table& table) {
  for (std::size_t c = 0; c < table.num_columns(); ++c) {
    if (c > 0) out.push_back(',');
    append_csv_field(out, table.schema().field(c).name);
  }
  out.push_back('\n');
}

// Writes CSV records of chosen columns of one table, reading its cells in place.
class RecordWriter {
 public:
  // Field k of a record is column columns[k] of `table`, or null when it is Schema::npos.
  RecordWriter(const Table& table, const std::vector<std::size_t>& columns) {
    for (std::size_t c : columns) cells_.push_back(c == Schema::npos ? nullptr : &table.column(c));
  }

  // Appends the record of row r.
  void row(std::string& out, std::size_t r) const {
    for (std::size_t k = 0; k < cells_.size(); ++k) {
      if (k > 0) out.push_back(',');
      if (cells_[k] == nullptr) continue;
      const Value& v = (*cells_[k])[r];
      if (v.is_null()) continue;
      if (v.type() == DataType::string)
        append_csv_field(out, v.as_string());
      else if (v.type() == DataType::json)  // quoted, as its commas and quotes need
        append_csv_field(out, v.as_json().text);
      else
        detail::append_value(out, v);
    }
    out.push_back('\n');
  }

 private:
  std::vector<const std::vector<Value>*> cells_;
};

std::vector<std::size_t> every_column(const Table& table) {
  std::vector<std::size_t> columns(table.num_columns());
  for (std::size_t c = 0; c < columns.size(); ++c) columns[c] = c;
  return columns;
}

}  // namespace

void detail::append_csv_header(std::string& out, const std::vector<std::string>& names) {
  for (std::size_t c = 0; c < names.size(); ++c) {
    if (c > 0) out.push_back(',');
    append_csv_field(out, names[c]);
  }
  out.push_back('\n');
}

void detail::append_csv_records(std::string& out, const Table& table,
                                const std::vector<std::size_t>& columns,
                                const std::vector<std::size_t>* rows) {
  const std::size_t n = rows ? rows->size() : table.num_rows();
  const RecordWriter writer(table, columns);
  append_rows_reserved(out, n, rows,
                       [&writer](std::string& text, std::size_t row) { writer.row(text, row); });
}

std::string to_csv(const Table& table) {
  std::string out;
  append_header(out, table);
  detail::append_csv_records(out, table, every_column(table));
  return out;
}

void write_csv(const Table& table, std::ostream& out) {
  std::string buf;
  append_header(buf, table);
  const RecordWriter writer(table, every_column(table));
  constexpr std::size_t kChunk = 4096;
  for (std::size_t r = 0; r < table.num_rows(); r += kChunk) {
    for (std::size_t k = r; k < std::min(table.num_rows(), r + kChunk); ++k) writer.row(buf, k);
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    buf.clear();
  }
  if (!buf.empty()) out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace interloper
