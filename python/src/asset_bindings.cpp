// Python functions as assets: the compute callable that calls them, and the context they see.
//
// The engine calls an asset's compute callable without the GIL (from the runner's threads); the
// callable takes the GIL only while Python runs (the function, and turning its rows into
// tables), and gives it back while the engine writes a batch or reads an upstream.
#include <pybind11/stl.h>

#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "interloper/asset.hpp"
#include "interloper/destination.hpp"

namespace interloper::python {

namespace {

// Rows a Python asset hands on at once: the batch the engine's writer receives.
constexpr std::size_t kBatchRows = 8192;

// What the compute callable needs of the Python side. Its Python references may be dropped from
// any thread (an engine asset copy dies where it dies), so the destructor takes the GIL.
struct PythonFunction {
  py::object function;
  py::object asset;                 // the Python Asset, passed as `self` and context.asset
  bool pass_self = false;           // the function's first parameter is `self`
  std::vector<std::string> inputs;  // parameters that receive an upstream's rows
  std::string name;

  ~PythonFunction() {
    if (!Py_IsInitialized()) {
      (void)function.release();
      (void)asset.release();
      return;
    }
    py::gil_scoped_acquire gil;
    function = py::object();
    asset = py::object();
  }
};

// The ExecutionContext Python sees: valid while the asset's function runs.
struct ContextHandle {
  ExecutionContext* context = nullptr;
  py::object asset;
  ExecutionContext& get() const {
    if (context == nullptr) {
      throw RunError("the execution context is used after its asset returned");
    }
    return *context;
  }
};

py::list load_rows(const ExecutionContext& context, const std::string& upstream) {
  Table rows;
  {
    py::gil_scoped_release release;
    rows = context.load(upstream);
  }
  return to_rows(rows);
}

// The rows a function returned (None, an iterable of dicts, or a pandas DataFrame), handed on
// in batches as they come, so a generator is never held whole. The last batch is returned.
Table collect_rows(py::object result, ExecutionContext& context) {
  if (result.is_none()) return Table();
  const bool plain = PyList_CheckExact(result.ptr()) || PyTuple_CheckExact(result.ptr()) ||
                     PyGen_Check(result.ptr());
  if (!plain && py::hasattr(result, "to_dict") && py::hasattr(result, "columns")) {
    result = result.attr("to_dict")("records");  // a DataFrame
  }
  if (PyDict_Check(result.ptr()) || !py::isinstance<py::iterable>(result)) {
    throw py::type_error("returned a " +
                         py::str(py::type::of(result).attr("__qualname__")).cast<std::string>() +
                         ", not rows (a list or iterable of dicts)");
  }
  Table batch;
  RowAppender appender(batch);
  std::size_t row = 0;
  for (py::handle item : result) {
    appender.append(item, ++row);
    if (batch.num_rows() < kBatchRows) continue;
    Table full = std::move(batch);
    batch = Table();
    appender.reset();
    py::gil_scoped_release release;
    context.emit(full);
  }
  return batch;
}

// "ValueError: no data (shop.py, line 12, in orders)": the exception and the deepest line of
// the asset's own function in its traceback (else the traceback's deepest line).
std::string describe(py::error_already_set& error, const PythonFunction& function) {
  std::string text = py::str(error.type().attr("__name__")).cast<std::string>();
  const std::string message = py::str(error.value()).cast<std::string>();
  if (!message.empty()) text += ": " + message;
  py::object own = py::getattr(function.function, "__code__", py::none());
  std::string deepest;
  std::string deepest_own;
  for (py::object tb = error.trace(); tb && !tb.is_none(); tb = tb.attr("tb_next")) {
    py::object code = tb.attr("tb_frame").attr("f_code");
    const std::string where = " (" + py::str(code.attr("co_filename")).cast<std::string>() +
                              ", line " + py::str(tb.attr("tb_lineno")).cast<std::string>() +
                              ", in " + py::str(code.attr("co_name")).cast<std::string>() + ")";
    deepest = where;
    if (code.is(own)) deepest_own = where;
  }
  return text + (deepest_own.empty() ? deepest : deepest_own);
}

Table call_function(const PythonFunction& function, ExecutionContext& context) {
  auto handle = std::make_shared<ContextHandle>();
  handle->context = &context;
  handle->asset = function.asset;
  struct Invalidate {
    ContextHandle& handle;
    ~Invalidate() { handle.context = nullptr; }
  } invalidate{*handle};
  py::object context_object = py::cast(handle);
  py::dict inputs;
  for (const std::string& input : function.inputs)
    inputs[py::str(input)] = load_rows(context, input);
  py::object result = function.pass_self
                          ? function.function(function.asset, context_object, **inputs)
                          : function.function(context_object, **inputs);
  return collect_rows(std::move(result), context);
}

ComputeFn compute_of(std::shared_ptr<PythonFunction> function) {
  return [function](ExecutionContext& context) -> Table {
    py::gil_scoped_acquire gil;
    try {
      return call_function(*function, context);
    } catch (py::error_already_set& error) {
      throw RunError(describe(error, *function));
    } catch (py::builtin_exception& error) {  // raised by the conversion of the rows
      error.set_error();
      py::error_already_set raised;
      throw RunError(describe(raised, *function));
    }
  };
}

// ---- Settings ---------------------------------------------------------------------------------

// A column's declared type: a type name as YAML spells it ('int', 'decimal(38,2)', 'json'), or
// the Python type its cells have.
Field field_named(py::handle type, const std::string& column) {
  if (py::isinstance<py::str>(type)) return field_of_type(column, type.cast<std::string>());
  py::module_ datetime = py::module_::import("datetime");
  auto is = [&](py::handle t) { return type.is(t); };
  if (is(py::type::of(py::bool_()))) return {column, DataType::boolean};
  if (is(py::type::of(py::int_()))) return {column, DataType::int64};
  if (is(py::type::of(py::float_()))) return {column, DataType::float64};
  if (is(py::type::of(py::str()))) return {column, DataType::string};
  if (is(datetime.attr("datetime"))) return {column, DataType::timestamp};
  if (is(datetime.attr("date"))) return {column, DataType::date};
  if (is(py::module_::import("decimal").attr("Decimal"))) return {column, DataType::decimal};
  if (is(py::type::of(py::list())) || is(py::type::of(py::dict()))) {
    return {column, DataType::json};
  }
  throw py::type_error("schema: the type of column '" + column +
                       "' must be a type name ('int', 'decimal(38,2)', 'json', ...) or one of "
                       "bool, int, float, str, datetime.date, datetime.datetime, "
                       "decimal.Decimal, list, dict, not " +
                       py::repr(type).cast<std::string>());
}

Schema schema_of(py::handle schema) {
  if (schema.is_none()) return Schema();
  if (!py::isinstance<py::dict>(schema)) {
    throw py::type_error("asset(): argument 'schema' must be a dict of column -> type");
  }
  std::vector<Field> fields;
  for (auto [column, type] : schema.cast<py::dict>()) {
    fields.push_back(field_named(type, py::str(column)));
  }
  return Schema(std::move(fields));
}

Asset make_asset(std::string name, py::object function, py::object asset, bool pass_self,
                 std::vector<std::string> inputs, const PartitionConfig* partitioning,
                 std::vector<std::string> deps, std::shared_ptr<Destination> destination,
                 py::handle schema, bool enabled, std::string version,
                 std::vector<std::pair<std::string, DepMapping>> mappings) {
  auto callable = std::make_shared<PythonFunction>();
  callable->function = std::move(function);
  callable->asset = std::move(asset);
  callable->pass_self = pass_self;
  callable->inputs = std::move(inputs);
  callable->name = name;
  Asset made(name, compute_of(callable));
  if (partitioning != nullptr) made.partitioning(*partitioning);
  made.deps(std::move(deps)).enabled(enabled).schema(schema_of(schema));
  for (auto& [upstream, mapping] : mappings) made.dep(std::move(upstream), mapping);
  if (destination) made.destination(std::move(destination));
  // The definition that makes stored partitions stale when it changes: where the code lives.
  py::object code = py::getattr(callable->function, "__code__", py::none());
  if (!code.is_none()) {
    made.definition("python: " + py::str(code.attr("co_filename")).cast<std::string>() + ":" +
                    py::str(callable->function.attr("__qualname__")).cast<std::string>());
  }
  if (!version.empty()) made.version(std::move(version));
  return made;
}

int python_level(LogLevel level) {
  switch (level) {
    case LogLevel::debug:
      return 10;
    case LogLevel::info:
      return 20;
    case LogLevel::warning:
      return 30;
    case LogLevel::error:
      return 40;
  }
  return 20;
}

void bind_context(py::module_& m) {
  // The engine serializes log lines under a lock of its own and its sink takes the GIL: a line
  // is handed on without the GIL, so a thread holding it never waits for that lock.
  using Release = py::call_guard<py::gil_scoped_release>;
  py::class_<Logger>(m, "Logger", "An asset's log lines, tagged with its name.")
      .def("debug", &Logger::debug, py::arg("message"), Release())
      .def("info", &Logger::info, py::arg("message"), Release())
      .def("warning", &Logger::warning, py::arg("message"), Release())
      .def("error", &Logger::error, py::arg("message"), Release());
  py::class_<ContextHandle, std::shared_ptr<ContextHandle>>(
      m, "ExecutionContext",
      "What an asset sees while it runs: its partition or window, a logger, and load() of an "
      "upstream's rows. Valid only while the asset's function runs.")
      .def_property_readonly("asset",
                             [](const ContextHandle& h) {
                               h.get();
                               return h.asset;
                             })
      .def_property_readonly("asset_name",
                             [](const ContextHandle& h) { return h.get().asset_name(); })
      .def_property_readonly("has_window",
                             [](const ContextHandle& h) { return h.get().has_window(); })
      .def_property_readonly(
          "window", [](const ContextHandle& h) { return h.get().window().clone(); },
          "The run's window (a single partition is a window of one).")
      .def_property_readonly(
          "partition", [](const ContextHandle& h) { return h.get().partition().clone(); },
          "The one partition; PartitionError when the window holds several.")
      .def_property_readonly(
          "partition_date",
          [](const ContextHandle& h) {
            return from_time_point(TimePoint(h.get().partition_date()), TimeShape::date);
          },
          "The day partition's date; PartitionError for other granularities.")
      .def_property_readonly("keys", [](const ContextHandle& h) { return h.get().keys(); })
      .def_property_readonly("logger", [](const ContextHandle& h) { return h.get().logger(); })
      .def(
          "load",
          [](const ContextHandle& h, const std::string& upstream) {
            return load_rows(h.get(), upstream);
          },
          py::arg("upstream"),
          "The upstream's rows (dicts) for exactly the partitions this run reads; RunError when "
          "`upstream` is not a dependency.");
}

}  // namespace

Logger python_logger() {
  return Logger([](LogLevel level, std::string_view asset, std::string_view message) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    static auto* logger =
        new py::object(py::module_::import("logging").attr("getLogger")("interloper"));
    logger->attr("log")(
        python_level(level), "%s: %s", py::str(asset.data(), asset.size()),
        py::str(message.data(), message.size()),
        py::arg("extra") = py::dict(py::arg("asset") = py::str(asset.data(), asset.size())));
  });
}

PythonResolver python_resolver_of(py::object resolve) {
  // Dropped wherever the resolver is replaced: it takes the GIL like PythonFunction does.
  auto holder = std::make_shared<PythonFunction>();
  holder->function = std::move(resolve);
  return [holder](const PythonTarget& target) -> ComputeFn {
    py::gil_scoped_acquire gil;
    try {
      py::tuple made = holder->function(target.asset, target.module, target.function,
                                        target.directory, target.deps);
      auto callable = std::make_shared<PythonFunction>();
      callable->function = made[0];
      callable->asset = made[1];
      callable->pass_self = made[2].cast<bool>();
      callable->inputs = made[3].cast<std::vector<std::string>>();
      callable->name = target.asset;
      return compute_of(std::move(callable));
    } catch (py::error_already_set& error) {
      const std::string message = py::str(error.value()).cast<std::string>();
      throw PipelineError(py::str(error.type().attr("__name__")).cast<std::string>() +
                          (message.empty() ? "" : ": " + message));
    }
  };
}

void bind_engine_asset(py::module_& m);

void bind_assets(py::module_& m) {
  bind_context(m);
  bind_engine_asset(m);
  py::class_<Destination, std::shared_ptr<Destination>>(m, "Destination",
                                                        "Where assets' rows are stored.")
      .def_property_readonly("url", &Destination::url)
      .def("__repr__", [](const Destination& d) { return "<Destination " + d.url() + ">"; });
  m.def("open_destination",
        static_cast<std::shared_ptr<Destination> (*)(std::string_view)>(&open_destination),
        py::arg("url"),
        "A destination from its URL: sqlite:, file:, postgresql://, s3:// or memory://.");
}

void bind_engine_asset(py::module_& m) {
  py::class_<Asset>(m, "EngineAsset", "An asset as the engine runs it.")
      .def_property_readonly("name", [](const Asset& a) { return a.name(); })
      .def_property_readonly("source_name", [](const Asset& a) { return a.source_name(); })
      .def(
          "read",
          [](const Asset& asset, py::handle window) {
            const std::shared_ptr<Destination>& destination = asset.resolved_destination();
            if (!destination)
              throw DestinationError("asset '" + asset.name() + "' has no destination");
            std::unique_ptr<PartitionWindow> scope;
            if (!window.is_none()) scope = window_argument(window, "read(): argument 'window'");
            Table rows;
            {
              py::gil_scoped_release release;
              rows = destination->read(asset.dataset(), scope.get());
            }
            return to_rows(rows);
          },
          py::arg("window") = py::none(), "The rows stored for `window` (every row when None).")
      .def(
          "run",
          [](const Asset& asset, py::handle window) {
            std::unique_ptr<PartitionWindow> scope;
            if (!window.is_none()) scope = window_argument(window, "run(): argument 'window'");
            Table rows;
            {
              py::gil_scoped_release release;
              rows = scope ? asset.run(*scope, python_logger()) : asset.run(python_logger());
            }
            return to_rows(rows);
          },
          py::arg("window") = py::none())
      .def(
          "materialize",
          [](const Asset& asset, py::handle window) {
            std::unique_ptr<PartitionWindow> scope;
            if (!window.is_none())
              scope = window_argument(window, "materialize(): argument 'window'");
            py::gil_scoped_release release;
            return scope ? asset.materialize(*scope, python_logger())
                         : asset.materialize(python_logger());
          },
          py::arg("window") = py::none());
  m.def("make_asset", &make_asset, py::arg("name"), py::arg("function"), py::arg("asset"),
        py::arg("pass_self"), py::arg("inputs"), py::arg("partitioning"), py::arg("deps"),
        py::arg("destination"), py::arg("schema"), py::arg("enabled"), py::arg("version"),
        py::arg("mappings") = std::vector<std::pair<std::string, DepMapping>>{});
  py::class_<Source>(m, "EngineSource", "A named group of engine assets.")
      .def(
          py::init([](std::string name, std::shared_ptr<Destination> destination, py::list assets) {
            Source source(std::move(name), std::move(destination));
            source.reserve(assets.size());
            for (py::handle asset : assets) source.add(asset.cast<const Asset&>());
            return source;
          }),
          py::arg("name"), py::arg("destination"), py::arg("assets"))
      .def_property_readonly("name", &Source::name)
      .def(
          "assets", [](const Source& s) { return s.assets(); }, "Copies of the source's assets.");
}

}  // namespace interloper::python
