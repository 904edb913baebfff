// The Value <-> SQLite codec of the SQLite session (and of the SQLite destination's reads).
#include "interloper/sqlsession/sqlite_codec.hpp"

#include "interloper/data/format.hpp"
#include "interloper/time/civil.hpp"

namespace interloper::detail::sqlite_store {

const char* sql_type(DataType type) {
  switch (type) {
    case DataType::boolean:
    case DataType::int64:
      return "INTEGER";
    case DataType::float64:
      return "REAL";
    case DataType::string:
    case DataType::date:
    case DataType::timestamp:
    case DataType::decimal:  // TEXT: a NUMERIC affinity would turn the digits into a REAL
    case DataType::json:
      return "TEXT";
    case DataType::null:
      break;
  }
  return "";
}

int bind_value(sqlite3_stmt* stmt, int i, const Value& value, char* iso) {
  switch (value.type()) {
    case DataType::null:
      return sqlite3_bind_null(stmt, i);
    case DataType::boolean:
      return sqlite3_bind_int(stmt, i, value.as_bool() ? 1 : 0);
    case DataType::int64:
      return sqlite3_bind_int64(stmt, i, value.as_int());
    case DataType::float64:
      return sqlite3_bind_double(stmt, i, value.as_double());
    case DataType::string: {
      const std::string& text = value.as_string();
      return sqlite3_bind_text(stmt, i, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    }
    case DataType::date:
    case DataType::timestamp: {
      const char* end =
          value.type() == DataType::date
              ? detail::put_date(iso, value.as_date().time_since_epoch().count())
              : detail::put_timestamp_micros(iso, value.as_timestamp().time_since_epoch().count());
      return sqlite3_bind_text(stmt, i, iso, static_cast<int>(end - iso), SQLITE_STATIC);
    }
    case DataType::decimal: {  // the exact digits, as text
      const std::string text = value.as_decimal().to_string();
      return sqlite3_bind_text(stmt, i, text.data(), static_cast<int>(text.size()),
                               SQLITE_TRANSIENT);
    }
    case DataType::json: {
      const std::string& text = value.as_json().text;
      return sqlite3_bind_text(stmt, i, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    }
  }
  return SQLITE_MISUSE;
}

Value read_stored(sqlite3_stmt* stmt, int c) {
  switch (sqlite3_column_type(stmt, c)) {
    case SQLITE_INTEGER:
      return Value(static_cast<long long>(sqlite3_column_int64(stmt, c)));
    case SQLITE_FLOAT:
      return Value(sqlite3_column_double(stmt, c));
    case SQLITE_NULL:
      return Value();
    default:
      return Value(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                               static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
  }
}

std::optional<Value> stored_value(std::string_view text, DataType type) {
  switch (type) {
    case DataType::date:
      if (auto d = parse_date(text)) return Value(*d);
      break;
    case DataType::timestamp:
      if (auto t = parse_timestamp(text)) return Value(*t);
      if (auto d = parse_date(text)) return Value(Value::Timestamp(*d));
      break;
    case DataType::decimal:  // TEXT as written (an INTEGER or REAL a query stored: its text)
      if (auto d = Decimal::parse(text)) return Value(*d);
      break;
    case DataType::json:
      try {
        return Value(parse_json(text));
      } catch (const DataError&) {
        break;
      }
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace interloper::detail::sqlite_store
