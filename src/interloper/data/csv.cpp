// CSV reading: RFC 4180 records into typed tables, whole or as a stream of batches.
#include <algorithm>
#include <cstring>
#include <deque>
#include <istream>
#include <iterator>
#include <ostream>

#include "interloper/data/csv_records.hpp"
#include "interloper/data/format.hpp"
#include "interloper/data/stream.hpp"
#include "interloper/data/table_columns.hpp"

namespace interloper {

namespace detail::csv {

// The types that hold `f` exactly. Dates and timestamps only in the time column.
unsigned kinds_of(const CsvField& f, bool time_column) {
  if (f.text.empty()) return 0;  // a quoted empty string
  const std::string_view s = f.text;
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
  else if (timestamp_too_precise(s))
    convert(Value(std::string(s)), DataType::timestamp);  // throws: never rounded
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

// The value of `text` in `type`, as convert() gives it from a string, without the string when
// the text reads straight as the type.
Value text_in(std::string_view text, const Field& field) {
  switch (field.type) {
    case DataType::string:
      return Value(std::string(text));
    case DataType::int64: {
      std::int64_t i;
      if (detail::parse_int(text, i)) return Value(static_cast<long long>(i));
      break;
    }
    case DataType::float64: {
      double d;
      if (detail::parse_double(text, d)) return Value(d);
      break;
    }
    case DataType::date:
      if (auto day = parse_date(text)) return Value(*day);
      break;
    case DataType::json:  // a json field holds JSON text
      try {
        return Value(parse_json(text));
      } catch (const DataError& e) {
        throw DataError("column '" + field.name + "': " + e.what());
      }
    default:
      break;
  }
  return detail::declared_value(Value(std::string(text)), field);
}

Value field_value(const CsvField& f, const Field& field, std::size_t row, std::size_t line) {
  if (is_null(f)) return Value();
  try {
    return text_in(f.text, field);
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
      if (n == f.text) throw DataError("line 1: column '" + n + "' appears twice in the header");
    names.emplace_back(f.text);
  }
  return names;
}

// The kind bit of a type a reader may infer (0 for string and null).
unsigned kind_of(DataType type) {
  switch (type) {
    case DataType::boolean:
      return kBool;
    case DataType::int64:
      return kInt;
    case DataType::float64:
      return kDouble;
    case DataType::date:
      return kDate;
    case DataType::timestamp:
      return kTimestamp;
    default:
      return 0;
  }
}

// The inferred type of column `c`. `earlier` is the type earlier batches of the same text gave
// it (null for none): text read as text once stays text, and a batch whose fields all hold the
// earlier type exactly is read in it, so a stream types each column as one whole text would.
DataType inferred_type(const Records& records, std::size_t c, const std::string& name,
                       bool time_column, DataType earlier) {
  if (earlier == DataType::string) return DataType::string;
  unsigned kinds = ~0u;
  bool any = false;
  for (std::size_t r = 0; r < records.size(); ++r) {
    const CsvField& f = records.at(r, c);
    if (is_null(f)) continue;
    any = true;
    try {
      kinds &= kinds_of(f, time_column);
    } catch (const DataError& e) {
      throw DataError(line_prefix(records.lines[r]) + "column '" + name + "': " + e.what());
    }
    if (kinds == 0) break;
  }
  if (!any) return DataType::null;
  if ((kinds & kind_of(earlier)) != 0) return earlier;
  return type_of(kinds);
}

// The type of each column: declared, or inferred from its fields (see inferred_type; `earlier`
// may be null). With only_declared, every header name must be declared.
std::vector<Field> column_fields(const std::vector<std::string>& names, const Records& records,
                                 const ReadOptions& options, const Schema* earlier) {
  std::vector<Field> fields;
  for (std::size_t c = 0; c < names.size(); ++c) {
    if (auto i = options.schema.find(names[c])) {
      fields.push_back(options.schema.field(*i));
      continue;
    }
    if (options.only_declared)
      throw DataError("line 1: column '" + names[c] + "' is not in the declared schema (" +
                      options.schema.to_string() + ")");
    DataType before = DataType::null;
    if (earlier != nullptr)
      if (auto i = earlier->find(names[c])) before = earlier->field(*i).type;
    fields.push_back(
        {names[c], inferred_type(records, c, names[c], names[c] == options.time_column, before)});
  }
  return fields;
}

// Every remaining record of `reader`. Throws DataError for a record with the wrong number of
// fields or a field not valid UTF-8.
Records read_records(RecordReader& reader, const std::vector<std::string>& names) {
  const std::size_t n = names.size();
  Records out;
  out.width = n;
  // Room for a record per line left, at most; no regrowing (and copying) as they come.
  const std::size_t lines = reader.lines_left();
  out.lines.reserve(lines);
  out.fields.reserve(lines * n);
  while (reader.next(out.fields, out.unescaped)) {
    const std::size_t first = out.lines.size() * n;
    if (out.fields.size() - first != n)
      throw DataError(line_prefix(reader.line()) + "record has " +
                      std::to_string(out.fields.size() - first) + " fields but the header has " +
                      std::to_string(n));
    for (std::size_t c = 0; c < n; ++c)
      if (!detail::valid_utf8(out.fields[first + c].text))
        throw DataError(line_prefix(reader.line()) + "column '" + names[c] +
                        "' is not valid UTF-8");
    out.lines.push_back(reader.line());
  }
  return out;
}

// The table of `records`; `rows_before` records came before them (rows are numbered from 1 in
// errors), `earlier` is the schema earlier batches were given (may be null).
Table records_table(const std::vector<std::string>& names, const Records& records,
                    const ReadOptions& options, std::size_t rows_before, const Schema* earlier) {
  const std::size_t n = names.size();
  const std::vector<Field> typed = column_fields(names, records, options, earlier);
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
  detail::TableColumns columns(table);
  for (std::size_t r = 0; r < records.size(); ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      columns.set(target[c],
                  field_value(records.at(r, c), typed[c], rows_before + r + 1, records.lines[r]));
    }
    columns.end_row();
  }
  if (!options.only_declared) table.conform(options.schema, rows_before + 1);
  return table;
}

ReadOptions exactly(const Schema* declared) {
  ReadOptions options;
  if (declared != nullptr) {
    options.schema = *declared;
    options.only_declared = true;
  }
  return options;
}

}  // namespace detail::csv

using namespace detail::csv;

Table parse_csv(std::string_view text, const ReadOptions& options) {
  RecordReader reader(text);
  std::vector<CsvField> header;
  std::deque<std::string> unescaped;
  if (!reader.next(header, unescaped)) {
    Table empty = options.only_declared ? Table(options.schema) : Table();
    empty.conform(options.schema);
    return empty;
  }
  const std::vector<std::string> names = header_names(header);
  return records_table(names, read_records(reader, names), options);
}

Table read_csv(std::istream& in, const ReadOptions& options) {
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_csv(text, options);
}

Table read_csv(std::istream& in, const Schema* declared) { return read_csv(in, exactly(declared)); }

Table parse_csv(std::string_view text, const Schema* declared) {
  return parse_csv(text, exactly(declared));
}

}  // namespace interloper
