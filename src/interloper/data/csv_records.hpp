// The CSV reader's records, private to the data layer: RFC 4180 records split from a text, and
// the typed tables made of them (csv.cpp), which the whole-text and the streaming readers share.
#pragma once

#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/data.hpp"

namespace interloper::detail::csv {

// One field: a slice of the text, or of Records::unescaped when it had to be unescaped.
struct CsvField {
  std::string_view text;
  bool quoted = false;
};

inline std::string line_prefix(std::size_t line) { return "line " + std::to_string(line) + ": "; }

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
unsigned kinds_of(const CsvField& f, bool time_column);
// The type a column of fields of `kinds` is read in.
DataType type_of(unsigned kinds);
inline bool is_null(const CsvField& f) { return f.text.empty() && !f.quoted; }
// The header's names; throws on a duplicate or invalid UTF-8.
std::vector<std::string> header_names(const std::vector<CsvField>& header);

// Records as fields, row after row, and the line each record begins on.
struct Records {
  std::size_t width = 0;              // fields per record
  std::vector<CsvField> fields;       // field c of record r at r * width + c
  std::vector<std::size_t> lines;     // per record
  std::deque<std::string> unescaped;  // what fields view when not the text itself

  std::size_t size() const { return lines.size(); }
  const CsvField& at(std::size_t r, std::size_t c) const { return fields[r * width + c]; }
};

// Every remaining record of `reader`. Throws DataError for a record with the wrong number of
// fields or a field not valid UTF-8.
Records read_records(RecordReader& reader, const std::vector<std::string>& names);
// The table of `records`; `rows_before` records came before them (rows are numbered from 1 in
// errors), `earlier` is the schema earlier batches were given (may be null).
Table records_table(const std::vector<std::string>& names, const Records& records,
                    const ReadOptions& options, std::size_t rows_before = 0,
                    const Schema* earlier = nullptr);
// Options that read exactly the `declared` schema's columns (any columns without one).
ReadOptions exactly(const Schema* declared);

}  // namespace interloper::detail::csv
