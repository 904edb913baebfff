// A line of JSON into a table: a handler of JsonLineReader for tables with undeclared columns,
// one for tables of exactly the declared columns, and the LineAdder that picks between them.
#include "interloper/data/json_line_adder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "interloper/data/format.hpp"
#include "interloper/data/json_lexer.hpp"
#include "interloper/data/table_columns.hpp"

// GCC 12 reports, wrongly, that the string inside a Value's std::variant "may be used
// uninitialized" once these handlers are inlined into one another (a known false positive of
// that version); the warning is off in this file only.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace interloper::detail {

namespace {

std::string line_prefix(std::size_t line) { return "line " + std::to_string(line) + ": "; }

// The decimal a JSON number in a decimal column is, from its digits (never through a double).
Value exact_number(std::string_view text, std::string_view column, std::size_t row,
                   std::size_t line) {
  if (auto d = Decimal::parse(text)) return Value(*d);
  throw DataError(row_prefix(row, line) + "column '" + std::string(column) + "': number " +
                  std::string(text) + " does not fit a decimal (at most 38 digits)");
}

// Handler of JsonLineReader for a line of a table with undeclared columns: collects the row's
// cells by name for Table::append. Errors are thrown as DataError naming the line.
class InferredLine {
 public:
  explicit InferredLine(const ReadOptions& options) : options_(options) {}

  // Resets for a new line, the `row`-th non-blank one.
  void start(std::size_t line, std::size_t row) {
    line_ = line;
    row_no_ = row;
    n_cells_ = 0;
    next_column_ = 0;
  }

  // Cells of the finished line.
  std::vector<std::pair<std::string, Value>>& cells() {
    cells_.resize(n_cells_);
    return cells_;
  }

  void key(std::string_view k) { key_.assign(k); }
  void null() { cell(Value()); }
  void boolean(bool b) { cell(Value(b)); }
  void integer(long long i) { cell(Value(i)); }
  // Beyond int64: the exact digits as text, as CSV keeps them, never a rounded number.
  void digits(std::string_view text) { cell(Value(std::string(text))); }
  void real(double d) { cell(Value(d)); }
  void string(std::string_view s) {
    const bool time_column = key_ == options_.time_column && !options_.schema.find(key_);
    Value v;
    try {
      v = text_value(std::string(s), time_column);
    } catch (const DataError& e) {
      throw DataError(row_prefix(row_no_, line_) + "column '" + key_ + "': " + e.what());
    }
    cell(std::move(v));
  }
  void json(std::string_view text) { cell(Value(Json{std::string(text)})); }
  bool wants_number_text() {
    if (options_.schema.empty()) return false;
    auto c = options_.schema.find(key_);
    return c && options_.schema.field(*c).type == DataType::decimal;
  }
  void number_text(std::string_view text) { cell(exact_number(text, key_, row_no_, line_)); }
  [[noreturn]] void not_an_object(const char* type) {
    fail(std::string("expected a JSON object, got ") + type);
  }
  [[noreturn]] void malformed(std::size_t column, const std::string& what) {
    fail("malformed JSON at column " + std::to_string(column) + ": " + what);
  }

 private:
  [[noreturn]] void fail(const std::string& what) { throw DataError(line_prefix(line_) + what); }

  // The declared column of key_: lines usually list their keys in one order, so the column
  // after the previous one is tried before the schema's lookup.
  std::optional<std::size_t> column_of_key() {
    const Schema& schema = options_.schema;
    std::optional<std::size_t> c;
    if (next_column_ < schema.size() && schema.field(next_column_).name == key_) {
      c = next_column_;
    } else {
      c = schema.find(key_);
    }
    next_column_ = c ? *c + 1 : 0;
    return c;
  }

  void cell(Value v) {
    auto c = column_of_key();
    if (n_cells_ == cells_.size()) cells_.emplace_back();
    auto& slot = cells_[n_cells_++];
    slot.first = key_;
    if (!c) {
      slot.second = std::move(v);
      return;
    }
    const Field& f = options_.schema.field(*c);
    try {
      slot.second = declared_value(v, f);
    } catch (const DataError& e) {
      throw DataError(row_prefix(row_no_, line_) + e.what());
    }
  }

  const ReadOptions& options_;
  std::size_t line_ = 0;
  std::size_t row_no_ = 0;
  std::string key_;
  std::vector<std::pair<std::string, Value>> cells_;
  std::size_t n_cells_ = 0;
  std::size_t next_column_ = 0;
};

// Handler of JsonLineReader for a line of a table of exactly the declared columns
// (ReadOptions::only_declared): each value goes straight into its column, in the column's type,
// with no row assembled on the way. Errors are thrown as DataError naming the line (and the row,
// for a value that does not convert); the caller abandons the row then.
class DeclaredLine {
 public:
  explicit DeclaredLine(const ReadOptions& options) : schema_(options.schema) {
    for (const Field& f : schema_.fields()) {
      const bool plain = std::all_of(f.name.begin(), f.name.end(), [](char c) {
        return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
      });
      spelled_.push_back(plain ? std::string_view(f.name) : std::string_view());
    }
  }

  // Starts row `row` (the `row`-th non-blank line, line `line`) of `table`, whose columns are
  // the declared ones.
  void start(Table& table, std::size_t line, std::size_t row) {
    columns_ = TableColumns(table);
    line_ = line;
    row_no_ = row;
    next_column_ = 0;
  }
  void end() { columns_.end_row(); }
  void abandon() noexcept { columns_.abandon_row(); }

  void key(std::string_view k) {
    const std::vector<Field>& fields = schema_.fields();
    if (next_column_ < fields.size() && same(fields[next_column_].name, k)) {
      column_ = next_column_;
    } else if (auto c = schema_.find(k)) {
      column_ = *c;
    } else {
      column_ = Schema::npos;
      unknown_.assign(k);
    }
    next_column_ = column_ + 1;  // 0 after an unknown key
  }
  // Lines usually list their members in the schema's order: the column after the last one.
  std::string_view expected_key() const {
    return next_column_ < spelled_.size() ? spelled_[next_column_] : std::string_view();
  }
  void key_as_expected() { column_ = next_column_++; }
  void null() { put(Value()); }
  void boolean(bool b) { put(Value(b)); }
  void integer(long long i) {
    if (declared_is(DataType::float64)) {
      columns_.set(column_, Value(static_cast<double>(i)));
    } else {
      put(Value(i));
    }
  }
  void digits(std::string_view text) { put(Value(std::string(text))); }
  void real(double d) { put(Value(d)); }
  void json(std::string_view text) { put(Value(Json{std::string(text)})); }
  bool wants_number_text() const { return declared_is(DataType::decimal); }
  void number_text(std::string_view text) { put(exact_number(text, key_name(), row_no_, line_)); }
  void string(std::string_view s) {
    if (declared_is(DataType::date)) {
      // The rows of a partition usually share their date: its text is read once.
      if (!date_text_.empty() && same(date_text_, s)) return columns_.set(column_, Value(date_));
      if (auto day = parse_date(s)) {
        date_text_.assign(s);
        date_ = *day;
        return columns_.set(column_, Value(*day));
      }
    }
    put(Value(std::string(s)));
  }
  [[noreturn]] void not_an_object(const char* type) {
    fail(std::string("expected a JSON object, got ") + type);
  }
  [[noreturn]] void malformed(std::size_t column, const std::string& what) {
    fail("malformed JSON at column " + std::to_string(column) + ": " + what);
  }

 private:
  [[noreturn]] void fail(const std::string& what) { throw DataError(line_prefix(line_) + what); }

  // a == b, for the short texts of keys and dates, without a call to memcmp.
  static bool same(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }

  const std::string& key_name() const {
    return column_ == Schema::npos ? unknown_ : schema_.fields()[column_].name;
  }
  bool declared_is(DataType type) const {
    return column_ != Schema::npos && schema_.fields()[column_].type == type;
  }

  // `v` into the current column, converted to its declared type.
  void put(Value&& v) {
    if (column_ == Schema::npos)
      fail("column '" + unknown_ + "' is not in the declared schema (" + schema_.to_string() + ")");
    const Field& f = schema_.fields()[column_];
    if (!needs_declaring(v, f)) return columns_.set(column_, std::move(v));
    try {
      columns_.set(column_, declared_value(v, f));
    } catch (const DataError& e) {
      throw DataError(row_prefix(row_no_, line_) + e.what());
    }
  }

  const Schema& schema_;
  TableColumns columns_;
  std::size_t line_ = 0;
  std::size_t row_no_ = 0;
  std::size_t column_ = Schema::npos;
  std::size_t next_column_ = 0;
  std::string unknown_;
  std::vector<std::string_view> spelled_;  // each column's name as JSON spells it, or ""
  std::string date_text_;                  // the text of the last date read ("" before any)
  Value::Date date_{};
};

}  // namespace

struct LineAdder::Handlers {
  explicit Handlers(const ReadOptions& options) : inferred(options), declared(options) {}
  InferredLine inferred;
  DeclaredLine declared;
};

LineAdder::LineAdder(const ReadOptions& options)
    : options_(options), handlers_(std::make_unique<Handlers>(options)) {}

LineAdder::~LineAdder() = default;

void LineAdder::add(Table& table, std::string_view line, std::size_t line_no) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  ++row_no_;
  if (options_.only_declared) {
    handlers_->declared.start(table, line_no, row_no_);
    try {
      JsonLineReader(line, handlers_->declared).read();
    } catch (...) {
      handlers_->declared.abandon();
      throw;
    }
    handlers_->declared.end();
    return;
  }
  handlers_->inferred.start(line_no, row_no_);
  JsonLineReader(line, handlers_->inferred).read();
  try {
    table.append(std::move(handlers_->inferred.cells()));
  } catch (const DataError& e) {
    throw DataError(line_prefix(line_no) + e.what());
  }
}

}  // namespace interloper::detail
