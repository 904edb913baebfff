// interloper._core: the library's public API for Python. The package interloper re-exports it
// and adds what is naturally Python (the decorators).
#include "bindings.hpp"

namespace interloper::python {

py::object json_to_python(std::string_view text) {
  // Kept for the process's life: never destroyed after the interpreter is gone.
  static auto* loads = new py::object(py::module_::import("json").attr("loads"));
  return (*loads)(py::str(text.data(), text.size()));
}

std::string python_to_json(py::handle object) {
  static auto* dumps = new py::object(py::module_::import("json").attr("dumps"));
  return (*dumps)(object, py::arg("separators") = py::make_tuple(",", ":")).cast<std::string>();
}

}  // namespace interloper::python

PYBIND11_MODULE(_core, m) {
  using namespace interloper::python;
  m.doc() = "The interloper engine: partitions, windows, assets, DAGs and runs.";
  bind_errors(m);
  bind_time(m);
  bind_partitioning(m);
  bind_assets(m);
  bind_runs(m);
}
