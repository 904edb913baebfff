// The pieces of the extension module interloper._core, one function per part of the API.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string_view>

#include "interloper/asset.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/pipeline.hpp"

namespace interloper::python {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_time(py::module_& m);
void bind_partitioning(py::module_& m);
void bind_assets(py::module_& m);
void bind_runs(py::module_& m);

// A run's window from a Python argument: a window of any kind, or a partition as the window of
// one. Raises TypeError naming `argument` for anything else.
std::unique_ptr<PartitionWindow> window_argument(py::handle object, std::string_view argument);

// A logger that hands assets' lines to Python's logging, as logger "interloper" with the
// asset's name in the record (takes the GIL; callable from any thread).
Logger python_logger();

// The PythonResolver that asks `resolve(asset, module, function, directory, deps)` (a Python
// callable, called with the GIL) for a `python:` asset's (function, asset or None, pass_self,
// inputs), and runs that function as @asset functions run. A Python exception becomes a
// PipelineError "TypeName: message".
PythonResolver python_resolver_of(py::object resolve);

// A JSON text as Python objects (json.loads) and back (json.dumps, compact).
py::object json_to_python(std::string_view text);
std::string python_to_json(py::handle object);

}  // namespace interloper::python
