// TimeGranularity: the calendar arithmetic of time partitions, on datetime.date and
// datetime.datetime.
#include <pybind11/stl.h>

#include <cctype>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "interloper/time.hpp"

namespace interloper::python {

namespace {

using G = TimeGranularity;

py::object answer(const G& g, TimePoint t, py::handle like) {
  return from_time_point(t, shape_of(like, g));
}

py::tuple bounds_tuple(Bounds b, TimeShape shape) {
  return py::make_tuple(from_time_point(b.start, shape), from_time_point(b.end, shape));
}

std::string repr(const G& g) {
  std::string name(g.name());
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "TimeGranularity." + name;
}

const char* const kDoc =
    R"(The length of a time partition, and all calendar arithmetic on such periods.

The six granularities are HOUR, DAY, WEEK (ISO weeks, starting on Monday), MONTH, QUARTER
and YEAR. Each names its periods by an ISO-8601 key that sorts chronologically as a string
and whose shape tells the granularity apart:

    2026 (YEAR)   2026-Q2 (QUARTER)   2026-05 (MONTH)   2026-W21 (WEEK)
    2026-05-20 (DAY)   2026-05-20T13 (HOUR, a UTC label)

Methods take a datetime.date or a datetime.datetime. An aware datetime stands for its UTC
label. Answers keep the argument's type: a date gives dates (datetimes for HOUR), a naive
datetime naive datetimes, an aware datetime aware datetimes in UTC.

    >>> g = TimeGranularity.MONTH
    >>> g.truncate(datetime.date(2026, 5, 20))
    datetime.date(2026, 5, 1)
    >>> g.format(datetime.date(2026, 5, 20))
    '2026-05'
)";

// format() and advance() are what loops call most: they are plain CPython methods (vectorcall,
// no overload dispatch), which halves what a call costs. Errors are raised as the bound methods
// raise them.
PyObject* raise_current() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (py::builtin_exception& e) {
    e.set_error();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  }
  return nullptr;
}

PyObject* fast_format(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs != 1) throw py::type_error("format() takes one argument (t)");
    const G& g = py::handle(self).cast<const G&>();
    return py::str(g.format(to_time_point(args[0], "format(): argument 't'"))).release().ptr();
  } catch (...) {
    return raise_current();
  }
}

PyObject* fast_advance(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs != 2) throw py::type_error("advance() takes two arguments (t, n)");
    const G& g = py::handle(self).cast<const G&>();
    const long long n = PyLong_AsLongLong(args[1]);
    if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
    py::handle t(args[0]);
    return answer(g, g.advance(to_time_point(t, "advance(): argument 't'"), n), t).release().ptr();
  } catch (...) {
    return raise_current();
  }
}

PyMethodDef fast_methods[] = {
    {"format", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_format)),
     METH_FASTCALL,
     "format($self, t, /)\n--\n\nThe key of the period holding t: '2026-05', '2026-W21', ..."},
    {"advance", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_advance)),
     METH_FASTCALL,
     "advance($self, t, n, /)\n--\n\nThe start of the period n periods after (n < 0: before) "
     "the one holding t."},
};

void bind_fast_methods(py::class_<G>& cls) {
  for (PyMethodDef& def : fast_methods) {
    PyObject* descriptor = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &def);
    if (descriptor == nullptr) throw py::error_already_set();
    cls.attr(def.ml_name) = py::reinterpret_steal<py::object>(descriptor);
  }
}

// The arithmetic: every method taking and giving dates and datetimes.
void bind_arithmetic(py::class_<G>& cls) {
  cls.def(
         "truncate",
         [](const G& g, py::handle t) {
           return answer(g, g.truncate(to_time_point(t, "truncate(): argument 't'")), t);
         },
         py::arg("t"), "The start of the period holding t.")
      .def(
          "advance",
          [](const G& g, py::handle t, std::int64_t n) {
            return answer(g, g.advance(to_time_point(t, "advance(): argument 't'"), n), t);
          },
          py::arg("t"), py::arg("n"),
          "The start of the period n periods after (n < 0: before) the one holding t.")
      .def(
          "bounds",
          [](const G& g, py::handle t) {
            return bounds_tuple(g.bounds(to_time_point(t, "bounds(): argument 't'")),
                                shape_of(t, g));
          },
          py::arg("t"), "(start, end) of the period holding t, half-open: end starts the next.")
      .def(
          "periods_between",
          [](const G& g, py::handle a, py::handle b) {
            return g.periods_between(to_time_point(a, "periods_between(): argument 'a'"),
                                     to_time_point(b, "periods_between(): argument 'b'"));
          },
          py::arg("a"), py::arg("b"),
          "Whole periods from the period of a to the period of b; negative when b is earlier.")
      .def(
          "period_range",
          [](const G& g, py::handle a, py::handle b) {
            const TimeShape shape = shape_of(a, g);
            py::list starts;
            for (TimePoint t : g.period_range(to_time_point(a, "period_range(): argument 'a'"),
                                              to_time_point(b, "period_range(): argument 'b'"))) {
              starts.append(from_time_point(t, shape));
            }
            return starts;
          },
          py::arg("a"), py::arg("b"),
          "The period starts from a's period to b's, inclusive, oldest first; empty when b is "
          "earlier.")
      .def(
          "format",
          [](const G& g, py::handle t) {
            return g.format(to_time_point(t, "format(): argument 't'"));
          },
          py::arg("t"), "The key of the period holding t: '2026-05', '2026-W21', ...")
      .def(
          "parse",
          [](const G& g, std::string_view key) {
            return from_time_point(g.parse(key), shape_of(g));
          },
          py::arg("key"),
          "The start of the period named by key, which must have exactly this granularity's "
          "shape; ValueError naming the key otherwise (another shape, an impossible date).");
}

}  // namespace

void bind_time(py::module_& m) {
  py::class_<G> cls(m, "TimeGranularity", kDoc);
  bind_arithmetic(cls);
  bind_fast_methods(cls);
  cls.def_property_readonly(
         "name", [](const G& g) { return std::string(g.name()); },
         "'hour', 'day', 'week', 'month', 'quarter' or 'year'.")
      .def_static("from_name", &G::from_name, py::arg("name"),
                  "The granularity called `name` ('month'); ValueError for another name.")
      .def_static("infer", &G::infer, py::arg("key"),
                  "The granularity whose key shape `key` has ('2026-W21' -> WEEK), or None.")
      .def("__eq__",
           [](const G& a, py::handle b) { return py::isinstance<G>(b) && a == b.cast<const G&>(); })
      .def("__hash__", [](const G& g) { return static_cast<int>(g.unit()); })
      .def("__repr__", &repr)
      .def("__str__", [](const G& g) { return std::string(g.name()); })
      .def(py::pickle([](const G& g) { return std::string(g.name()); },
                      [](const std::string& name) { return G::from_name(name); }));
  cls.attr("HOUR") = G::HOUR;
  cls.attr("DAY") = G::DAY;
  cls.attr("WEEK") = G::WEEK;
  cls.attr("MONTH") = G::MONTH;
  cls.attr("QUARTER") = G::QUARTER;
  cls.attr("YEAR") = G::YEAR;
}

}  // namespace interloper::python
