#pragma once
// Private text helpers shared by Value::to_string and the codecs: they append to a string so
// the writers never build temporaries per cell.

#include <interloper/data.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace interloper::detail {

void append_int(std::string& out, std::int64_t i);
// Shortest round-trip form, always with '.', an exponent, "nan" or "inf" so it reads as double.
void append_double(std::string& out, double d);
// YYYY-MM-DD (years outside 0..9999 get a sign and at least four digits, as TimePoint writes them).
void append_date(std::string& out, Value::Date d);
// YYYY-MM-DDTHH:MM:SS, then .ffffff (six digits) when the fraction is not zero.
void append_timestamp(std::string& out, Value::Timestamp t);
// Writes the text append_timestamp writes for `micros` since the epoch at p (room:
// kMaxIsoChars); returns the end.
char* put_timestamp_micros(char* p, std::int64_t micros);
// `s` as a JSON string: quoted, with '"', '\\' and control characters escaped (nothing else).
void append_json_string(std::string& out, std::string_view s);
// Appends v.to_string().
void append_value(std::string& out, const Value& v);
// "int 12", "string \"abc\"", "null" — for error messages.
std::string describe(const Value& v);
// Appends the JSON lines of `rows` of `table` (every row, in order, when null) to `out`, as
// to_json_lines writes them. Throws DataError as to_json_lines does (a row number counts the
// table's rows from 1).
void append_json_lines(std::string& out, const Table& table,
                       const std::vector<std::size_t>* rows = nullptr);
// Throws the DataError to_json_lines would throw for `table`: its first NaN or infinite double.
void check_json_numbers(const Table& table);
// Adds the rows of JSON-lines `text` to `table`, read as parse_json_lines(text, options) reads
// them: with options.only_declared, `table` has exactly the declared columns; otherwise
// options.schema must be empty and columns are added and widened as rows need them. Lines and
// rows in messages count from the start of `text`. Throws DataError as parse_json_lines does;
// `table` may then hold some of the text's rows.
void append_json_lines_text(Table& table, std::string_view text, const ReadOptions& options);
// A CSV header row of `names`.
void append_csv_header(std::string& out, const std::vector<std::string>& names);
// One CSV record per row of `rows` of `table` (every row, in order, when null): field k is
// column columns[k] of the table, or empty (null) when columns[k] is Schema::npos.
void append_csv_records(std::string& out, const Table& table,
                        const std::vector<std::size_t>& columns,
                        const std::vector<std::size_t>* rows = nullptr);
// Parses a whole decimal int64 ("-12"); false on anything else or overflow.
bool parse_int(std::string_view text, std::int64_t& out) noexcept;
// Parses a whole double (decimal or exponent form, "nan"/"inf" rejected); false otherwise.
bool parse_double(std::string_view text, double& out) noexcept;

// Readers type what they read with these, one value at a time, so that a reader fed in batches
// gives every batch the same types.

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF).
bool valid_utf8(std::string_view text) noexcept;
// Whether `text` is the canonical decimal form of an int64 (no sign '+', no leading zeros, in
// range): the only integers a reader may store without losing how they were written.
bool is_exact_int(std::string_view text, std::int64_t& out) noexcept;
// Whether `text` is a decimal number (not integer-shaped) whose double holds the same number:
// "0.5" and "1.50" are, "0.1000000000000000000001" and "007.5" are not.
bool is_exact_double(std::string_view text, double& out) noexcept;
// The value a reader stores for undeclared text: a date or a timestamp when `time_column` is
// set and the text is one, otherwise the text itself.
Value text_value(std::string text, bool time_column);
// `v` converted to a declared column's type (a decimal to the column's scale, when it declares
// one); a DataError names the column and the value.
Value declared_value(const Value& v, const Field& field);
// Whether a `v` must go through declared_value to enter a column declared `field`.
inline bool needs_declaring(const Value& v, const Field& field) {
  return !v.is_null() && (v.type() != field.type || field.type == DataType::decimal);
}
// "row 3 (line 4): " — where a reader found a bad value; rows and lines count from 1.
std::string row_prefix(std::size_t row, std::size_t line);

}  // namespace interloper::detail
