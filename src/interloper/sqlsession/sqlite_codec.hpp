// Internal: values to and from SQLite, as the SQLite session binds and reads them.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string_view>

#include "interloper/data.hpp"

namespace interloper::detail::sqlite_store {

// The column type values of `type` are stored as.
const char* sql_type(DataType type);

// The Value <-> SQLite codec of writes, reads and queries. A value binds as its storage class:
// booleans and integers as INTEGER, floats as REAL, strings and json as TEXT, decimals as the
// TEXT of their exact digits, dates and timestamps as their ISO text, written into `iso`
// (kMaxIsoChars bytes), which must outlive the step that reads it; strings and json are bound
// without a copy, so they too must outlive it. Returns SQLite's code.
int bind_value(sqlite3_stmt* stmt, int i, const Value& value, char* iso);
// A result cell of no declared type, by its storage class: INTEGER, REAL, NULL or TEXT.
Value read_stored(sqlite3_stmt* stmt, int c);
// The value of a stored cell (its text) in a column of type `type`
// (date, timestamp, decimal or json); nullopt when the text is not one. Timestamps written in
// whole seconds, and bare dates in a timestamp column, read as they always have.
std::optional<Value> stored_value(std::string_view text, DataType type);

}  // namespace interloper::detail::sqlite_store
