// Reading JSON lines: whole texts, streams fed in chunks, and a schema from its JSON.
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

std::string line_prefix(std::size_t line) { return "line " + std::to_string(line) + ": "; }

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
    cell(detail::text_value(std::string(s),
                            key_ == options_.time_column && !options_.schema.find(key_)));
  }
  [[noreturn]] void not_an_object(const char* type) {
    fail(std::string("expected a JSON object, got ") + type);
  }
  [[noreturn]] void nested(const char* type) {
    fail("column '" + key_ + "': nested " + type + " values are not supported");
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
      slot.second = detail::declared_value(v, f.type, f.name);
    } catch (const DataError& e) {
      throw DataError(detail::row_prefix(row_no_, line_) + e.what());
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
    columns_ = detail::TableColumns(table);
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
  [[noreturn]] void nested(const char* type) {
    fail("column '" + key_name() + "': nested " + type + " values are not supported");
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
    if (v.is_null() || v.type() == f.type) return columns_.set(column_, std::move(v));
    try {
      columns_.set(column_, detail::declared_value(v, f.type, f.name));
    } catch (const DataError& e) {
      throw DataError(detail::row_prefix(row_no_, line_) + e.what());
    }
  }

  const Schema& schema_;
  detail::TableColumns columns_;
  std::size_t line_ = 0;
  std::size_t row_no_ = 0;
  std::size_t column_ = Schema::npos;
  std::size_t next_column_ = 0;
  std::string unknown_;
  std::vector<std::string_view> spelled_;  // each column's name as JSON spells it, or ""
  std::string date_text_;                  // the text of the last date read ("" before any)
  Value::Date date_{};
};

// Adds lines to a table one at a time; shared by the whole-text readers and the stream parser.
// Rows are counted across calls, so a stream's errors number rows as a whole text would.
class LineAdder {
 public:
  explicit LineAdder(const ReadOptions& options)
      : options_(options), inferred_(options), declared_(options) {}

  // Parses line `line_no` (1-based) into `table` (whose columns are exactly the declared ones
  // when options.only_declared); blank lines are skipped.
  void add(Table& table, std::string_view line, std::size_t line_no) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
    ++row_no_;
    if (options_.only_declared) {
      declared_.start(table, line_no, row_no_);
      try {
        detail::JsonLineReader(line, declared_).read();
      } catch (...) {
        declared_.abandon();
        throw;
      }
      declared_.end();
      return;
    }
    inferred_.start(line_no, row_no_);
    detail::JsonLineReader(line, inferred_).read();
    try {
      table.append(std::move(inferred_.cells()));
    } catch (const DataError& e) {
      throw DataError(line_prefix(line_no) + e.what());
    }
  }

 private:
  const ReadOptions& options_;
  InferredLine inferred_;
  DeclaredLine declared_;
  std::size_t row_no_ = 0;
};

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

namespace detail {

// The JSON lines half of TableStreamParser: complete lines go straight into the batch; a line
// cut by the end of a chunk waits in `partial_`.
class JsonLinesStream final : public StreamFormat {
 public:
  JsonLinesStream(ReadOptions options, BatchSink& sink)
      : options_(std::move(options)), adder_(options_), sink_(sink) {
    batch_ = options_.only_declared ? Table(options_.schema) : Table();
  }

  void feed(std::string_view bytes) override {
    while (!bytes.empty()) {
      const std::size_t nl = bytes.find('\n');
      if (nl == std::string_view::npos) {
        partial_.append(bytes);
        return;
      }
      if (partial_.empty()) {
        line(bytes.substr(0, nl));
      } else {
        partial_.append(bytes.substr(0, nl));
        line(partial_);
        partial_.clear();
      }
      bytes.remove_prefix(nl + 1);
    }
  }

  void finish() override {
    if (!partial_.empty()) {
      line(partial_);
      partial_.clear();
    }
    if (batch_.num_rows() > 0) emit();
  }

 private:
  void line(std::string_view text) {
    adder_.add(batch_, text, ++line_no_);
    batch_bytes_ += text.size() + 1;
    if (sink_.full(batch_.num_rows(), batch_bytes_)) emit();
  }

  void emit() {
    // Declared columns the batch lacks are added as nulls of their type (values were converted
    // as they were read).
    if (!options_.only_declared) batch_.conform(options_.schema);
    // The next batch starts with every column seen so far, so that a value clashing with an
    // earlier batch's type is reported with its own line number.
    Table next(batch_.schema());
    sink_.emit(std::move(batch_));
    batch_ = std::move(next);
    batch_bytes_ = 0;
  }

  ReadOptions options_;
  LineAdder adder_;
  BatchSink& sink_;
  Table batch_;
  std::size_t batch_bytes_ = 0;
  std::size_t line_no_ = 0;
  std::string partial_;
};

std::unique_ptr<StreamFormat> json_lines_stream(const ReadOptions& options, BatchSink& sink) {
  return std::make_unique<JsonLinesStream>(options, sink);
}

}  // namespace detail

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
    fields.push_back(Field{f["name"].get<std::string>(),
                           type_from_name(f["type"].get_ref<const std::string&>())});
  }
  return Schema(std::move(fields));
}

}  // namespace interloper
