#include "interloper/pipeline/assets.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "interloper/data.hpp"
#include "interloper/error.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/pipeline/lazy_destination.hpp"
#include "interloper/pipeline/process.hpp"

namespace interloper::pipeline {

namespace fs = std::filesystem;

std::string instant_text(TimePoint t) { return t.is_midnight() ? t.date_string() : t.to_string(); }

Scope Scope::of(const ExecutionContext& context) {
  Scope scope;
  scope.asset = context.asset_name();
  if (!context.has_window()) return scope;
  const PartitionWindow& window = context.window();
  scope.has_window = true;
  scope.window = window.to_string();
  scope.start_key = window.partition_at(0)->key();
  scope.end_key = window.partition_at(window.size() - 1)->key();
  if (window.size() == 1) scope.partition_key = scope.start_key;
  if (const std::optional<TimePartitionWindow> time = window.as_time_window()) {
    Bounds bounds = time->bounds();
    scope.bounds_start = bounds.start;
    scope.bounds_end = bounds.end;
  } else {
    scope.values = window.keys();
  }
  return scope;
}

namespace {

constexpr std::string_view kPlaceholders[] = {"partition.key", "window.start", "window.end",
                                              "bounds.start",  "bounds.end",   "asset"};

std::string placeholder_value(std::string_view name, const Scope& scope) {
  if (name.substr(0, 6) == "input.") {
    for (const auto& [dependency, path] : scope.inputs) {
      if (dependency == name.substr(6)) return path;
    }
    throw RunError(fmt::format("placeholder {{{}}}: no such input", name));
  }
  auto need_window = [&] {
    if (!scope.has_window) {
      throw RunError(fmt::format("placeholder {{{}}} needs a window but the run has none", name));
    }
  };
  if (name == "asset") return scope.asset;
  need_window();
  if (name == "partition.key") {
    if (!scope.partition_key) {
      throw RunError(
          fmt::format("placeholder {{partition.key}} needs a single partition but the window is {}",
                      scope.window));
    }
    return *scope.partition_key;
  }
  if (name == "window.start") return scope.start_key;
  if (name == "window.end") return scope.end_key;
  if (!scope.bounds_start) {
    throw RunError(fmt::format("placeholder {{{}}} needs a time window", name));
  }
  return name == "bounds.start" ? scope.bounds_start->to_string() : scope.bounds_end->to_string();
}

}  // namespace

bool is_placeholder(std::string_view name) {
  for (auto p : kPlaceholders) {
    if (p == name) return true;
  }
  return false;
}

namespace {

// The length of an identifier-shaped name ("asset", "window.start") at the start of `text`:
// letters, digits, '_' and '.', beginning with a letter or '_'. Zero when there is none.
std::size_t name_length(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return 0;
  }
  std::size_t n = 1;
  while (n < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[n])) || text[n] == '_' || text[n] == '.')) {
    ++n;
  }
  return n;
}

}  // namespace

// Only `{name}` is a placeholder, and not after '$' (the shell's `${HOME}`); a brace that does
// not open one is literal, so JSON and most awk programs pass through as written. "{{" and "}}"
// still stand for one brace each, as they always have.
std::string expand_placeholders(const std::string& arg, const Scope* scope,
                                const std::vector<std::string>& inputs) {
  std::string out;
  const std::string_view text(arg);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;  // "{{" and "}}" stand for one brace
      ++i;
      continue;
    }
    if (c != '{' || (i > 0 && text[i - 1] == '$')) {
      out += c;
      continue;
    }
    const std::size_t n = name_length(text.substr(i + 1));
    const std::size_t close = i + 1 + n;
    if (n == 0 || close >= text.size() || text[close] != '}') {
      out += c;  // not a placeholder: a literal brace
      continue;
    }
    std::string name(text.substr(i + 1, n));
    if (name.rfind("input.", 0) == 0) {
      const std::string dependency = name.substr(6);
      bool known = false;
      if (scope != nullptr) {
        for (const auto& input : scope->inputs) known = known || input.first == dependency;
      } else {
        known = std::find(inputs.begin(), inputs.end(), dependency) != inputs.end();
      }
      if (!known) {
        throw PipelineError(fmt::format(
            "placeholder {{{}}} in argument '{}' names no dependency of the asset ({}); write "
            "{{{{{}}}}} for the literal text",
            name, arg,
            inputs.empty() && scope == nullptr
                ? std::string("it has none")
                : "its dependencies: " + fmt::format("{}", fmt::join(inputs, ", ")),
            name));
      }
      if (scope != nullptr) out += placeholder_value(name, *scope);
    } else if (!is_placeholder(name)) {
      throw PipelineError(fmt::format(
          "unknown placeholder {{{}}} in argument '{}' (known: {{partition.key}}, "
          "{{window.start}}, {{window.end}}, {{bounds.start}}, {{bounds.end}}, {{asset}}; write "
          "{{{{{}}}}} for the literal text)",
          name, arg, name));
    } else if (scope != nullptr) {
      out += placeholder_value(name, *scope);
    }
    i = close;
  }
  return out;
}

std::string input_variable(std::string_view dependency) {
  std::string name = "IL_INPUT_";
  for (char c : dependency) {
    name += std::isalnum(static_cast<unsigned char>(c)) != 0
                ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                : '_';
  }
  return name;
}

namespace {

// A private temporary directory for a command's input files, removed with everything in it
// when the command is done (whether it succeeded, failed or was interrupted).
class InputDirectory {
 public:
  InputDirectory() {
    std::string pattern = (fs::temp_directory_path() / "interloper-inputs-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw RunError(fmt::format("cannot create a directory for input files in {}: {}",
                                 fs::temp_directory_path().string(), std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~InputDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  InputDirectory(const InputDirectory&) = delete;
  InputDirectory& operator=(const InputDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Writes each dependency's rows for this run into `dir`, one JSON-lines file each, and lists
// them in the scope and the environment.
void write_inputs(const CommandAsset& command, ExecutionContext& context, const InputDirectory& dir,
                  Scope& scope, ProcessSpec& spec) {
  for (std::size_t i = 0; i < command.inputs.size(); ++i) {
    const std::string& dependency = command.inputs[i];
    const Table rows = context.load(dependency);
    // Numbered, so that no asset name has to be made safe as a file name.
    const fs::path file = dir.path() / fmt::format("{}.jsonl", i + 1);
    std::ofstream out(file, std::ios::binary);
    write_json_lines(rows, out);
    out.close();
    if (!out) {
      throw RunError(fmt::format("asset '{}': cannot write the input file of '{}' ({})",
                                 scope.asset, dependency, file.string()));
    }
    scope.inputs.emplace_back(dependency, file.string());
    spec.env.emplace_back(input_variable(dependency), file.string());
  }
}

constexpr std::size_t kMaxValuesInEnvironment = 64 * 1024;

// A temporary file holding a list window's values, one per line, removed on destruction.
class ValuesFile {
 public:
  explicit ValuesFile(const std::string& text) {
    std::string pattern = (std::filesystem::temp_directory_path() / "il-values-XXXXXX").string();
    int fd = ::mkstemp(pattern.data());
    if (fd < 0) {
      throw RunError(fmt::format("cannot create a file for IL_PARTITION_VALUES_FILE in '{}': {}",
                                 pattern, std::strerror(errno)));
    }
    path_ = pattern;
    std::size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        fail(fd);
      }
      done += static_cast<std::size_t>(n);
    }
    if (!text.empty() && ::write(fd, "\n", 1) != 1) fail(fd);
    ::close(fd);
  }
  ~ValuesFile() { ::unlink(path_.c_str()); }
  ValuesFile(const ValuesFile&) = delete;
  ValuesFile& operator=(const ValuesFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(int fd) {
    const int error = errno;
    ::close(fd);
    ::unlink(path_.c_str());
    throw RunError(fmt::format("cannot write '{}': {}", path_, std::strerror(error)));
  }
  std::string path_;
};

// The variables that describe the run's scope to a command (docs/pipelines.md): the asset, the
// window, its keys and bounds, or a list window's values through `values_file` (and the
// environment while they fit). Variables of these names from the parent's environment are unset.
void set_scope_environment(ProcessSpec& spec, const Scope& scope,
                           std::optional<ValuesFile>& values_file) {
  spec.unset_env = {
      "IL_PARTITION_KEY", "IL_WINDOW",     "IL_WINDOW_START",     "IL_WINDOW_END",
      "IL_BOUNDS_START",  "IL_BOUNDS_END", "IL_PARTITION_VALUES", "IL_PARTITION_VALUES_FILE"};
  spec.env.emplace_back("IL_ASSET", scope.asset);
  if (!scope.has_window) return;
  spec.env.emplace_back("IL_WINDOW", scope.window);
  spec.env.emplace_back("IL_WINDOW_START", scope.start_key);
  spec.env.emplace_back("IL_WINDOW_END", scope.end_key);
  if (scope.partition_key) spec.env.emplace_back("IL_PARTITION_KEY", *scope.partition_key);
  if (scope.bounds_start) {
    spec.env.emplace_back("IL_BOUNDS_START", scope.bounds_start->to_string());
    spec.env.emplace_back("IL_BOUNDS_END", scope.bounds_end->to_string());
    return;
  }
  std::string joined;
  for (const auto& v : scope.values) {
    if (!joined.empty()) joined += '\n';
    joined += v;
  }
  values_file.emplace(joined);
  spec.env.emplace_back("IL_PARTITION_VALUES_FILE", values_file->path());
  // One environment string may not exceed the kernel's limit (128 KiB on Linux): past
  // kMaxValuesInEnvironment the values are in the file only.
  if (joined.size() <= kMaxValuesInEnvironment)
    spec.env.emplace_back("IL_PARTITION_VALUES", joined);
}

// Why a command that did not succeed failed, with the last lines of its stderr.
RunError command_failure(const std::string& program, const ProcessResult& result,
                         double timeout_seconds) {
  std::string tail;
  for (const auto& line : result.stderr_tail) {
    tail += tail.empty() ? ": " : " | ";
    tail += line;
  }
  return RunError(
      fmt::format("command '{}' {}{}", program, result.describe(timeout_seconds), tail));
}

}  // namespace

ComputeFn command_compute(CommandAsset command) {
  return [command = std::move(command)](ExecutionContext& context) -> Table {
    Scope scope = Scope::of(context);
    ProcessSpec spec;
    std::optional<InputDirectory> input_dir;  // removed when the command is done
    if (!command.inputs.empty()) {
      input_dir.emplace();
      write_inputs(command, context, *input_dir, scope, spec);
    }
    for (const auto& arg : command.argv) spec.argv.push_back(expand_placeholders(arg, &scope));
    spec.working_directory = command.working_directory;
    spec.timeout_seconds = command.timeout_seconds;
    std::optional<ValuesFile> values_file;  // removed when the command is done
    set_scope_environment(spec, scope, values_file);
    const Logger& logger = context.logger();
    spec.on_stderr_line = [&logger](std::string_view line) { logger.info(line); };

    // Stdout is parsed as it comes, each batch handed to the run's writer.
    const std::string& program = command.argv.front();
    const char* format = command.csv ? "CSV" : "JSON lines";
    TableStreamParser parser(
        command.csv ? TableStreamParser::Format::csv : TableStreamParser::Format::json_lines,
        [&context](Table&& batch) { context.emit(batch); }, TableStreamParser::Limits{},
        command.read);
    std::uint64_t printed = 0;
    spec.on_stdout = [&](std::string_view chunk) {
      printed += chunk.size();
      if (printed > command.max_output) {
        throw RunError(fmt::format(
            "asset '{}': command '{}' printed more than max_output ({} bytes) on stdout; it was "
            "stopped",
            scope.asset, program, command.max_output));
      }
      parser.feed(chunk);
    };
    auto invalid = [&](const DataError& e) {
      return RunError(
          fmt::format("command '{}' printed invalid {}: {}", program, format, e.what()));
    };
    ProcessResult result;
    try {
      result = run_process(spec);
    } catch (const DataError& e) {
      throw invalid(e);
    } catch (const PipelineError& e) {
      throw RunError(fmt::format("asset '{}': {}", scope.asset, e.what()));
    }
    if (result.left_processes) {
      logger.warning(fmt::format(
          "command '{}' exited but processes it started still held its output; they were "
          "killed",
          program));
    }
    if (!result.ok()) throw command_failure(program, result, command.timeout_seconds);
    try {
      parser.finish();
    } catch (const DataError& e) {
      throw invalid(e);
    }
    return Table();
  };
}

}  // namespace interloper::pipeline
