// Partitions, windows and partitionings: the kinds the library ships (time, list) and the
// common contract every registered kind answers.
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "interloper/mapping.hpp"
#include "interloper/partitioning.hpp"

namespace interloper::python {

namespace {

// ---- Helpers shared by every kind ----------------------------------------------------------

// The rows of `rows` (an iterable of dicts) whose `column` the filter selects, as given.
py::list slice_rows(const Filter& filter, py::iterable rows, const std::string& column) {
  py::list kept;
  py::str key(column);
  for (py::handle row : rows) {
    if (!PyDict_Check(row.ptr())) {
      throw py::type_error("slice(): rows must be dicts, not " +
                           py::str(py::type::of(row).attr("__qualname__")).cast<std::string>());
    }
    PyObject* cell = PyDict_GetItemWithError(row.ptr(), key.ptr());
    if (cell == nullptr) {
      if (PyErr_Occurred()) throw py::error_already_set();
      continue;
    }
    py::handle value(cell);
    if (value.is_none()) continue;
    const bool inside =
        py::isinstance<py::str>(value)
            ? filter.matches(value.cast<std::string>())
            : filter.matches(to_time_point(value, "slice(): the " + column + " of a row"));
    if (inside) kept.append(row);
  }
  return kept;
}

std::string quoted(const std::string& text) { return py::repr(py::str(text)).cast<std::string>(); }

// Every partition of a window, in order, as Python objects.
py::iterator iterate(const PartitionWindow& w) {
  py::list partitions;
  for (std::size_t i = 0; i < w.size(); ++i) partitions.append(py::cast(w.partition_at(i)));
  return py::iter(partitions);
}

// ---- The common contract ---------------------------------------------------------------------

void bind_filter(py::module_& m) {
  py::class_<Filter> cls(m, "Filter",
                         "A row predicate on one column as a database selects it: a half-open "
                         "time range or membership in a set of values.");
  cls.def_property_readonly("column", &Filter::column)
      .def_property_readonly(
          "kind",
          [](const Filter& f) { return f.kind() == Filter::Kind::range ? "range" : "membership"; })
      .def_property_readonly(
          "start", [](const Filter& f) { return from_time_point(f.start(), TimeShape::naive); })
      .def_property_readonly(
          "end", [](const Filter& f) { return from_time_point(f.end(), TimeShape::naive); })
      .def_property_readonly("values", &Filter::values)
      .def(
          "to_sql",
          [](const Filter& f, std::string_view placeholder) {
            const Filter::Placeholder style =
                placeholder == "$" ? Filter::Placeholder::dollar : Filter::Placeholder::question;
            Filter::Sql sql = f.to_sql(style);
            py::list params;
            for (const auto& p : sql.params) {
              if (const auto* t = std::get_if<TimePoint>(&p)) {
                params.append(from_time_point(*t, TimeShape::naive));
              } else {
                params.append(py::str(std::get<std::string>(p)));
              }
            }
            return py::make_tuple(sql.text, params);
          },
          py::arg("placeholder") = "?",
          "(sql, params): the predicate with `?` (or `$1, $2`) placeholders and the values to "
          "bind to them; values never appear in the text.")
      .def("__str__", &Filter::to_string)
      .def("__repr__", [](const Filter& f) { return "<Filter " + f.to_string() + ">"; });
}

void bind_partition_base(py::module_& m) {
  py::class_<Partition>(m, "Partition",
                        "One partition of some kind: the unit a destination stores.")
      .def_property_readonly("key", &Partition::key, "How the partition is stored and printed.")
      .def_property_readonly("kind", [](const Partition& p) { return std::string(p.kind()); })
      .def_property_readonly("window", &Partition::as_window, "The window of just this partition.")
      .def("filter", &Partition::filter, py::arg("column"),
           "The partition's rows when `column` holds the partition value.")
      .def(
          "slice",
          [](const Partition& p, py::iterable rows, const std::string& column) {
            return slice_rows(p.filter(column), rows, column);
          },
          py::arg("rows"), py::arg("column"),
          "The rows (dicts) whose `column` lies in the partition.")
      .def("__str__", &Partition::key)
      .def("__repr__",
           [](const Partition& p) {
             return "<" + std::string(p.kind()) + " partition " + quoted(p.key()) + ">";
           })
      .def("__eq__",
           [](const Partition& a, py::handle b) {
             if (!py::isinstance<Partition>(b)) return false;
             const Partition& other = b.cast<const Partition&>();
             return a.kind() == other.kind() && a.key() == other.key();
           })
      .def("__hash__", [](const Partition& p) { return py::hash(py::str(p.key())); });
}

void bind_window_base(py::module_& m) {
  py::class_<PartitionWindow>(m, "PartitionWindow",
                              "A contiguous run of partitions of one kind, in order.")
      .def("__len__", &PartitionWindow::size)
      .def("__iter__", &iterate)
      .def("__getitem__",
           [](const PartitionWindow& w, std::ptrdiff_t i) {
             if (i < 0) i += static_cast<std::ptrdiff_t>(w.size());
             if (i < 0) throw py::index_error("window index out of range");
             return w.partition_at(static_cast<std::size_t>(i));
           })
      .def("__contains__",
           [](const PartitionWindow& w, const Partition& p) { return w.contains(p); })
      .def("keys", &PartitionWindow::keys, "The keys of every partition, in order.")
      .def_property_readonly("kind", [](const PartitionWindow& w) { return std::string(w.kind()); })
      .def("filter", &PartitionWindow::filter, py::arg("column"), "The rows of the whole window.")
      .def(
          "slice",
          [](const PartitionWindow& w, py::iterable rows, const std::string& column) {
            return slice_rows(w.filter(column), rows, column);
          },
          py::arg("rows"), py::arg("column"), "The rows (dicts) whose `column` lies in the window.")
      .def("__str__", &PartitionWindow::to_string)
      .def("__repr__",
           [](const PartitionWindow& w) {
             return "<" + std::string(w.kind()) + " window " + quoted(w.to_string()) + ">";
           })
      .def("__eq__",
           [](const PartitionWindow& a, py::handle b) {
             if (!py::isinstance<PartitionWindow>(b)) return false;
             const PartitionWindow& other = b.cast<const PartitionWindow&>();
             return a.kind() == other.kind() && a.keys() == other.keys();
           })
      .def("__hash__", [](const PartitionWindow& w) { return py::hash(py::str(w.to_string())); });
}

}  // namespace

std::unique_ptr<PartitionWindow> window_argument(py::handle object, std::string_view argument) {
  if (py::isinstance<PartitionWindow>(object)) return object.cast<const PartitionWindow&>().clone();
  if (py::isinstance<Partition>(object)) return object.cast<const Partition&>().as_window();
  throw py::type_error(std::string(argument) + " must be a partition or a window, not " +
                       py::str(py::type::of(object).attr("__qualname__")).cast<std::string>());
}

void bind_time_kind(py::module_& m);
void bind_configs(py::module_& m);

// What a dependency reads of its upstream (il.Dep builds one).
void bind_dep_mapping(py::module_& m) {
  py::class_<DepMapping>(m, "DepMapping",
                         "What one dependency reads of its upstream: the overlapping "
                         "partitions (the default), an offset, a window, or all.")
      .def(py::init<>())
      .def_static("offset", &DepMapping::offset, py::arg("k"),
                  "The partition k upstream periods away: -1 is the one before.")
      .def_static("window", &DepMapping::window, py::arg("first"), py::arg("last"),
                  "The overlap with its ends moved by first and last periods (-6, 0: the "
                  "partition and the six before). ValueError when last < first.")
      .def_static("parse_window", &DepMapping::parse_window, py::arg("text"),
                  "A window text, '-6..0', or one number. ValueError naming a bad text.")
      .def_static("all", &DepMapping::all, "Every partition of the upstream.")
      .def_property_readonly("first", &DepMapping::first)
      .def_property_readonly("last", &DepMapping::last)
      .def("__str__", &DepMapping::to_string)
      .def("__repr__",
           [](const DepMapping& d) { return "<DepMapping " + d.to_string() + ">"; })
      .def("__eq__", [](const DepMapping& a, const DepMapping& b) { return a == b; });
}

void bind_partitioning(py::module_& m) {
  bind_filter(m);
  bind_partition_base(m);
  bind_window_base(m);
  bind_time_kind(m);
  bind_configs(m);
  bind_dep_mapping(m);
}

}  // namespace interloper::python
