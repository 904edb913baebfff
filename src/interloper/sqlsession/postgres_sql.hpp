// Internal: queries written with named parameters (":name"), as `sql:` assets write them, made
// into PostgreSQL's numbered ones ($1, $2...), and result cells turned back into Values.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/postgres/postgres.hpp"

namespace interloper::detail::pg {

struct NumberedQuery {
  std::string sql;                 // the text with each ":name" replaced by "$n"
  std::vector<std::string> names;  // names[n - 1] is the parameter written "$n"
};

// Replaces every ":name" outside string literals ('...', E'...'), quoted identifiers, comments
// (--, nested /* */) and dollar-quoted text ($$...$$, $tag$...$tag$) by "$n", one number per
// distinct name. "::" casts are not parameters.
NumberedQuery number_parameters(std::string_view sql);

// Binds `value` for a query: dates and timestamps typed as such, numbers and booleans typed,
// strings left for the server to type from their context (a string compared with a date column
// is read as a date), nulls untyped.
void bind_value(postgres::Params& params, const Value& value);

// The DataType a result column of PostgreSQL type `type` becomes (null for types read as text).
DataType result_type(Oid type);
// The Value of a cell in text format from a column of PostgreSQL type `type`.
Value text_value(std::string_view text, Oid type);

}  // namespace interloper::detail::pg
