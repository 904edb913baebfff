// The list kind and the partitionings (PartitionConfig and its two shipped kinds).
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "interloper/partitioning.hpp"

namespace interloper::python {

namespace {

const char* const kConfigDoc =
    R"(How an asset is partitioned: the kind, the column carrying the partition
value in the rows, and whether one run may cover several partitions (allow_window).

Every partitioning answers the same questions: check(window) validates a run's window
(PartitionError when it cannot serve it), partition(key) parses a stored key, window(start_key,
end_key) builds a window, compatible(other) says whether both ends of a DAG edge accept the same
windows, and to_definition() gives the catalog entry, which from_definition() rebuilds exactly.)";

const char* const kTimeConfigDoc = R"(Partitions by periods of a TimeGranularity (DAY by default).

    TimePartitionConfig(column="date", granularity=TimeGranularity.MONTH, allow_window=True)

`start` (a date or datetime) is the earliest data: windows reaching before the partition
holding it are refused.)";

const char* const kListConfigDoc =
    R"(Partitions by a declared list of values (regions, markets, tenants).

The values are the keys, in the declared order; a window is a contiguous range of that order:
config.window("eu", "us"). Duplicates, empty values or an empty list raise PartitionError.)";

void bind_list_kind(py::module_& m) {
  py::class_<ListPartition, Partition>(m, "ListPartition",
                                       "One declared value of a list partitioning.")
      .def(py::init<std::string>(), py::arg("value"))
      .def_property_readonly("value", &ListPartition::value)
      .def("__repr__", [](const ListPartition& p) {
        return "ListPartition(" + py::repr(py::str(p.value())).cast<std::string>() + ")";
      });
  py::class_<ListPartitionWindow, PartitionWindow>(
      m, "ListPartitionWindow",
      "A contiguous range of a declared list of values, in declared order.")
      .def_property_readonly("values", &ListPartitionWindow::values)
      .def_property_readonly("first", &ListPartitionWindow::first)
      .def_property_readonly("last", &ListPartitionWindow::last);
}

void check(const PartitionConfig& config, py::handle window) {
  config.check(*window_argument(window, "check(): argument 'window'"));
}

py::object to_definition(const PartitionConfig& config) {
  return json_to_python(config.to_definition());
}

std::unique_ptr<PartitionConfig> from_definition(py::handle definition) {
  if (py::isinstance<py::str>(definition)) {
    return PartitionConfig::from_definition(definition.cast<std::string>());
  }
  if (!py::isinstance<py::dict>(definition)) {
    throw py::type_error("from_definition(): argument 'definition' must be a dict or a JSON str");
  }
  return PartitionConfig::from_definition(python_to_json(definition));
}

std::string repr(const PartitionConfig& config) {
  return "PartitionConfig.from_definition(" + config.to_definition() + ")";
}

void bind_base_config(py::module_& m) {
  py::class_<PartitionConfig>(m, "PartitionConfig", kConfigDoc)
      .def_property_readonly("kind", [](const PartitionConfig& c) { return std::string(c.kind()); })
      .def_property_readonly("column", &PartitionConfig::column)
      .def_property_readonly("allow_window", &PartitionConfig::allow_window)
      .def("check", &check, py::arg("window"),
           "Validates a run's window (a partition is the window of one); raises PartitionError "
           "when this partitioning cannot serve it.")
      .def("partition", &PartitionConfig::partition, py::arg("key"),
           "The partition a stored key names.")
      .def("window", &PartitionConfig::window, py::arg("start_key"), py::arg("end_key"),
           "The window from start_key to end_key, both inclusive.")
      .def("parse_window", &PartitionConfig::parse_window, py::arg("text"),
           "A window from 'start..end' or a bare key.")
      .def(
          "read_window",
          [](const PartitionConfig& c, const std::string& text) { return c.read_window(text); },
          py::arg("text"),
          "The window a text names, read the way this partitioning reads it: a time "
          "partitioning reads a time window of any granularity ('2026' is the year), a list its "
          "own values ('2026' is the value). The CLI reads --window the same way.")
      .def(
          "select_window",
          [](const PartitionConfig& c, const std::string& text) { return c.select_window(text); },
          py::arg("text"),
          "This partitioning's own partitions a window text selects: a day names its month to "
          "a monthly partitioning. PartitionError or ValueError naming the text.")
      .def("compatible", &PartitionConfig::compatible, py::arg("other"),
           "Whether both ends of a DAG edge accept the same windows.")
      .def("to_definition", &to_definition, "The catalog entry, as a dict.")
      .def_static("from_definition", &from_definition, py::arg("definition"),
                  "Rebuilds a partitioning of any registered kind from to_definition() (a dict or "
                  "its JSON text); PartitionError naming an unknown kind or what is malformed.")
      .def("__eq__",
           [](const PartitionConfig& a, py::handle b) {
             return py::isinstance<PartitionConfig>(b) &&
                    a.to_definition() == b.cast<const PartitionConfig&>().to_definition();
           })
      .def("__hash__",
           [](const PartitionConfig& c) { return py::hash(py::str(c.to_definition())); })
      .def("__repr__", &repr)
      .def(py::pickle([](const PartitionConfig& c) { return c.to_definition(); },
                      [](const std::string& d) { return PartitionConfig::from_definition(d); }));
}

}  // namespace

void bind_configs(py::module_& m) {
  bind_list_kind(m);
  bind_base_config(m);
  py::class_<TimePartitionConfig, PartitionConfig>(m, "TimePartitionConfig", kTimeConfigDoc)
      .def(py::init([](std::string column, TimeGranularity granularity, bool allow_window,
                       py::handle start) {
             TimePartitionOptions options{.granularity = granularity, .allow_window = allow_window};
             if (!start.is_none())
               options.start = to_time_point(start, "TimePartitionConfig(): argument 'start'");
             return TimePartitionConfig(std::move(column), options);
           }),
           py::arg("column"), py::arg("granularity") = TimeGranularity::DAY,
           py::arg("allow_window") = false, py::arg("start") = py::none())
      .def_property_readonly("granularity", &TimePartitionConfig::granularity)
      .def_property_readonly("start", [](const TimePartitionConfig& c) -> py::object {
        if (!c.start()) return py::none();
        return from_time_point(*c.start(), shape_of(c.granularity()));
      });
  py::class_<ListPartitionConfig, PartitionConfig>(m, "ListPartitionConfig", kListConfigDoc)
      .def(py::init<std::string, std::vector<std::string>, bool>(), py::arg("column"),
           py::arg("values"), py::arg("allow_window") = false)
      .def_property_readonly("values", &ListPartitionConfig::values)
      .def("index_of", &ListPartitionConfig::index_of, py::arg("key"),
           "The position of `key` in the declared values; PartitionError for an unknown key.");
}

}  // namespace interloper::python
