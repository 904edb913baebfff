#include <istream>
#include <iterator>
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

struct CsvField {
  std::string text;
  bool quoted = false;
};

std::string line_prefix(std::size_t line) { return "line " + std::to_string(line) + ": "; }

// Splits RFC 4180 records. next() fills `fields` and returns false at the end of the text.
class RecordReader {
 public:
  explicit RecordReader(std::string_view text) : text_(text) {}

  // The line on which the last record returned began.
  std::size_t line() const { return record_line_; }

  bool next(std::vector<CsvField>& fields) {
    if (pos_ >= text_.size()) return false;
    record_line_ = line_;
    fields.clear();
    fields.emplace_back();
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      CsvField& f = fields.back();
      if (c == '"' && f.text.empty() && !f.quoted) {
        read_quoted(f);
        if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '\r')
          throw DataError(line_prefix(line_) + "unexpected character '" +
                          std::string(1, text_[pos_]) + "' after a closing quote");
        continue;
      }
      ++pos_;
      if (c == ',') {
        fields.emplace_back();
      } else if (c == '\n') {
        ++line_;
        return true;
      } else if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') {
        // CRLF: the '\n' ends the record on the next iteration.
      } else {
        f.text.push_back(c);
      }
    }
    return true;
  }

 private:
  void read_quoted(CsvField& f) {
    std::size_t start_line = line_;
    f.quoted = true;
    ++pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_++];
      if (c == '"') {
        if (pos_ < text_.size() && text_[pos_] == '"') {
          f.text.push_back('"');
          ++pos_;
          continue;
        }
        return;
      }
      if (c == '\n') ++line_;
      f.text.push_back(c);
    }
    throw DataError(line_prefix(start_line) + "unterminated quoted field");
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t record_line_ = 1;
};

enum Kind : unsigned { kBool = 1, kInt = 2, kDouble = 4, kDate = 8, kTimestamp = 16 };

// The types that hold `f` exactly. Dates and timestamps only in the time column.
unsigned kinds_of(const CsvField& f, bool time_column) {
  if (f.text.empty()) return 0;  // a quoted empty string
  const std::string& s = f.text;
  if (s == "true" || s == "false") return kBool;
  unsigned k = 0;
  std::int64_t i;
  double d;
  if (detail::is_exact_int(s, i))
    k |= kInt | kDouble;
  else if (detail::is_exact_double(s, d))
    k |= kDouble;
  if (!time_column) return k;
  if (parse_date(s))
    k |= kDate | kTimestamp;
  else if (parse_timestamp(s))
    k |= kTimestamp;
  return k;
}

DataType type_of(unsigned kinds) {
  if (kinds & kBool) return DataType::boolean;
  if (kinds & kInt) return DataType::int64;
  if (kinds & kDouble) return DataType::float64;
  if (kinds & kDate) return DataType::date;
  if (kinds & kTimestamp) return DataType::timestamp;
  return DataType::string;
}

bool is_null(const CsvField& f) { return f.text.empty() && !f.quoted; }

Value field_value(const CsvField& f, DataType type, std::size_t row, std::size_t line,
                  std::string_view column) {
  if (is_null(f)) return Value();
  if (type == DataType::string) return Value(f.text);
  try {
    return detail::declared_value(Value(f.text), type, column);
  } catch (const DataError& e) {
    throw DataError(detail::row_prefix(row, line) + e.what());
  }
}

// The header's names; throws on a duplicate or invalid UTF-8.
std::vector<std::string> header_names(const std::vector<CsvField>& header) {
  std::vector<std::string> names;
  for (const CsvField& f : header) {
    if (!detail::valid_utf8(f.text)) throw DataError("line 1: a column name is not valid UTF-8");
    for (const std::string& n : names)
      if (n == f.text)
        throw DataError("line 1: column '" + f.text + "' appears twice in the header");
    names.push_back(f.text);
  }
  return names;
}

// The type of each column: declared, or inferred from all its fields. With only_declared, every
// header name must be declared.
std::vector<Field> column_fields(const std::vector<std::string>& names,
                                 const std::vector<std::vector<CsvField>>& records,
                                 const ReadOptions& options) {
  std::vector<Field> fields;
  for (std::size_t c = 0; c < names.size(); ++c) {
    if (auto i = options.schema.find(names[c])) {
      fields.push_back(options.schema.field(*i));
      continue;
    }
    if (options.only_declared)
      throw DataError("line 1: column '" + names[c] + "' is not in the declared schema (" +
                      options.schema.to_string() + ")");
    const bool time = names[c] == options.time_column;
    unsigned kinds = ~0u;
    bool any = false;
    for (const auto& rec : records) {
      if (is_null(rec[c])) continue;
      any = true;
      kinds &= kinds_of(rec[c], time);
      if (kinds == 0) break;
    }
    fields.push_back({names[c], any ? type_of(kinds) : DataType::null});
  }
  return fields;
}

}  // namespace

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

Table read_csv(std::istream& in, const ReadOptions& options) {
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_csv(text, options);
}

Table parse_csv(std::string_view text, const ReadOptions& options) {
  RecordReader reader(text);
  std::vector<CsvField> header;
  if (!reader.next(header)) {
    Table empty = options.only_declared ? Table(options.schema) : Table();
    empty.conform(options.schema);
    return empty;
  }
  const std::vector<std::string> names = header_names(header);
  const std::size_t n = names.size();

  std::vector<std::vector<CsvField>> records;
  std::vector<std::size_t> lines;
  std::vector<CsvField> fields;
  while (reader.next(fields)) {
    if (fields.size() != n)
      throw DataError(line_prefix(reader.line()) + "record has " + std::to_string(fields.size()) +
                      " fields but the header has " + std::to_string(n));
    for (std::size_t c = 0; c < n; ++c)
      if (!detail::valid_utf8(fields[c].text))
        throw DataError(line_prefix(reader.line()) + "column '" + names[c] +
                        "' is not valid UTF-8");
    records.push_back(std::move(fields));
    lines.push_back(reader.line());
    fields = {};
  }

  const std::vector<Field> typed = column_fields(names, records, options);
  std::vector<std::size_t> target(n);
  Table table;
  if (options.only_declared) {
    table = Table(options.schema);
    for (std::size_t c = 0; c < n; ++c) target[c] = *options.schema.find(names[c]);
  } else {
    table = Table(Schema(typed));
    for (std::size_t c = 0; c < n; ++c) target[c] = c;
  }
  table.reserve(records.size());
  for (std::size_t r = 0; r < records.size(); ++r) {
    std::vector<Value> row(table.num_columns());
    for (std::size_t c = 0; c < n; ++c)
      row[target[c]] = field_value(records[r][c], typed[c].type, r + 1, lines[r], names[c]);
    table.append_row(std::move(row));
  }
  if (!options.only_declared) table.conform(options.schema);
  return table;
}

namespace {

ReadOptions exactly(const Schema* declared) {
  ReadOptions options;
  if (declared != nullptr) {
    options.schema = *declared;
    options.only_declared = true;
  }
  return options;
}

}  // namespace

Table read_csv(std::istream& in, const Schema* declared) { return read_csv(in, exactly(declared)); }

Table parse_csv(std::string_view text, const Schema* declared) {
  return parse_csv(text, exactly(declared));
}

}  // namespace interloper
