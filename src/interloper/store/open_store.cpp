// open_store and open_store_read_only: a store by its path or URL.
#include <fmt/format.h>

#include <cctype>

#include "interloper/store/sql_store_state.hpp"

namespace interloper {

std::optional<std::string> store_file(std::string_view path) {
  if (path == "memory://" || path == "memory:") return std::nullopt;
  auto fail = [&](std::string_view why) {
    throw DestinationError(
        fmt::format("store '{}': {} (write a path, sqlite:///absolute/path.db, "
                    "sqlite:relative/path.db, postgresql://... or memory://)",
                    path, why));
  };
  std::string_view file = path;
  // A scheme is letters, digits, '+', '-' and '.' before a ':', starting with a letter.
  std::size_t colon = file.find(':');
  bool scheme = colon != std::string_view::npos && colon > 0 &&
                std::isalpha(static_cast<unsigned char>(file[0])) != 0;
  for (std::size_t i = 0; scheme && i < colon; ++i) {
    const char c = file[i];
    scheme = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
  }
  if (scheme) {
    const std::string_view name = file.substr(0, colon);
    if (name == "postgresql" || name == "postgres") fail("a server's URL names no file");
    if (name != "sqlite") fail(fmt::format("unknown scheme '{}'", name));
    file.remove_prefix(colon + 1);
    if (file.rfind("//", 0) == 0) {
      file.remove_prefix(2);
      if (!file.empty() && file[0] != '/' && file[0] != '.') {
        fail(fmt::format("'{}' would be a host", file.substr(0, file.find('/'))));
      }
    }
  }
  if (file.empty()) fail("no path");
  return std::string(file);
}

namespace {
bool is_server_url(std::string_view path) {
  return path.rfind("postgresql://", 0) == 0 || path.rfind("postgres://", 0) == 0;
}
}  // namespace

std::unique_ptr<MaterializationStore> open_store(std::string_view path) {
  if (is_server_url(path)) return std::make_unique<PostgresStore>(path);
  std::optional<std::string> file = store_file(path);
  if (!file) return std::make_unique<MemoryStore>();
  return std::make_unique<SqliteStore>(*file);
}

std::unique_ptr<MaterializationStore> open_store_read_only(std::string_view path) {
  // A server enforces its own permissions; only a file needs opening read-only.
  if (is_server_url(path)) return std::make_unique<PostgresStore>(path);
  std::optional<std::string> file = store_file(path);
  if (!file) return std::make_unique<MemoryStore>();
  try {
    return std::make_unique<SqliteStore>(*file, true);
  } catch (const detail::NotYetAStore&) {
    return std::make_unique<MemoryStore>();  // being created by a writer: nothing stored yet
  }
}

}  // namespace interloper
