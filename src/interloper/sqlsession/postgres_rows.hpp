// Internal: rows to and from PostgreSQL's binary format (COPY ... BINARY and binary results).
#pragma once

#include <libpq-fe.h>

#include <string>
#include <string_view>
#include <vector>

#include "interloper/data.hpp"

namespace interloper::detail::pg {

// The PostgreSQL type a column of `type` is stored as (a column that has seen only nulls is
// text until a value decides its type).
const char* sql_type(DataType type);
Oid type_oid(DataType type);

// A text[] literal of `items` for a parameter ({"a","b\"c"}).
std::string text_array(const std::vector<std::string>& items);

// Encodes rows for COPY ... FROM STDIN (FORMAT binary).
class CopyEncoder {
 public:
  // The file header, once before the first row.
  static void header(std::string& out);
  // The end-of-data marker, once after the last row.
  static void trailer(std::string& out);
  // Row `r` of `columns`, each cell written as the stored type `types[c]` (an int into a double
  // column, a date into a timestamp column).
  static void row(std::string& out, const std::vector<const std::vector<Value>*>& columns,
                  const std::vector<DataType>& types, std::size_t r);
};

// The Value a binary cell of a column stored as `type` holds. Throws DestinationError naming
// `column` when the bytes do not fit the type.
Value decode_binary(std::string_view bytes, DataType type, const std::string& column);

}  // namespace interloper::detail::pg
