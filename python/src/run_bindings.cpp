// DAGs, runners, backfills and the materialization store.
//
// A run executes on a thread of its own while the calling thread waits without the GIL, waking
// every 50 ms to let Python handle signals: Ctrl-C sets the run's stop flag (nothing new
// starts, as in the CLI), the run ends, and KeyboardInterrupt is raised.
#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "bindings.hpp"
#include "interloper/cli.hpp"
#include "interloper/dag.hpp"
#include "interloper/run.hpp"
#include "interloper/store.hpp"

namespace interloper::python {

namespace {

// Runs `work` (which must not touch Python without taking the GIL) while this thread handles
// signals. Returns what `work` returns; rethrows what it throws; raises KeyboardInterrupt (or
// what a signal handler raised) after the run stopped.
template <typename Result>
Result run_interruptibly(std::atomic<bool>& stop, std::function<Result()> work) {
  py::module_ threading = py::module_::import("threading");
  if (!threading.attr("current_thread")().is(threading.attr("main_thread")())) {
    py::gil_scoped_release release;
    return work();
  }
  std::packaged_task<Result()> task(std::move(work));
  std::future<Result> done = task.get_future();
  std::thread runner([&task] {
    // The thread keeps one Python thread state while it runs, so that the assets it calls
    // take the GIL without making a new state each time.
    py::gil_scoped_acquire state;
    py::gil_scoped_release release;
    task();
  });
  bool interrupted = false;
  while (true) {
    {
      py::gil_scoped_release release;
      if (done.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready) break;
    }
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;  // the signal's exception stays set until the run ended
      stop = true;
    }
  }
  {
    py::gil_scoped_release release;
    runner.join();
  }
  if (interrupted) throw py::error_already_set();
  return done.get();
}

struct RunSettings {
  std::vector<std::string> assets;
  bool fail_fast = false;
  std::shared_ptr<MaterializationStore> store;
  std::string history;  // the name the run history files the run under; "" records none
  std::string command_line;
};

// The run history the command line keeps, kept for runs started from Python too: the run is
// recorded when it starts and when it ends, under the file that defines the assets, so
// `python3 -m interloper runs FILE.py` lists them.
constexpr std::size_t kKeepRuns = 1000;

std::string new_run_id() {
  static std::atomic<int> runs{0};
  std::string stamp;
  for (char c : SystemClock().now().to_string()) {
    if (c != '-' && c != ':') stamp += c;
  }
  return "run-" + stamp + "-" + std::to_string(::getpid()) + "-" + std::to_string(++runs);
}

std::optional<RunRecord> start_history(const RunSettings& settings, const PartitionWindow* window) {
  if (!settings.store || settings.history.empty()) return std::nullopt;
  RunRecord record;
  record.run_id = new_run_id();
  record.pipeline = settings.history;
  record.command_line = settings.command_line;
  record.window = window != nullptr ? window->to_string() : "";
  record.started = SystemClock().now();
  record.finished = record.started;
  record.partitions = window != nullptr ? static_cast<std::int64_t>(window->size()) : 1;
  settings.store->record_run(record, kKeepRuns);
  return record;
}

// `n`: what the run did, counted as a backfill counts its tasks (claimed ones count as skipped).
void finish_history(const RunSettings& settings, std::optional<RunRecord> record, bool stopped,
                    const TaskCounts& n) {
  if (!record) return;
  record->finished = SystemClock().now();
  record->succeeded = static_cast<std::int64_t>(n.succeeded);
  record->failed = static_cast<std::int64_t>(n.failed);
  record->canceled = static_cast<std::int64_t>(n.canceled);
  record->skipped = static_cast<std::int64_t>(n.skipped + n.claimed);
  record->state = stopped                            ? RunState::interrupted
                  : n.failed == 0 && n.canceled == 0 ? RunState::succeeded
                                                     : RunState::failed;
  settings.store->record_run(*record, kKeepRuns);
}

RunOptions options_of(const RunSettings& settings, std::atomic<bool>& stop) {
  RunOptions options;
  options.assets = settings.assets;
  options.fail_fast = settings.fail_fast;
  options.store = settings.store.get();
  options.stop = &stop;
  options.logger = python_logger();
  return options;
}

const DAG& dag_of(py::handle dag) {
  if (py::isinstance<DAG>(dag)) return dag.cast<const DAG&>();
  if (py::hasattr(dag, "_engine")) return dag.attr("_engine").cast<const DAG&>();
  throw py::type_error("argument 'dag' must be an interloper.DAG");
}

RunResult run_dag(const Runner& runner, py::handle dag, py::handle window,
                  std::vector<std::string> assets, bool fail_fast,
                  std::shared_ptr<MaterializationStore> store, std::string history,
                  std::string command_line) {
  const DAG& graph = dag_of(dag);
  std::shared_ptr<PartitionWindow> scope;
  if (!window.is_none()) scope = window_argument(window, "run(): argument 'window'");
  RunSettings settings{std::move(assets), fail_fast, std::move(store), std::move(history),
                       std::move(command_line)};
  std::atomic<bool> stop{false};
  return run_interruptibly<RunResult>(stop, [&] {
    validate(graph, scope.get(), options_of(settings, stop));  // a refused run is no run
    std::optional<RunRecord> record = start_history(settings, scope.get());
    RunOptions options = options_of(settings, stop);
    if (record) options.run_id = record->run_id;
    RunResult result = runner.run(graph, scope.get(), options);
    TaskCounts n;
    for (const AssetResult& a : result.assets) {
      n.succeeded += a.status == Status::succeeded;
      n.failed += a.status == Status::failed;
      n.canceled += a.status == Status::canceled;
    }
    n.skipped = result.assets.size() - n.succeeded - n.failed - n.canceled;
    finish_history(settings, record, stop, n);
    return result;
  });
}

BackfillResult backfill_dag(py::handle dag, py::handle window, bool missing, int concurrency,
                            std::vector<std::string> assets, bool fail_fast,
                            std::shared_ptr<MaterializationStore> store, std::string history,
                            std::string command_line) {
  const DAG& graph = dag_of(dag);
  std::unique_ptr<PartitionWindow> scope = window_argument(window, "backfill(): argument 'window'");
  if (missing && !store) throw py::value_error("backfill(): missing=True needs a store");
  RunSettings settings{std::move(assets), fail_fast, std::move(store), std::move(history),
                       std::move(command_line)};
  std::atomic<bool> stop{false};
  BackfillOptions options;
  options.concurrency = concurrency;
  options.fail_fast = fail_fast;
  options.missing_only = missing;
  options.run = options_of(settings, stop);
  return run_interruptibly<BackfillResult>(stop, [&] {
    std::optional<RunRecord> record;
    options.on_plan = [&](std::size_t, std::size_t) {
      record = start_history(settings, scope.get());
    };
    BackfillResult result = backfill(graph, *scope, options);
    finish_history(settings, record, stop, result.tasks);
    return result;
  });
}

std::string status_text(Status s) { return std::string(status_name(s)); }

void bind_results(py::module_& m) {
  py::class_<AssetResult>(m, "AssetResult", "What one asset did in a run.")
      .def_readonly("asset", &AssetResult::asset)
      .def_property_readonly("status", [](const AssetResult& r) { return status_text(r.status); })
      .def_readonly("rows", &AssetResult::rows)
      .def_readonly("seconds", &AssetResult::seconds)
      .def_readonly("error", &AssetResult::error)
      .def("__repr__", [](const AssetResult& r) {
        return "<AssetResult " + r.asset + " " + status_text(r.status) +
               " rows=" + std::to_string(r.rows) + ">";
      });
  py::class_<RunResult>(m, "RunResult", "The outcome of a run: one AssetResult per asset.")
      .def_readonly("run_id", &RunResult::run_id)
      .def_readonly("window", &RunResult::window)
      .def_property_readonly("status", [](const RunResult& r) { return status_text(r.status); })
      .def_property_readonly("ok", &RunResult::ok)
      .def_readonly("seconds", &RunResult::seconds)
      .def_readonly("assets", &RunResult::assets)
      .def("asset", &RunResult::asset, py::arg("name"), py::return_value_policy::copy)
      .def("error_summary", &RunResult::error_summary)
      .def("__bool__", &RunResult::ok)
      .def("__repr__", [](const RunResult& r) {
        return "<RunResult " + (r.window.empty() ? std::string() : r.window + " ") +
               status_text(r.status) + ">";
      });
  py::class_<TaskResult>(m, "TaskResult", "What one (asset, partition) task did.")
      .def_readonly("asset", &TaskResult::asset)
      .def_readonly("window", &TaskResult::window)
      .def_property_readonly("status", [](const TaskResult& r) { return status_text(r.status); })
      .def_readonly("rows", &TaskResult::rows)
      .def_readonly("error", &TaskResult::error)
      .def("__repr__", [](const TaskResult& r) {
        return "<TaskResult " + r.asset + " " + r.window + " " + status_text(r.status) + ">";
      });
  py::class_<PlanResult>(m, "BackfillResult",
                         "The outcome of a backfill: counts and the failed tasks.")
      .def_readonly("run_id", &PlanResult::run_id)
      .def_property_readonly("succeeded", [](const PlanResult& r) { return r.tasks.succeeded; })
      .def_property_readonly("failed", [](const PlanResult& r) { return r.tasks.failed; })
      .def_property_readonly("canceled", [](const PlanResult& r) { return r.tasks.canceled; })
      .def_property_readonly("skipped", [](const PlanResult& r) { return r.tasks.skipped; })
      .def_property_readonly("claimed", [](const PlanResult& r) { return r.tasks.claimed; })
      .def_readonly("failures", &PlanResult::failures)
      .def_readonly("seconds", &PlanResult::seconds)
      .def_property_readonly("ok", &PlanResult::ok)
      .def("__bool__", &PlanResult::ok)
      .def("__repr__", [](const PlanResult& r) {
        return "<BackfillResult succeeded=" + std::to_string(r.tasks.succeeded) +
               " failed=" + std::to_string(r.tasks.failed) +
               " skipped=" + std::to_string(r.tasks.skipped) + ">";
      });
}

void bind_store(py::module_& m) {
  py::class_<MaterializationStore, std::shared_ptr<MaterializationStore>>(
      m, "Store", "The materialization store: which partitions of which asset are materialized.")
      .def(
          "status",
          [](MaterializationStore& store, const Asset& asset, py::handle window) {
            std::unique_ptr<PartitionWindow> scope =
                window_argument(window, "status(): argument 'window'");
            WindowStatus status = store.status(asset.dataset(), *scope);
            auto keys = [&](const std::vector<PartitionRange>& ranges) {
              std::vector<std::string> out;
              for (const PartitionRange& r : ranges) {
                for (std::size_t i = r.first; i <= r.last; ++i)
                  out.push_back(scope->partition_at(i)->key());
              }
              return out;
            };
            py::dict answer;
            answer["materialized"] = keys(status.materialized);
            answer["failed"] = keys(status.failed);
            answer["missing"] = keys(status.missing);
            return answer;
          },
          py::arg("asset"), py::arg("window"),
          "{'materialized': [keys], 'failed': [keys], 'missing': [keys]} for one asset.");
  m.def(
      "open_store",
      [](const std::string& url) { return std::shared_ptr<MaterializationStore>(open_store(url)); },
      py::arg("url"), "A store from a SQLite path, sqlite: URL, postgresql:// URL or memory://.");
}

}  // namespace

void bind_runs(py::module_& m) {
  bind_results(m);
  bind_store(m);
  py::class_<DAG>(m, "EngineDag", "Engine assets wired by name.")
      .def(py::init([](py::list sources, py::list loose) {
             std::vector<Source> all;
             for (py::handle s : sources) all.push_back(s.cast<const Source&>());
             std::vector<Asset> assets;
             for (py::handle a : loose) assets.push_back(a.cast<const Asset&>());
             return DAG(std::move(all), std::move(assets));
           }),
           py::arg("sources"), py::arg("assets"))
      .def("order",
           [](const DAG& dag) {
             std::vector<std::string> names;
             for (const Asset* a : dag.order()) names.push_back(a->name());
             return names;
           })
      .def("asset", &DAG::asset, py::arg("name"), py::return_value_policy::copy);
  py::class_<Runner>(m, "Runner",
                     "Runs a DAG over a window; see SerialRunner and ConcurrentRunner.")
      .def("run", &run_dag, py::arg("dag"), py::arg("window") = py::none(), py::kw_only(),
           py::arg("assets") = std::vector<std::string>{}, py::arg("fail_fast") = false,
           py::arg("store") = nullptr, py::arg("history") = "", py::arg("command_line") = "",
           "Validates the window for every asset (PartitionError listing each that cannot serve "
           "it), then runs them upstreams first. Failed assets are reported in the result.");
  py::class_<SerialRunner, Runner>(m, "SerialRunner", "Runs one asset at a time.")
      .def(py::init<>());
  py::class_<ThreadedRunner, Runner>(m, "ConcurrentRunner",
                                     "Runs independent assets on up to `workers` threads at once.")
      .def(py::init<int>(), py::arg("workers") = 4);
  m.def("backfill", &backfill_dag, py::arg("dag"), py::arg("window"), py::kw_only(),
        py::arg("missing") = false, py::arg("concurrency") = 1,
        py::arg("assets") = std::vector<std::string>{}, py::arg("fail_fast") = false,
        py::arg("store") = nullptr, py::arg("history") = "", py::arg("command_line") = "");
  m.def(
      "cli_main",
      [](std::vector<std::string> args, py::handle dag, py::object resolver) {
        const DAG* graph = dag.is_none() ? nullptr : &dag_of(dag);
        std::vector<char*> argv;
        for (std::string& arg : args) argv.push_back(arg.data());
        argv.push_back(nullptr);
        // The resolver serves this command line only; it is removed, with the GIL held, when
        // the command returns or throws.
        struct Installed {
          explicit Installed(py::object resolve) {
            if (!resolve.is_none()) set_python_resolver(python_resolver_of(std::move(resolve)));
          }
          ~Installed() { set_python_resolver(nullptr); }
        } installed{std::move(resolver)};
        py::gil_scoped_release release;
        const int argc = static_cast<int>(args.size());
        return graph != nullptr ? cli::main(argc, argv.data(), *graph)
                                : cli::main(argc, argv.data());
      },
      py::arg("argv"), py::arg("dag") = py::none(), py::arg("resolver") = py::none(),
      "The interloper command line over a DAG, or over the pipeline file argv names when `dag` "
      "is None (its python: assets found by `resolver`); argv[0] names the program. Returns "
      "the exit code.");
}

}  // namespace interloper::python
