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
// YYYY-MM-DDTHH:MM:SS.
void append_timestamp(std::string& out, Value::Timestamp t);
// Appends v.to_string().
void append_value(std::string& out, const Value& v);
// "int 12", "string \"abc\"", "null" — for error messages.
std::string describe(const Value& v);
// A CSV header row of `names`.
void append_csv_header(std::string& out, const std::vector<std::string>& names);
// One CSV record per row of `table`: field k is column columns[k] of the table, or empty (null)
// when columns[k] is Schema::npos.
void append_csv_records(std::string& out, const Table& table,
                        const std::vector<std::size_t>& columns);
// Parses a whole decimal int64 ("-12"); false on anything else or overflow.
bool parse_int(std::string_view text, std::int64_t& out) noexcept;
// Parses a whole double (decimal or exponent form, "nan"/"inf" rejected); false otherwise.
bool parse_double(std::string_view text, double& out) noexcept;

}  // namespace interloper::detail
