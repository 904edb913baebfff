// Everything that turns Python objects into the library's values and back.
//
// This is the only place that knows how a Python value maps to an il::Value and an
// il::TimePoint: rows, upstream rows, time arguments and partition values all pass through
// these functions, so a new Value type (exact decimals, JSON values, finer timestamps) is added
// here once.
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/time.hpp"

namespace interloper::python {

namespace py = pybind11;

// ---- Time ---------------------------------------------------------------------------------

// A datetime.date or datetime.datetime as a TimePoint label. An aware datetime gives its UTC
// label; sub-second digits are dropped (time points have second resolution). Raises TypeError
// naming `argument` (e.g. "truncate(): argument 't'") for anything else.
TimePoint to_time_point(py::handle object, std::string_view argument);

// How a TimePoint goes back to Python.
enum class TimeShape {
  date,   // datetime.date (the time of day must be midnight)
  naive,  // a naive datetime.datetime
  utc,    // an aware datetime.datetime in UTC
};

// The shape arithmetic answers in, for input `like`: a date stays a date (a datetime for hour
// periods), a naive datetime stays naive, an aware one comes back aware in UTC.
TimeShape shape_of(py::handle like, TimeGranularity granularity);
// The shape of a period start of `granularity`: a datetime for hours, else a date.
TimeShape shape_of(TimeGranularity granularity);

py::object from_time_point(TimePoint t, TimeShape shape);
// The same with a fraction of a second (0..999999 microseconds), for timestamp cells.
py::object from_time_point(TimePoint t, TimeShape shape, int microseconds);

// True for a datetime.datetime with a tzinfo that gives an offset.
bool is_aware(py::handle object);

// ---- Values and rows ----------------------------------------------------------------------

// A Python value as a cell of `column`: None, bool, int (64-bit), float, str, datetime.date,
// datetime.datetime (aware: its UTC instant; microseconds kept), decimal.Decimal (exact, at
// most 38 digits), and list, tuple or dict (a json value). Raises TypeError / OverflowError naming the
// column and the value for anything else.
Value to_value(py::handle object, std::string_view column);
// The inverse: dates as datetime.date, timestamps as aware UTC datetimes, decimals as
// decimal.Decimal, json values as what json.loads gives.
py::object from_value(const Value& value);

// Appends Python rows (dicts of column -> value) to a table. Keeps the column order of the
// previous row, so rows with the same keys take the fast path. Raises TypeError naming the row
// for a row that is not a dict or a key that is not a str.
class RowAppender {
 public:
  explicit RowAppender(Table& table) : table_(table) {}
  void append(py::handle row, std::size_t row_number);
  // Forgets the previous row's keys: call when the table was emptied or replaced.
  void reset() { keys_.clear(); }

 private:
  Table& table_;
  std::vector<py::object> keys_;      // the previous row's keys, in its order
  std::vector<std::string> names_;    // the same keys as text
  std::vector<std::size_t> columns_;  // their columns in table_
  std::vector<Value> cells_;
};

// A table as a list of dicts, one per row, keys in column order.
py::list to_rows(const Table& table);

}  // namespace interloper::python
