// The library's exceptions as Python exceptions. PartitionError and DataError are also
// ValueErrors, so code written against the standard exceptions catches them.
#include <string>

#include "bindings.hpp"
#include "interloper/error.hpp"

namespace interloper::python {

namespace {

PyObject* make_exception(py::module_& m, const char* name, const char* doc, py::tuple bases) {
  const std::string qualified = std::string("interloper.") + name;
  PyObject* type = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(type));
  return type;
}

// The asset a message is about, when it starts "asset 'NAME': " as the library writes them.
py::object asset_named(const std::string& message) {
  static const std::string prefix = "asset '";
  if (message.rfind(prefix, 0) != 0) return py::none();
  const std::size_t end = message.find("': ", prefix.size());
  if (end == std::string::npos) return py::none();
  return py::str(message.substr(prefix.size(), end - prefix.size()));
}

// The exception types, made once by bind_errors (translators are plain function pointers).
struct Types {
  PyObject* base = nullptr;
  PyObject* partition = nullptr;
  PyObject* data = nullptr;
  PyObject* destination = nullptr;
  PyObject* dag = nullptr;
  PyObject* run = nullptr;
  PyObject* pipeline = nullptr;
};
Types types;

void raise(PyObject* type, const std::string& message, py::object asset,
           py::object dependency = py::none()) {
  py::object error = py::reinterpret_borrow<py::object>(type)(message);
  error.attr("asset") = std::move(asset);
  error.attr("dependency") = std::move(dependency);
  PyErr_SetObject(type, error.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  py::handle value_error(PyExc_ValueError);
  types.base = make_exception(m, "Error", "Base of every error interloper raises.",
                              py::make_tuple(py::handle(PyExc_Exception)));
  py::handle error(types.base);
  types.partition = make_exception(
      m, "PartitionError",
      "A window or partition a partitioning cannot serve, or a bad partitioning definition.\n"
      "`asset` names the asset the message starts with, or is None.",
      py::make_tuple(error, value_error));
  types.data =
      make_exception(m, "DataError", "Rows that cannot be decoded, typed or placed in a partition.",
                     py::make_tuple(error, value_error));
  types.destination =
      make_exception(m, "DestinationError", "A destination that failed to read, write or count.",
                     py::make_tuple(error));
  types.dag = make_exception(
      m, "DagError",
      "A DAG that cannot be built: a cycle, an unknown dependency, an incompatible edge.\n"
      "`asset` and `dependency` say which declaration is at fault ('' when none).",
      py::make_tuple(error));
  types.run =
      make_exception(m, "RunError", "A run that failed or could not start.", py::make_tuple(error));
  types.pipeline = make_exception(
      m, "PipelineError", "A pipeline that cannot be loaded or executed.", py::make_tuple(error));
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const PartitionError& e) {
      raise(types.partition, e.what(), asset_named(e.what()));
    } catch (const DataError& e) {
      raise(types.data, e.what(), asset_named(e.what()));
    } catch (const DagError& e) {
      raise(types.dag, e.what(), py::str(e.asset()), py::str(e.dependency()));
    } catch (const DestinationError& e) {
      raise(types.destination, e.what(), asset_named(e.what()));
    } catch (const RunError& e) {
      raise(types.run, e.what(), asset_named(e.what()));
    } catch (const PipelineError& e) {
      raise(types.pipeline, e.what(), asset_named(e.what()));
    } catch (const Error& e) {
      raise(types.base, e.what(), asset_named(e.what()));
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
}

}  // namespace interloper::python
