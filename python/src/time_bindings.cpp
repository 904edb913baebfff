// TimeGranularity: the calendar arithmetic of time partitions, on datetime.date and
// datetime.datetime.
#include <pybind11/stl.h>

#include <cctype>
#include <cstring>
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

// The methods loops call most (truncate, advance, bounds, format, parse) are plain CPython
// methods (vectorcall, no overload dispatch, no generic casters): the granularity is read from
// its instance directly and dates and datetimes go through the datetime C API (convert.cpp).
// Errors are raised as the bound methods raise them.
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

// The granularity `self` holds. The method descriptor has checked that self is one.
const G& granularity_of(PyObject* self) {
  auto* instance = reinterpret_cast<py::detail::instance*>(self);
  if (instance->simple_layout) return *static_cast<const G*>(instance->simple_value_holder[0]);
  return py::handle(self).cast<const G&>();
}

// The one argument of `method`, called `name`, given by position or by keyword.
PyObject* one_argument(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                       const char* method, const char* name) {
  const Py_ssize_t keywords = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs + keywords != 1) {
    throw py::type_error(std::string(method) + "() takes one argument (" + name + ")");
  }
  if (keywords == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), name) != 0) {
    throw py::type_error(std::string(method) + "() got an unexpected keyword argument '" +
                         py::str(PyTuple_GET_ITEM(kwnames, 0)).cast<std::string>() + "'");
  }
  return args[0];
}

// An ASCII key as a str, copied once.
PyObject* ascii_str(const std::string& text) {
  PyObject* out = PyUnicode_New(static_cast<Py_ssize_t>(text.size()), 127);
  if (out == nullptr) throw py::error_already_set();
  std::memcpy(PyUnicode_1BYTE_DATA(out), text.data(), text.size());
  return out;
}

PyObject* fast_format(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs != 1) throw py::type_error("format() takes one argument (t)");
    return ascii_str(granularity_of(self).format(to_time_point(args[0], "format(): argument 't'")));
  } catch (...) {
    return raise_current();
  }
}

PyObject* fast_advance(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs != 2) throw py::type_error("advance() takes two arguments (t, n)");
    const G& g = granularity_of(self);
    if (!PyLong_Check(args[1]) && !PyIndex_Check(args[1])) {
      throw py::type_error("advance(): argument 'n' must be an int, not " +
                           std::string(Py_TYPE(args[1])->tp_name));
    }
    const long long n = PyLong_AsLongLong(args[1]);
    if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
    py::handle t(args[0]);
    return answer(g, g.advance(to_time_point(t, "advance(): argument 't'"), n), t).release().ptr();
  } catch (...) {
    return raise_current();
  }
}

PyObject* fast_truncate(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  try {
    py::handle t(one_argument(args, PyVectorcall_NARGS(nargsf), kwnames, "truncate", "t"));
    const G& g = granularity_of(self);
    return answer(g, g.truncate(to_time_point(t, "truncate(): argument 't'")), t).release().ptr();
  } catch (...) {
    return raise_current();
  }
}

PyObject* fast_bounds(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  try {
    py::handle t(one_argument(args, PyVectorcall_NARGS(nargsf), kwnames, "bounds", "t"));
    const G& g = granularity_of(self);
    return bounds_tuple(g.bounds(to_time_point(t, "bounds(): argument 't'")), shape_of(t, g))
        .release()
        .ptr();
  } catch (...) {
    return raise_current();
  }
}

PyObject* fast_parse(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  try {
    PyObject* key = one_argument(args, PyVectorcall_NARGS(nargsf), kwnames, "parse", "key");
    if (!PyUnicode_Check(key)) {
      throw py::type_error("parse(): argument 'key' must be a str, not " +
                           std::string(Py_TYPE(key)->tp_name));
    }
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(key, &size);
    if (text == nullptr) throw py::error_already_set();
    const G& g = granularity_of(self);
    return from_time_point(g.parse(std::string_view(text, static_cast<std::size_t>(size))),
                           shape_of(g))
        .release()
        .ptr();
  } catch (...) {
    return raise_current();
  }
}

template <typename F>
PyCFunction as_method(F* f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef fast_methods[] = {
    {"truncate", as_method(&fast_truncate), METH_FASTCALL | METH_KEYWORDS,
     "truncate($self, /, t)\n--\n\nThe start of the period holding t."},
    {"advance", as_method(&fast_advance), METH_FASTCALL,
     "advance($self, t, n, /)\n--\n\nThe start of the period n periods after (n < 0: before) "
     "the one holding t."},
    {"bounds", as_method(&fast_bounds), METH_FASTCALL | METH_KEYWORDS,
     "bounds($self, /, t)\n--\n\n(start, end) of the period holding t, half-open: end starts "
     "the next."},
    {"format", as_method(&fast_format), METH_FASTCALL,
     "format($self, t, /)\n--\n\nThe key of the period holding t: '2026-05', '2026-W21', ..."},
    {"parse", as_method(&fast_parse), METH_FASTCALL | METH_KEYWORDS,
     "parse($self, /, key)\n--\n\nThe start of the period named by key, which must have exactly "
     "this granularity's shape; ValueError naming the key otherwise (another shape, an "
     "impossible date)."},
};

void bind_fast_methods(py::class_<G>& cls) {
  for (PyMethodDef& def : fast_methods) {
    PyObject* descriptor = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &def);
    if (descriptor == nullptr) throw py::error_already_set();
    cls.attr(def.ml_name) = py::reinterpret_steal<py::object>(descriptor);
  }
}

// The rest of the arithmetic: pybind11 methods.
void bind_arithmetic(py::class_<G>& cls) {
  cls.def(
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
          "earlier.");
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
