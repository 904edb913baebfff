// open_store and open_store_read_only: a store by its locator (a path or a URL).
#include <fmt/format.h>

#include "interloper/store/sql_store_state.hpp"

namespace interloper {

std::optional<std::string> store_file(const Locator& at) {
  auto fail = [&](std::string_view why) {
    throw DestinationError(
        hide_password(fmt::format("store '{}': {} (write a path, sqlite:///absolute/path.db, "
                                  "sqlite:relative/path.db, postgresql://... or memory://)",
                                  at.redacted(), why),
                      at.secret_text()));
  };
  if (at.scheme == "memory") {
    if (!at.host.empty() || !at.path.empty() || !at.query.empty()) fail("memory:// takes nothing");
    return std::nullopt;
  }
  if (at.is_postgres()) fail("a server's URL names no file");
  if (!at.scheme.empty() && at.scheme != "sqlite") fail(fmt::format("unknown scheme '{}'", at.scheme));
  if (!at.host.empty()) fail(fmt::format("'{}' would be a host", at.host));
  // A query was always part of the file's name.
  std::string file = at.query.empty() ? at.path : at.path + "?" + at.query;
  if (file.empty()) fail("no path");
  return file;
}

namespace {

Locator store_locator(std::string_view text) {
  try {
    return parse_locator(text);
  } catch (const DestinationError& e) {
    throw DestinationError(std::string("store ") + e.what());
  }
}

}  // namespace

std::optional<std::string> store_file(std::string_view url) {
  return store_file(store_locator(url));
}

std::unique_ptr<MaterializationStore> open_store(const Locator& at) {
  if (at.is_postgres()) return std::make_unique<PostgresStore>(at.secret_text());
  std::optional<std::string> file = store_file(at);
  if (!file) return std::make_unique<MemoryStore>();
  return std::make_unique<SqliteStore>(*file);
}

std::unique_ptr<MaterializationStore> open_store(std::string_view path) {
  return open_store(store_locator(path));
}

std::unique_ptr<MaterializationStore> open_store_read_only(const Locator& at) {
  // A server enforces its own permissions; only a file needs opening read-only.
  if (at.is_postgres()) return std::make_unique<PostgresStore>(at.secret_text());
  std::optional<std::string> file = store_file(at);
  if (!file) return std::make_unique<MemoryStore>();
  try {
    return std::make_unique<SqliteStore>(*file, true);
  } catch (const detail::NotYetAStore&) {
    return std::make_unique<MemoryStore>();  // being created by a writer: nothing stored yet
  }
}

std::unique_ptr<MaterializationStore> open_store_read_only(std::string_view path) {
  return open_store_read_only(store_locator(path));
}

}  // namespace interloper
