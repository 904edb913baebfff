// CSV reading: RFC 4180 records into typed tables, whole or as a stream of batches.
#include <algorithm>
#include <cstring>
#include <deque>
#include <istream>
#include <iterator>
#include <ostream>

#include "interloper/data/format.hpp"
#include "interloper/data/stream.hpp"
#include "interloper/data/table_columns.hpp"

namespace interloper {

namespace {

// One field: a slice of the text, or of Records::unescaped when it had to be unescaped.
struct CsvField {
  std::string_view text;
  bool quoted = false;
};

std::string line_prefix(std::size_t line) { return "line " + std::to_string(line) + ": "; }

// Splits RFC 4180 records. next() appends the next record's fields to `fields` and returns
// false at the end of the text. A field is a view of the text unless it had to be unescaped
// (a quote doubled inside quotes); then it views a string added to `unescaped`, whose
// elements stay where they are.
class RecordReader {
 public:
  explicit RecordReader(std::string_view text, std::size_t first_line = 1)
      : text_(text), line_(first_line), record_line_(first_line) {}

  // The line on which the last record returned began.
  std::size_t line() const { return record_line_; }
  // The line the next record begins on.
  std::size_t next_line() const { return line_; }
  // How many lines the rest of the text has (counting a last one without a newline).
  std::size_t lines_left() const {
    std::size_t n = 0;
    const char* end = text_.data() + text_.size();
    for (const char* p = text_.data() + pos_; p < end; ++n) {
      p = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      if (p == nullptr) return n + 1;
      ++p;
    }
    return n;
  }

  bool next(std::vector<CsvField>& fields, std::deque<std::string>& unescaped) {
    if (pos_ >= text_.size()) return false;
    record_line_ = line_;
    for (;;) {
      CsvField& f = fields.emplace_back();
      if (pos_ < text_.size() && text_[pos_] == '"') {
        read_quoted(f, unescaped);
      } else {
        f.text = text_.substr(pos_, unquoted_end(pos_) - pos_);
        pos_ += f.text.size();
      }
      if (pos_ >= text_.size()) return true;
      const char c = text_[pos_++];
      if (c == ',') continue;
      ++line_;  // '\n', or the '\r' of a CRLF
      if (c == '\r') ++pos_;
      return true;
    }
  }

 private:
  // Where the unquoted field from `at` ends: at a comma, a newline, a CRLF or the end.
  std::size_t unquoted_end(std::size_t at) const {
    for (; at < text_.size(); ++at) {
      const char c = text_[at];
      if (c == ',' || c == '\n') break;
      if (c == '\r' && at + 1 < text_.size() && text_[at + 1] == '\n') break;
    }
    return at;
  }

  void read_quoted(CsvField& f, std::deque<std::string>& unescaped) {
    const std::size_t start_line = line_;
    f.quoted = true;
    std::size_t from = ++pos_;  // the text not yet copied, when copying
    std::string* copy = nullptr;
    for (;;) {
      const auto* quote =
          static_cast<const char*>(std::memchr(text_.data() + pos_, '"', text_.size() - pos_));
      const std::size_t at = quote ? static_cast<std::size_t>(quote - text_.data()) : text_.size();
      line_ += static_cast<std::size_t>(
          std::count(text_.begin() + static_cast<std::ptrdiff_t>(pos_),
                     text_.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
      if (quote == nullptr) throw DataError(line_prefix(start_line) + "unterminated quoted field");
      if (at + 1 < text_.size() && text_[at + 1] == '"') {  // a doubled quote: one quote
        if (copy == nullptr) copy = &unescaped.emplace_back();
        copy->append(text_.substr(from, at + 1 - from));
        pos_ = from = at + 2;
        continue;
      }
      f.text = text_.substr(from, at - from);
      pos_ = at + 1;
      break;
    }
    if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '\r')
      throw DataError(line_prefix(line_) + "unexpected character '" + std::string(1, text_[pos_]) +
                      "' after a closing quote");
    // A CR that does not begin a CRLF is text: it and what follows it up to the field's end
    // belong to the field, as written.
    const bool more = pos_ < text_.size() && text_[pos_] == '\r' &&
                      !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n');
    if (copy == nullptr && !more) return;
    if (copy == nullptr) copy = &unescaped.emplace_back();
    copy->append(f.text);
    if (more) {
      const std::size_t end = unquoted_end(pos_);
      copy->append(text_.substr(pos_, end - pos_));
      pos_ = end;
    }
    f.text = *copy;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_;
  std::size_t record_line_;
};

enum Kind : unsigned { kBool = 1, kInt = 2, kDouble = 4, kDate = 8, kTimestamp = 16 };

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

// The value of `text` in `type`, as convert() gives it from a string, without the string when
// the text reads straight as the type.
Value text_in(std::string_view text, DataType type, std::string_view column) {
  switch (type) {
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
    default:
      break;
  }
  return detail::declared_value(Value(std::string(text)), type, column);
}

Value field_value(const CsvField& f, DataType type, std::size_t row, std::size_t line,
                  std::string_view column) {
  if (is_null(f)) return Value();
  try {
    return text_in(f.text, type, column);
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

// Records as fields, row after row, and the line each record begins on.
struct Records {
  std::size_t width = 0;              // fields per record
  std::vector<CsvField> fields;       // field c of record r at r * width + c
  std::vector<std::size_t> lines;     // per record
  std::deque<std::string> unescaped;  // what fields view when not the text itself

  std::size_t size() const { return lines.size(); }
  const CsvField& at(std::size_t r, std::size_t c) const { return fields[r * width + c]; }
};

// The inferred type of column `c`. `earlier` is the type earlier batches of the same text gave
// it (null for none): text read as text once stays text, and a batch whose fields all hold the
// earlier type exactly is read in it, so a stream types each column as one whole text would.
DataType inferred_type(const Records& records, std::size_t c, bool time_column, DataType earlier) {
  if (earlier == DataType::string) return DataType::string;
  unsigned kinds = ~0u;
  bool any = false;
  for (std::size_t r = 0; r < records.size(); ++r) {
    const CsvField& f = records.at(r, c);
    if (is_null(f)) continue;
    any = true;
    kinds &= kinds_of(f, time_column);
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
        {names[c], inferred_type(records, c, names[c] == options.time_column, before)});
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
                    const ReadOptions& options, std::size_t rows_before = 0,
                    const Schema* earlier = nullptr) {
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
      columns.set(target[c], field_value(records.at(r, c), typed[c].type, rows_before + r + 1,
                                         records.lines[r], names[c]));
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

}  // namespace

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

namespace detail {
namespace {

// Finds where records end in CSV text arriving in pieces, reading quotes exactly as
// RecordReader does (a quote opens a field only at its start; "" inside is a literal quote).
class RecordBoundaries {
 public:
  // Feeds one character; true when it ends a record.
  bool ends_record(char c) {
    switch (state_) {
      case State::field_start:
        if (c == '"') {
          state_ = State::quoted;
          return false;
        }
        [[fallthrough]];
      case State::unquoted:
        if (c == '\n') {
          state_ = State::field_start;
          return true;
        }
        state_ = c == ',' ? State::field_start : State::unquoted;
        return false;
      case State::quoted:
        if (c == '"') state_ = State::quote_seen;
        return false;
      case State::quote_seen:
        if (c == '"') {
          state_ = State::quoted;
          return false;
        }
        state_ = State::unquoted;
        return ends_record(c);
    }
    return false;
  }

 private:
  enum class State : std::uint8_t { field_start, unquoted, quoted, quote_seen };
  State state_ = State::field_start;
};

class CsvStream final : public StreamFormat {
 public:
  CsvStream(ReadOptions options, BatchSink& sink) : options_(std::move(options)), sink_(sink) {}

  void feed(std::string_view bytes) override {
    std::size_t at = pending_.size();
    pending_.append(bytes);
    while (at < pending_.size()) {
      if (!boundaries_.ends_record(pending_[at++])) continue;
      complete_ = at;
      ++records_;
      if (names_ ? sink_.full(records_, complete_) : true) {
        parse(complete_);  // drops the first `at` bytes
        at = 0;
      }
    }
  }

  void finish() override {
    if (!pending_.empty()) {
      ++records_;
      parse(pending_.size());
    }
    if (names_ && !emitted_) emit(records_table(*names_, {}, options_));
  }

 private:
  // Parses the complete records in the first `end` bytes of pending_.
  void parse(std::size_t end) {
    std::string_view text(pending_.data(), end);
    RecordReader reader(text, line_);
    if (!names_) {
      std::vector<CsvField> header;
      std::deque<std::string> unescaped;
      reader.next(header, unescaped);
      names_ = header_names(header);
    }
    const Records records = read_records(reader, *names_);
    std::optional<Table> table;  // built before the text its fields view goes
    if (records.size() > 0) table = batch(records);
    line_ = reader.next_line();
    pending_.erase(0, end);
    complete_ = 0;
    records_ = 0;
    if (table) emit(std::move(*table));
  }

  Table batch(const Records& records) {
    Table table = records_table(*names_, records, options_, rows_, emitted_ ? &schema_ : nullptr);
    rows_ += records.size();
    if (options_.only_declared) return table;
    try {
      schema_ = emitted_ ? Schema::unify(schema_, table.schema()) : table.schema();
    } catch (const DataError& e) {
      // Earlier batches are already handed on in their types; only a declared type reads every
      // batch alike.
      throw DataError(line_prefix(clashing_line(records)) + e.what() +
                      " (earlier lines were already read; declare the column's type in the "
                      "schema to read every line as that type)");
    }
    return table;
  }

  // The line of the first field whose own type cannot widen from the type earlier batches
  // gave its column.
  std::size_t clashing_line(const Records& records) const {
    for (std::size_t r = 0; r < records.size(); ++r) {
      for (std::size_t c = 0; c < names_->size(); ++c) {
        const auto i = schema_.find((*names_)[c]);
        const CsvField& f = records.at(r, c);
        if (!i || is_null(f)) continue;
        try {
          Schema::widen(schema_.field(*i).type,
                        type_of(kinds_of(f, (*names_)[c] == options_.time_column)));
        } catch (const DataError&) {
          return records.lines[r];
        }
      }
    }
    return records.lines.front();
  }

  void emit(Table&& table) {
    emitted_ = true;
    sink_.emit(std::move(table));
  }

  ReadOptions options_;
  BatchSink& sink_;
  RecordBoundaries boundaries_;
  std::string pending_;       // text not parsed yet, starting at a record
  std::size_t complete_ = 0;  // bytes of pending_ holding complete records
  std::size_t records_ = 0;   // complete records in pending_
  std::size_t line_ = 1;      // the line pending_ begins on
  std::size_t rows_ = 0;      // records handed on so far
  std::optional<std::vector<std::string>> names_;
  Schema schema_;  // the batches' schemas unified so far
  bool emitted_ = false;
};

}  // namespace

std::unique_ptr<StreamFormat> csv_stream(const ReadOptions& options, BatchSink& sink) {
  return std::make_unique<CsvStream>(options, sink);
}

}  // namespace detail

}  // namespace interloper
