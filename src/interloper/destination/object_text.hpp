// Internal: the rows of one stored object's text, for the destinations that keep one object
// (file or S3 object) per partition.
#pragma once

#include <string_view>

#include "interloper/data.hpp"
#include "interloper/data/format.hpp"
#include "interloper/destination.hpp"

namespace interloper::detail {

// Adds the rows of `text`, in `format`, to `table` (a table of exactly `schema`'s columns when
// it is given). Throws DataError; the caller names the object.
inline void append_object_rows(Table& table, FileDestination::Format format, std::string_view text,
                               const Schema* schema) {
  if (text.empty()) return;
  if (format == FileDestination::Format::csv) {
    table.append_table(parse_csv(text, schema));
  } else {
    append_json_lines_text(table, text, schema ? ReadOptions{*schema, true} : ReadOptions{});
  }
}

}  // namespace interloper::detail
