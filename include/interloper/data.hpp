#pragma once
// interloper data layer: values, schemas, tables and their text codecs.
//
// An asset computes a `Table`: named, typed columns stored column by column. Each cell is a
// `Value`, one of nine types (`DataType`): null, bool, 64-bit int, double, string, date (a civil
// day, `std::chrono::sys_days`), timestamp (a UTC instant to the microsecond,
// `std::chrono::sys_time<std::chrono::microseconds>`), decimal (an exact number of up to 38
// digits, see `Decimal`) and json (an array, an object or any JSON value, held as canonical JSON
// text, see `Json`). There is no time zone in a Value: the time layer converts before data
// reaches a table.
//
// Tables are built row by row. A column's type is inferred from the values it receives and
// widens when it must:
//
//   * null is compatible with every type: a column stays nullable, and a column that has only
//     seen nulls has type `null`;
//   * int + double -> double (earlier ints are converted);
//   * date + timestamp -> timestamp (earlier dates become their midnight);
//   * int + decimal -> decimal; decimals of different scales -> decimal (each keeps its digits);
//   * any other mix (string + int, bool + int, ...) is a `DataError` naming the column, the row
//     and both types. Nothing is changed by an append that throws.
//
// Tables travel as JSON lines (one object per row, keys in schema order, dates as "YYYY-MM-DD",
// timestamps as "YYYY-MM-DDTHH:MM:SS" with ".ffffff" when they have a fraction, decimals as
// JSON numbers of their exact digits, json values nested as they are) or RFC 4180 CSV (header
// row; an empty field is null, an empty string is written `""`). Readers never lose what they read:
// a JSON string stays a string and CSV text becomes a bool, int or double only when that value
// prints back as the same number (`007` and `99999999999999999999` stay strings). Only a column the
// caller names as the time column (a partition column) turns ISO dates and RFC 3339 timestamps into
// dates and timestamps. A declared `Schema` (see ReadOptions) converts its columns to their types.
//
// Example:
//
//   using namespace std::chrono;
//   interloper::Table t;
//   t.append({{"date", year{2026} / 1 / 5}, {"campaign", "spring"}, {"clicks", 12}});
//   t.append({{"date", year{2026} / 1 / 6}, {"clicks", 7.5}});   // clicks widens to double,
//                                                                // campaign is null in the second
//                                                                row
//   std::string text = interloper::to_json_lines(t);
//   interloper::Table back = interloper::parse_json_lines(text, &t.schema());
//   assert(back == t);
//
// Thread safety: all types are values. Concurrent const access is safe; a Table being modified
// must not be accessed concurrently.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <interloper/error.hpp>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace interloper {

// The type of a Value or of a column.
enum class DataType : std::uint8_t {
  null,
  boolean,
  int64,
  float64,
  string,
  date,
  timestamp,
  decimal,
  json
};

// The name used in schemas and messages: "null", "bool", "int", "double", "string", "date",
// "timestamp", "decimal", "json".
std::string_view type_name(DataType type) noexcept;

// The DataType called `name` (one of the names above, exactly). Throws DataError naming `name`
// when it is not one of them.
DataType type_from_name(std::string_view name);

// An exact decimal number: an integer of at most 38 digits (its unscaled value) and how many of
// those digits come after the point (its scale, 0 to 38): 12.50 is 1250 with scale 2.
//
// Held as a 128-bit integer (in two 64-bit halves, so that a Value keeps its size and
// alignment) rather than as text: checks against a column's precision and scale, rescaling and
// comparison are then plain arithmetic, and 38 digits is what both PostgreSQL's numeric with a
// declared precision and the common warehouses accept. The text form is the digits with the
// point placed by the scale ("12.50", "-0.05", "7"), which every destination stores exactly.
class Decimal {
 public:
  static constexpr int kMaxDigits = 38;

  // Zero, scale 0.
  Decimal() noexcept = default;
  // unscaled / 10^scale. Throws DataError naming the value when |unscaled| has more than 38
  // digits or scale is outside 0..38.
  Decimal(__int128 unscaled, int scale);
  // An int64 as a decimal of scale 0.
  static Decimal of(std::int64_t i) noexcept;
  // Parses a decimal number: an optional '-' or '+', digits with an optional '.' and fraction,
  // an optional exponent ("1.5e3"). nullopt for anything else, and for a number that needs more
  // than 38 digits or a scale beyond 38 (never rounded).
  static std::optional<Decimal> parse(std::string_view text) noexcept;

  __int128 unscaled() const noexcept {
    return static_cast<__int128>((static_cast<unsigned __int128>(hi_) << 64) | lo_);
  }
  int scale() const noexcept { return scale_; }
  // Digits of the unscaled value, at least 1 (0 has one digit).
  int digits() const noexcept;
  // The same number with `scale` digits after the point. nullopt when that would drop a
  // non-zero digit or need more than 38 digits.
  std::optional<Decimal> rescaled(int scale) const noexcept;
  // Whether the number fits a column decimal(precision, scale): at most precision - scale
  // digits before the point and at most `scale` after it (trailing zeros aside).
  bool fits(int precision, int scale) const noexcept;
  // The nearest double (for arithmetic that asks for one, never for storage).
  double to_double() const noexcept;
  // "12.50", "-0.05", "7": the digits, with a point when scale > 0.
  std::string to_string() const;

  // The same number (1.5 == 1.50).
  friend bool operator==(const Decimal& a, const Decimal& b) noexcept;

 private:
  std::uint64_t lo_ = 0;
  std::int64_t hi_ = 0;
  std::uint8_t scale_ = 0;
};

// A JSON value held as its canonical text: no white space between tokens, strings escaped only
// where JSON requires, the members of an object sorted as PostgreSQL's jsonb keeps them (shorter
// names first, then by their bytes; the last of repeated names wins), numbers written with their
// exact digits (an exponent is spelled out: 1.5e2 is 150). So two texts of one value are equal,
// and a value read back from any destination is the text written.
struct Json {
  std::string text;
  friend bool operator==(const Json&, const Json&) = default;
};

// Canonical JSON (see Json) for the JSON text `text` (any value: object, array, string, number,
// true, false, null; white space around it allowed). Throws DataError naming the position of the
// first mistake for anything that is not one JSON value.
Json parse_json(std::string_view text);

// One cell: null, bool, int64, double, string, date, timestamp, decimal or json. A small value
// type (a variant); copying a string or json Value copies its text.
class Value {
 public:
  using Date = std::chrono::sys_days;
  // A UTC instant to the microsecond. Partition arithmetic works in whole seconds (TimePoint):
  // a timestamp belongs to the second that holds it (its floor).
  using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

  // Null.
  Value() noexcept = default;
  Value(std::nullptr_t) noexcept {}
  // bool only: pointers and other types never silently become a bool.
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  Value(T b) noexcept : v_(b) {}
  Value(int i) noexcept : v_(static_cast<std::int64_t>(i)) {}
  Value(long i) noexcept : v_(static_cast<std::int64_t>(i)) {}
  Value(long long i) noexcept : v_(static_cast<std::int64_t>(i)) {}
  Value(double d) noexcept : v_(d) {}
  // Strings. A null `const char*` is a programmer error (asserted), not a null Value.
  Value(const char* s);
  Value(std::string s) noexcept : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  // Dates. An invalid year_month_day (e.g. 2026-02-30) throws DataError naming it.
  Value(std::chrono::year_month_day ymd);
  Value(Date d) noexcept : v_(d) {}
  // Timestamps, to the microsecond or to the second.
  Value(Timestamp t) noexcept : v_(t) {}
  Value(std::chrono::sys_seconds t) noexcept : v_(Timestamp(t)) {}
  Value(Decimal d) noexcept : v_(d) {}
  Value(Json j) noexcept : v_(std::move(j)) {}

  // The type held.
  DataType type() const noexcept { return static_cast<DataType>(v_.index()); }
  bool is_null() const noexcept { return v_.index() == 0; }

  // Accessors. Each throws DataError naming the expected and the actual type when the Value
  // holds another type. Widening accessors: as_double() accepts an int and a decimal (the
  // nearest double), as_timestamp() accepts a date (its midnight), as_decimal() accepts an int.
  // as_string() and as_json() return references valid while the Value lives unchanged.
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const;
  Date as_date() const;
  Timestamp as_timestamp() const;
  Decimal as_decimal() const;
  const Json& as_json() const;

  // Text form: "null", "true"/"false", decimal ints, doubles in their shortest round-trip form
  // (always with a '.' or an exponent, e.g. "1.0", "0.1", "1e+300"), strings as they are (not
  // quoted), dates "YYYY-MM-DD", timestamps "YYYY-MM-DDTHH:MM:SS" followed by ".ffffff" (six
  // digits) only when the fraction is not zero, decimals as Decimal::to_string, json as its
  // canonical text.
  std::string to_string() const;

  // Same type and same value (an int is never equal to a double; NaN is not equal to itself;
  // decimals compare as numbers).
  friend bool operator==(const Value& a, const Value& b) noexcept { return a.v_ == b.v_; }

 private:
  std::variant<std::monostate, bool, std::int64_t, double, std::string, Date, Timestamp, Decimal,
               Json>
      v_;
};

// Writes v.to_string().
std::ostream& operator<<(std::ostream& os, const Value& v);
std::ostream& operator<<(std::ostream& os, DataType t);

// Parses "YYYY-MM-DD" exactly. Returns nullopt for anything else, including impossible days.
std::optional<Value::Date> parse_date(std::string_view text) noexcept;
// Parses an RFC 3339 timestamp: "YYYY-MM-DDTHH:MM:SS" ('T', 't' or ' ' between date and
// time), optional fractional seconds (".123456", at most six digits: a Timestamp holds
// microseconds), and an optional zone designator ("Z", "+02:00", "-0530", "+02"); what Python's
// isoformat() and PostgreSQL print. The result is the UTC instant (an offset is subtracted).
// Returns nullopt for anything else (including an impossible date, hour 24, a leap second, or
// a fraction of more than six digits: see timestamp_too_precise).
std::optional<Value::Timestamp> parse_timestamp(std::string_view text) noexcept;
// Whether `text` is a timestamp parse_timestamp refuses only because its fraction has more than
// six digits, which readers report rather than round.
bool timestamp_too_precise(std::string_view text) noexcept;

// Converts `v` to `type`: null stays null; the same type is returned unchanged; int -> double;
// date -> timestamp; int -> decimal; a double -> decimal by its shortest round-trip digits;
// decimal -> double (nearest); a string is parsed as bool ("true"/"false"), int, double, date,
// timestamp, decimal or json (the JSON text of a value); anything -> string gives to_string();
// anything -> json gives its JSON value (a string becomes a JSON string; parse_json reads JSON
// text). Throws DataError naming the value and both types when the
// conversion is impossible (e.g. "abc" -> int, double -> int), and for a timestamp text with
// more than six fractional digits.
Value convert(const Value& v, DataType type);

// A named, typed column.
// A named, typed column. A decimal column may declare its precision (1..38 digits in all) and
// scale (digits after the point, 0..precision): every value is then held at that scale and
// must fit. Precision 0 (the default) is a decimal column without a declared size, whose
// values keep their own scales (as PostgreSQL's numeric without a type modifier).
struct Field {
  std::string name;
  DataType type = DataType::null;
  std::uint8_t precision = 0;
  std::uint8_t scale = 0;
  friend bool operator==(const Field&, const Field&) = default;
};

// The type of `field` as schemas spell it: type_name(field.type), or "decimal(p,s)" for a
// decimal with a declared precision.
std::string type_text(const Field& field);
// The field called `name` whose type text is `text`: a type name, "decimal(p,s)" or
// "decimal(p)" (scale 0). Throws DataError naming the text when it is none of these, or when
// p is outside 1..38 or s outside 0..p.
Field field_of_type(std::string name, std::string_view text);

// An ordered list of fields with unique names.
class Schema {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  Schema() = default;
  // Throws DataError naming a duplicated field name.
  Schema(std::vector<Field> fields);
  Schema(std::initializer_list<Field> fields) : Schema(std::vector<Field>(fields)) {}

  std::size_t size() const noexcept { return fields_.size(); }
  bool empty() const noexcept { return fields_.empty(); }
  // The i-th field. Throws DataError naming i when i >= size().
  const Field& field(std::size_t i) const;
  const std::vector<Field>& fields() const noexcept { return fields_; }
  // The index of the field called `name`, or nullopt.
  std::optional<std::size_t> find(std::string_view name) const noexcept;
  // Adds a field at the end. Throws DataError naming `field.name` if it already exists.
  void add(Field field);
  // Sets the type of field i (and, for a decimal, its declared precision and scale; 0 for
  // none). Throws DataError naming i when i >= size().
  void set_type(std::size_t i, DataType type, std::uint8_t precision = 0, std::uint8_t scale = 0);

  // The type a column holding values of types a and b gets: equal types stay; null gives the
  // other; int + double -> double; date + timestamp -> timestamp. Throws DataError naming both
  // types for any other mix.
  static DataType widen(DataType a, DataType b);
  // The type a column of these values gets (fold of widen over their types; null if empty or
  // all null). Throws DataError naming `column` and both types on an incompatible mix.
  static DataType infer(const std::vector<Value>& values, std::string_view column = "");
  // Fields of `a` in order, then fields only in `b`; a field in both gets the widened type.
  // Throws DataError naming the column and both types when they are incompatible.
  static Schema unify(const Schema& a, const Schema& b);

  // "date: date, clicks: int, amount: decimal(38,2)".
  std::string to_string() const;
  friend bool operator==(const Schema&, const Schema&) = default;

 private:
  std::vector<Field> fields_;
};

std::ostream& operator<<(std::ostream& os, const Schema& s);

class Table;

namespace detail {
class TableColumns;  // the data layer's own readers fill columns in place
}  // namespace detail

// A read-only view of one row of a table, valid while the table is unchanged. Passed to
// Table::filter_rows predicates.
class RowRef {
 public:
  RowRef(const Table& table, std::size_t row) noexcept : table_(&table), row_(row) {}
  std::size_t index() const noexcept { return row_; }
  // The cell in column `name` / column `i`. Throws DataError naming an unknown column.
  const Value& operator[](std::string_view name) const;
  const Value& operator[](std::size_t column) const;

 private:
  const Table* table_;
  std::size_t row_;
};

// Named, typed columns stored column by column (one std::vector<Value> per column). Every
// column has num_rows() cells. Row-wise construction infers and widens column types (see the
// header comment). A mutating method that throws DataError leaves the table unchanged (it
// validates before it modifies).
class Table {
 public:
  // An empty table with no columns.
  Table() = default;
  // An empty table with these columns.
  explicit Table(Schema schema);

  std::size_t num_rows() const noexcept { return num_rows_; }
  std::size_t num_columns() const noexcept { return columns_.size(); }
  bool empty() const noexcept { return num_rows_ == 0; }
  const Schema& schema() const noexcept { return schema_; }

  // Adds a column of nulls (num_rows() of them) with declared type `type`. Throws DataError
  // naming `name` if a column of that name exists.
  void add_column(std::string name, DataType type = DataType::null);

  // Appends one row given as (column, value) pairs, in any order. An unknown column is added
  // (null in earlier rows); a column not mentioned gets null. Column types widen as needed.
  // Throws DataError naming the column, the row number and both types on an incompatible
  // value, or naming a column given twice.
  void append(std::initializer_list<std::pair<std::string_view, Value>> cells);
  void append(const std::vector<std::pair<std::string, Value>>& cells);
  // As above; the values are moved into the table.
  void append(std::vector<std::pair<std::string, Value>>&& cells);
  // Appends one row with one value per column in schema order (the fast path). Values widen
  // as in append. Throws DataError on a wrong number of values or an incompatible value.
  void append_row(std::vector<Value> row);
  // Gives every column `declared` names its declared type: cells are converted (see convert),
  // a declared column the table lacks is added as nulls, undeclared columns are kept as they
  // are. `first_row` is the number the first row has in messages (a batch after others). Throws
  // DataError naming the row (counting from `first_row`), the column and the value that does
  // not convert; the table is unchanged then.
  void conform(const Schema& declared, std::size_t first_row = 1);
  // Appends all rows of `other`, matching columns by name: the schema becomes
  // Schema::unify(schema(), other.schema()). Throws DataError on incompatible column types.
  void append_table(const Table& other);
  // The same, moving the cells out of `other` (left valid but unspecified).
  void append_table(Table&& other);
  // Reserves room for `rows` rows in every existing column.
  void reserve(std::size_t rows);

  // The index of column `name`, or nullopt.
  std::optional<std::size_t> column_index(std::string_view name) const noexcept {
    return schema_.find(name);
  }
  // Column cells. Throw DataError naming an unknown column / an out-of-range index.
  const std::vector<Value>& column(std::string_view name) const;
  const std::vector<Value>& column(std::size_t index) const;
  // One cell. Throws DataError naming an out-of-range row or an unknown column.
  const Value& at(std::size_t row, std::string_view column) const;
  // One row, in schema order. Throws DataError naming an out-of-range row.
  std::vector<Value> row(std::size_t i) const;

  // A table with the same schema and the given rows, in the given order (repeats allowed).
  // Throws DataError naming an out-of-range row.
  Table select_rows(const std::vector<std::size_t>& rows) const;
  // A table with the same schema and the rows for which `keep` returns true.
  Table filter_rows(const std::function<bool(const RowRef&)>& keep) const;

  // A small aligned text rendering (header, a dashed line, one line per row) for logs and
  // tests. Nulls show as "null".
  std::string to_string() const;

  // Same schema (names, types, order) and equal cells.
  friend bool operator==(const Table& a, const Table& b) noexcept {
    return a.num_rows_ == b.num_rows_ && a.schema_ == b.schema_ && a.columns_ == b.columns_;
  }

 private:
  template <typename Cells>
  void append_cells(Cells&& cells);
  // The column of each of a row's cells into scratch_ (new columns numbered from
  // num_columns()); throws DataError for a cell its column cannot take or a column given twice.
  template <typename Cells>
  void resolve_cells(const Cells& cells);
  // Sets column c's type to `type`, converting its cells.
  void retype_column(std::size_t c, DataType type);

  Schema schema_;
  template <typename Source>
  void append_rows_of(Source&& other);

  std::vector<std::vector<Value>> columns_;
  std::size_t num_rows_ = 0;
  std::vector<std::size_t> scratch_;  // per-append column indices, kept to avoid allocations

  friend class detail::TableColumns;
};

std::ostream& operator<<(std::ostream& os, const Table& t);

// ---- JSON lines -------------------------------------------------------------------------------
// One JSON object per row, keys in schema order, nulls written as null, dates "YYYY-MM-DD",
// timestamps "YYYY-MM-DDTHH:MM:SS[.ffffff]", doubles in shortest round-trip form (always with '.'
// or an exponent, so they read back as doubles), decimals as numbers of their exact digits, json
// values as their canonical JSON (nested, not quoted). Every line ends with '\n'. Writing a NaN or
// infinite double throws DataError naming the row and column (JSON has no such numbers).
std::string to_json_lines(const Table& table);
void write_json_lines(const Table& table, std::ostream& out);

// How a reader types the columns it reads.
struct ReadOptions {
  // Declared column types. Every value of a declared column is converted to its type (see
  // convert); a value that does not convert is a DataError naming the row, the line, the
  // column and the value. Declared columns missing from the input are null columns of their
  // type.
  Schema schema = {};
  // true: the table has exactly the declared columns and any other column is a DataError (how
  // a destination reads back what it wrote). false: undeclared columns are inferred.
  bool only_declared = false;
  // The column whose ISO dates ("YYYY-MM-DD") and RFC 3339 timestamps (see parse_timestamp)
  // become dates and timestamps when it is not declared: the partition column of a time
  // partitioning. "" for none. Text in every other undeclared column stays text.
  std::string time_column = {};
};

// Reads JSON lines (blank lines are skipped). Undeclared columns keep the JSON types: numbers,
// bools and strings as they are (a string stays a string, except in options.time_column); an
// integer beyond int64 becomes a string of its exact digits, never a rounded double; column
// types widen as in Table::append. An array or object becomes a json value (canonical text).
// Declared columns are converted (see ReadOptions): a number in a decimal column is read from
// its digits (never through a double) and must fit the column's precision and scale; an array
// or object in a string column becomes its canonical JSON text. A timestamp text with more than
// six fractional digits in a timestamp column is refused, never rounded. Malformed JSON, invalid
// UTF-8 or a line that is not an object is a DataError naming the line number. `declared` is the
// same as ReadOptions{*declared, true}.
Table read_json_lines(std::istream& in, const ReadOptions& options);
Table parse_json_lines(std::string_view text, const ReadOptions& options);
Table read_json_lines(std::istream& in, const Schema* declared = nullptr);
Table parse_json_lines(std::string_view text, const Schema* declared = nullptr);

// ---- CSV (RFC 4180) ---------------------------------------------------------------------------
// A header row of column names, then one record per row, separated by '\n'. Fields containing a
// comma, a quote, CR or LF are quoted with quotes doubled. Null is an empty field; an empty
// string is written `""`. Values are written as Value::to_string (a json value as its canonical
// text, quoted as any field with a comma or a quote is).
std::string to_csv(const Table& table);
void write_csv(const Table& table, std::ostream& out);

// Reads CSV (LF or CRLF line ends; quoted fields may span lines). An unquoted empty field is
// null; a quoted empty field is an empty string. An undeclared column gets the narrowest of
// bool ("true"/"false"), int, double and string that holds every one of its fields exactly:
// int only for canonical decimals within int64 (no leading zeros, so `007` stays text), double
// only for decimals whose double prints back as the same number; date and timestamp only in
// options.time_column. Declared columns are converted (see ReadOptions): a decimal column keeps
// the field's exact digits, a json column reads the field as JSON text; with only_declared,
// header names must be declared columns. Throws DataError naming the line number for a record
// with the wrong number of fields, an unterminated quote, invalid UTF-8, an unknown or
// duplicated header name, or a failed conversion (with the row and the column).
// `declared` is the same as ReadOptions{*declared, true}.
Table read_csv(std::istream& in, const ReadOptions& options);
Table parse_csv(std::string_view text, const ReadOptions& options);
Table read_csv(std::istream& in, const Schema* declared = nullptr);
Table parse_csv(std::string_view text, const Schema* declared = nullptr);

// ---- Streams ----------------------------------------------------------------------------------
// Reads JSON lines or CSV text that arrives in pieces of any size (a program's output as it is
// read, a file read in blocks) and hands the rows on in batches, so that memory holds one batch
// rather than the whole text. A piece may end anywhere, inside a line or a quoted field.
//
//   interloper::TableStreamParser parser(interloper::TableStreamParser::Format::json_lines,
//                                        [&](interloper::Table&& batch) { writer.append(batch); });
//   while (std::optional<std::string> piece = read_some()) parser.feed(*piece);
//   parser.finish();  // the last, partial batch
//
// Values and types are read as parse_json_lines and parse_csv read them (ReadOptions apply to
// every batch: declared columns are converted, strings stay strings, only the time column becomes
// dates), and errors are the same DataErrors naming the 1-based row and line. Every batch after
// the first starts with the columns seen so far, so batches concatenate with Table::append_table
// (or Schema::unify). An undeclared CSV column is typed per batch, keeping what earlier batches
// gave it when its fields allow: a column read as text stays text (`007` in one batch, `12` in a
// later one), and int widens to double. The one difference from parse_csv: a column read as
// numbers in earlier batches that holds text that must stay text in a later one (`007`, a word)
// is a DataError naming the line and the column, since the earlier batches are already handed
// on; declaring the column's type reads every batch alike.
//
// `on_batch` runs on the thread calling feed() or finish() and may throw: the exception leaves
// through that call and the parser must not be used again. Not thread-safe.
class TableStreamParser {
 public:
  enum class Format : std::uint8_t { json_lines, csv };
  // A batch is handed on when it reaches either bound (and at finish()).
  struct Limits {
    std::size_t rows = 8192;                   // rows per batch
    std::size_t bytes = std::size_t{4} << 20;  // text bytes per batch
  };

  // `options` are copied and used as parse_json_lines / parse_csv use them.
  TableStreamParser(Format format, std::function<void(Table&&)> on_batch, Limits limits,
                    const ReadOptions& options);
  // `declared`, when given, is ReadOptions{*declared, true}: exactly the declared columns.
  TableStreamParser(Format format, std::function<void(Table&&)> on_batch, Limits limits,
                    const Schema* declared = nullptr);
  TableStreamParser(Format format, std::function<void(Table&&)> on_batch)
      : TableStreamParser(format, std::move(on_batch), Limits{}) {}
  ~TableStreamParser();
  TableStreamParser(const TableStreamParser&) = delete;
  TableStreamParser& operator=(const TableStreamParser&) = delete;

  // Parses `bytes`, handing on every batch that fills. Throws DataError on malformed text.
  void feed(std::string_view bytes);
  // Parses what remains (a last line without a newline) and hands on the last batch. A CSV text
  // that has a header but no records gives one empty batch with the header's columns; a text
  // without rows gives no batch at all. Call once, after the last feed().
  void finish();
  // Rows handed on so far.
  std::uint64_t rows() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// ---- Schema as JSON ---------------------------------------------------------------------------
// `[{"name":"date","type":"date"},{"name":"amount","type":"decimal(38,2)"}]` (types as
// type_text spells them).
std::string schema_to_json(const Schema& schema);
// The inverse. Throws DataError on malformed JSON, a missing name/type, or an unknown type
// (see field_of_type).
Schema schema_from_json(std::string_view text);

}  // namespace interloper
