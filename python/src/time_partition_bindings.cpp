// The time kind: TimePartition and TimePartitionWindow.
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "interloper/partitioning.hpp"

namespace interloper::python {

namespace {

py::tuple bounds_of(Bounds b, TimeGranularity g) {
  return py::make_tuple(from_time_point(b.start, shape_of(g)), from_time_point(b.end, shape_of(g)));
}

// The IANA zone an aware `now` is in, for lookback(): a zoneinfo.ZoneInfo gives its key, a
// zero offset (datetime.timezone.utc) gives "UTC". A fixed offset has no calendar of its own.
std::string zone_of(py::handle now) {
  if (!is_aware(now)) return "UTC";
  py::object tz = py::reinterpret_borrow<py::object>(now).attr("tzinfo");
  if (py::hasattr(tz, "key")) return tz.attr("key").cast<std::string>();
  py::object offset = py::reinterpret_borrow<py::object>(now).attr("utcoffset")();
  if (offset.attr("total_seconds")().cast<double>() == 0) return "UTC";
  throw py::value_error("lookback(): now is in " + py::str(tz).cast<std::string>() +
                        ", a fixed UTC offset without a calendar; give it a zoneinfo.ZoneInfo "
                        "or pass time_zone=");
}

std::optional<TimePartitionWindow> lookback(py::handle now, std::int64_t lookback,
                                            std::int64_t offset, TimeGranularity granularity,
                                            py::handle start,
                                            std::optional<std::string> time_zone) {
  const TimePoint instant = to_time_point(now, "lookback(): argument 'now'");
  std::optional<TimePoint> first;
  if (!start.is_none()) first = to_time_point(start, "lookback(): argument 'start'");
  const std::string zone = time_zone ? *time_zone : zone_of(now);
  return TimePartitionWindow::lookback(instant, lookback, offset, granularity, first, zone);
}

const char* const kPartitionDoc = R"(The period of a granularity holding a time point.

    >>> p = TimePartition(datetime.date(2026, 5, 20), TimeGranularity.MONTH)
    >>> p.value, p.key
    (datetime.date(2026, 5, 1), '2026-05')

`value` is the period start (a date; a naive datetime for HOUR, a UTC label), `bounds` the
half-open (start, end), `window` the window of one, `filter(column)` the bounds as a database
selects them and `slice(rows, column)` the rows inside them.)";

const char* const kWindowDoc = R"(Consecutive periods of one granularity, both ends inclusive.

    >>> w = TimePartitionWindow(datetime.date(2026, 1, 1), datetime.date(2026, 1, 7))
    >>> str(w), len(w)
    ('2026-01-01..2026-01-07', 7)

Iterating gives TimePartitions oldest first; `bounds` is the half-open range from the first
start to the last end. An end before the start raises ValueError.)";

void bind_time_partition(py::module_& m) {
  py::class_<TimePartition, Partition>(m, "TimePartition", kPartitionDoc)
      .def(py::init([](py::handle value, TimeGranularity granularity) {
             return TimePartition(to_time_point(value, "TimePartition(): argument 'value'"),
                                  granularity);
           }),
           py::arg("value"), py::arg("granularity") = TimeGranularity::DAY)
      .def_static("from_key", &TimePartition::from_key, py::arg("key"),
                  "The partition a key of any shape names ('2026-08' is a month); ValueError "
                  "naming a malformed key.")
      .def_property_readonly("value",
                             [](const TimePartition& p) {
                               return from_time_point(p.value(), shape_of(p.granularity()));
                             })
      .def_property_readonly("granularity", &TimePartition::granularity)
      .def_property_readonly(
          "bounds", [](const TimePartition& p) { return bounds_of(p.bounds(), p.granularity()); })
      .def_property_readonly("window", &TimePartition::window)
      .def("__repr__",
           [](const TimePartition& p) { return "TimePartition.from_key('" + p.key() + "')"; })
      .def(py::pickle([](const TimePartition& p) { return p.key(); },
                      [](const std::string& key) { return TimePartition::from_key(key); }));
}

void bind_time_window(py::module_& m) {
  py::class_<TimePartitionWindow, PartitionWindow>(m, "TimePartitionWindow", kWindowDoc)
      .def(py::init([](py::handle start, py::handle end, TimeGranularity granularity) {
             return TimePartitionWindow(
                 to_time_point(start, "TimePartitionWindow(): argument 'start'"),
                 to_time_point(end, "TimePartitionWindow(): argument 'end'"), granularity);
           }),
           py::arg("start"), py::arg("end"), py::arg("granularity") = TimeGranularity::DAY)
      .def_static("parse", &TimePartitionWindow::parse, py::arg("text"),
                  "'start..end' (keys of one shape) or a bare key, the granularity inferred.")
      .def_static("lookback", &lookback, py::arg("now"), py::arg("lookback"), py::arg("offset") = 0,
                  py::arg("granularity") = TimeGranularity::DAY, py::arg("start") = py::none(),
                  py::arg("time_zone") = py::none(),
                  R"(The window a schedule covers at `now`, or None when clamping leaves nothing.

It ends `offset` partitions before the current one and is `lookback` partitions long, starting
no earlier than the partition holding `start`. An aware `now` (a zoneinfo.ZoneInfo) puts day
and longer periods on that zone's calendar, daylight saving included; hours are always UTC.
A naive `now` is read as UTC; `time_zone` (an IANA name) overrides the zone.)")
      .def_property_readonly("start",
                             [](const TimePartitionWindow& w) {
                               return from_time_point(w.start(), shape_of(w.granularity()));
                             })
      .def_property_readonly("end",
                             [](const TimePartitionWindow& w) {
                               return from_time_point(w.end(), shape_of(w.granularity()));
                             })
      .def_property_readonly("granularity", &TimePartitionWindow::granularity)
      .def_property_readonly(
          "bounds",
          [](const TimePartitionWindow& w) { return bounds_of(w.bounds(), w.granularity()); })
      .def_property_readonly("first", &TimePartitionWindow::first)
      .def_property_readonly("last", &TimePartitionWindow::last)
      .def(
          "__iter__",
          [](const TimePartitionWindow& w) {
            return py::make_iterator<py::return_value_policy::move>(w.partitions().begin(),
                                                                    w.partitions().end());
          },
          py::keep_alive<0, 1>())
      .def("__repr__",
           [](const TimePartitionWindow& w) {
             return "TimePartitionWindow.parse('" + w.to_string() + "')";
           })
      .def(py::pickle([](const TimePartitionWindow& w) { return w.to_string(); },
                      [](const std::string& text) { return TimePartitionWindow::parse(text); }));
}

}  // namespace

void bind_time_kind(py::module_& m) {
  bind_time_partition(m);
  bind_time_window(m);
}

}  // namespace interloper::python
