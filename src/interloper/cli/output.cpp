#include "interloper/cli/cli_internal.hpp"

namespace interloper::cli::detail {

// JSON text; invalid UTF-8 (from names or keys) is replaced rather than fatal.
std::string dump(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

void print_error(const Args& args, const std::string& message) {
  std::string line = one_line(message);
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", args.program.c_str(), line.c_str());
}

void print_info(const Args& args, const std::string& message) {
  if (args.quiet) return;
  std::fprintf(stderr, "%s: info: %s\n", args.program.c_str(), message.c_str());
}

// Error text is capped so that a message about something huge (a 50,000-column table) stays
// readable; the cut says how much it left out.
constexpr std::size_t kMaxErrorBytes = 4096;

namespace {

// `text` without its trailing newlines, each inner one replaced by `separator`, capped. With
// `after_colon`, a line ending in ':' (a heading such as "query:") joins the next with that
// instead, so the heading reads as one with what it introduces.
std::string joined_lines(std::string text, std::string_view separator,
                         std::string_view after_colon) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out;
  for (char c : text) {
    if (c != '\n') {
      out += c;
    } else if (!out.empty() && out.back() == ':') {
      out += after_colon;
    } else {
      out += separator;
    }
  }
  if (out.size() > kMaxErrorBytes) {
    std::size_t cut = kMaxErrorBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    const std::size_t left_out = out.size() - cut;
    out.resize(cut);
    out += fmt::format(" ... ({} more bytes cut)", left_out);
  }
  return out;
}

}  // namespace

std::string one_line(std::string text) { return joined_lines(std::move(text), "; ", " "); }

std::string indented_lines(std::string text) {
  return joined_lines(std::move(text), "\n    ", "\n    ");
}

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

int terminal_width() {
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::shared_ptr<MaterializationStore> open_state_store(const std::string& path, bool create) {
  // Reading commands (status) must not create state: a store that does not exist yet is empty.
  std::error_code ec;
  const bool server = path.rfind("postgresql://", 0) == 0 || path.rfind("postgres://", 0) == 0;
  if (!create && !server && !fs::exists(path, ec)) return std::make_shared<MemoryStore>();
  try {
    // Reading commands open it read-only: they work on a store they may not write.
    if (!create) return std::shared_ptr<MaterializationStore>(open_store_read_only(path));
    return std::shared_ptr<MaterializationStore>(open_store(path));
  } catch (const std::exception& e) {
    // The store's own message names it with any password redacted; the raw path may hold one.
    throw UsageError(fmt::format("the store cannot be opened{}: {}", create ? " for writing" : "",
                                 one_line(e.what())));
  }
}


namespace {

// Before anything runs: every destination the selected assets write to, and the store, must
// be writable, so that a run never computes partitions it cannot record. Throws UsageError
// naming the first that is not.
void check_writable(const Project& project, const Selection& selection) {
  std::vector<Destination*> checked;
  for (const std::string& name : selection.assets) {
    const Asset& asset = project.dag->asset(name);
    Destination* destination = project.dag->destination_of(asset);
    if (destination == nullptr) {
      throw UsageError(fmt::format(
          "asset '{}' has no destination to write to (set one on the asset or its source)", name));
    }
    if (std::find(checked.begin(), checked.end(), destination) != checked.end()) continue;
    checked.push_back(destination);
    try {
      destination->check_writable();
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("destination {} (asset '{}') cannot be written: {}",
                                   destination->url(), name, one_line(e.what())));
    }
  }
  const fs::path store(project.store_path);
  for (const fs::path& path : {store, store.parent_path()}) {
    std::error_code ec;
    if (path.empty() || !fs::exists(path, ec) || ::access(path.c_str(), W_OK) == 0) continue;
    throw UsageError(fmt::format("store {} cannot be written: {}: {}", project.store_path,
                                 path.string(), std::strerror(errno)));
  }
}

}  // namespace

void prepare_run(RunContext& run, const Project& project, const Args& args,
                 const Selection& selection) {
  check_writable(project, selection);
  run.store = open_state_store(project.store_path, true);
  run.options.store = run.store.get();
  run.options.events = &run.events;
  run.options.assets = selection.assets;
  if (args.json) {
    run.events.subscribe([](const Event& e) {
      std::string line = e.to_json();
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    });
  }
  std::mutex* mutex = &run.output_mutex;
  bool verbose = args.verbose;
  run.options.logger =
      Logger([mutex, verbose](LogLevel level, std::string_view asset, std::string_view message) {
        if (!verbose && level < LogLevel::warning) return;
        std::lock_guard lock(*mutex);
        std::fprintf(stderr, "[%.*s] %.*s\n", static_cast<int>(asset.size()), asset.data(),
                     static_cast<int>(message.size()), message.data());
      });
}

}  // namespace interloper::cli::detail
