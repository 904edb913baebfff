// CSV writing: RFC 4180 records, fields quoted only when they must be.
#include <algorithm>
#include <ostream>

#include "interloper/data/format.hpp"

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

void append_rows(std::string& out, const Table& table, std::size_t begin, std::size_t end) {
  const std::size_t n = table.num_columns();
  for (std::size_t r = begin; r < end; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      if (c > 0) out.push_back(',');
      const Value& v = table.column(c)[r];
      if (v.is_null()) continue;
      if (v.type() == DataType::string)
        append_csv_field(out, v.as_string());
      else
        detail::append_value(out, v);
    }
    out.push_back('\n');
  }
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
                                const std::vector<std::size_t>& columns) {
  for (std::size_t r = 0; r < table.num_rows(); ++r) {
    for (std::size_t k = 0; k < columns.size(); ++k) {
      if (k > 0) out.push_back(',');
      if (columns[k] == Schema::npos) continue;
      const Value& v = table.column(columns[k])[r];
      if (v.is_null()) continue;
      if (v.type() == DataType::string)
        append_csv_field(out, v.as_string());
      else
        append_value(out, v);
    }
    out.push_back('\n');
  }
}

std::string to_csv(const Table& table) {
  std::string out;
  append_header(out, table);
  append_rows(out, table, 0, table.num_rows());
  return out;
}

void write_csv(const Table& table, std::ostream& out) {
  std::string buf;
  append_header(buf, table);
  constexpr std::size_t kChunk = 4096;
  for (std::size_t r = 0; r < table.num_rows(); r += kChunk) {
    append_rows(buf, table, r, std::min(table.num_rows(), r + kChunk));
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    buf.clear();
  }
  if (!buf.empty()) out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace interloper
