// Internal to the sessions: engine errors made SqlErrors, and the target of a bulk append.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "interloper/sqlsession/session.hpp"

namespace interloper::sql {

// Inside a catch block: rethrows an SqlError as it is, and any other DestinationError as an
// SqlError of `kind` with the same message.
[[noreturn]] void rethrow_as_sql_error(SqlError::Kind kind);

// `"schema"."table" ("a", "b")` (without the schema when it is empty), as INSERT and COPY name
// the columns they fill.
std::string append_target(const Dialect& dialect, std::string_view schema, std::string_view table,
                          const std::vector<std::string>& columns);

}  // namespace interloper::sql
