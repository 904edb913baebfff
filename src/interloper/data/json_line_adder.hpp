// Internal: how the whole-text readers (json_lines.cpp) and the stream parser
// (json_lines_stream.cpp) add a line of JSON to a table.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "interloper/data.hpp"

namespace interloper::detail {

// Adds lines to a table one at a time. Rows are counted across calls, so a stream's errors
// number rows as a whole text would.
class LineAdder {
 public:
  explicit LineAdder(const ReadOptions& options);
  ~LineAdder();
  LineAdder(const LineAdder&) = delete;
  LineAdder& operator=(const LineAdder&) = delete;

  // Parses line `line_no` (1-based) into `table` (whose columns are exactly the declared ones
  // when options.only_declared); blank lines are skipped. Throws DataError naming the line.
  void add(Table& table, std::string_view line, std::size_t line_no);

 private:
  struct Handlers;
  const ReadOptions& options_;
  std::unique_ptr<Handlers> handlers_;
  std::size_t row_no_ = 0;
};

}  // namespace interloper::detail
