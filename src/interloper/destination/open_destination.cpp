// open_destination: URL -> destination. See docs/destinations.md for the accepted forms.
#include <fmt/format.h>

#include "interloper/destination.hpp"
#include "interloper/destination/url_query.hpp"

namespace interloper {

namespace {

struct Parsed {
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
};

// "scheme:///abs", "scheme://./rel", "scheme://../rel" and "scheme:rel" name a path; anything
// else after "//" would be a host, which local destinations do not have.
Parsed parse_path(std::string_view url, std::string_view scheme, std::string_view rest) {
  Parsed out;
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    if (rest.empty() || (rest[0] != '/' && rest[0] != '.')) {
      throw DestinationError(
          fmt::format("destination URL '{}': '{}' would be a host; write {}:///absolute/path or "
                      "{}:relative/path",
                      url, rest.substr(0, rest.find('/')), scheme, scheme));
    }
  }
  if (rest.empty()) throw DestinationError(fmt::format("destination URL '{}': no path", url));
  out.path = std::string(rest);
  out.query = query_parameters(url, query);
  return out;
}

}  // namespace

std::shared_ptr<Destination> open_destination(std::string_view url) {
  auto colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    throw DestinationError(
        fmt::format("destination URL '{}' has no scheme (memory://, "
                    "sqlite:///path.db, file:///dir)",
                    url));
  }
  std::string_view scheme = url.substr(0, colon);
  std::string_view rest = url.substr(colon + 1);
  if (scheme == "memory") {
    if (rest != "//" && !rest.empty()) {
      throw DestinationError(
          fmt::format("destination URL '{}': memory:// takes nothing else", url));
    }
    return std::make_shared<MemoryDestination>();
  }
  if (scheme == "sqlite") {
    Parsed parsed = parse_path(url, scheme, rest);
    if (!parsed.query.empty()) {
      throw DestinationError(fmt::format("destination URL '{}': unknown parameter '{}'", url,
                                         parsed.query.front().first));
    }
    return std::make_shared<SqliteDestination>(parsed.path);
  }
  if (scheme == "file") {
    Parsed parsed = parse_path(url, scheme, rest);
    FileDestination::Format format = FileDestination::Format::jsonl;
    for (const auto& [name, value] : parsed.query) {
      if (name != "format") {
        throw DestinationError(
            fmt::format("destination URL '{}': unknown parameter '{}'", url, name));
      }
      if (value == "jsonl") {
        format = FileDestination::Format::jsonl;
      } else if (value == "csv") {
        format = FileDestination::Format::csv;
      } else {
        throw DestinationError(
            fmt::format("destination URL '{}': unknown format '{}' (jsonl or csv)", url, value));
      }
    }
    return std::make_shared<FileDestination>(parsed.path, format);
  }
  if (scheme == "s3") return std::make_shared<S3Destination>(S3Destination::parse_url(url));
  if (scheme == "postgresql" || scheme == "postgres") {
    return std::make_shared<PostgresDestination>(url);
  }
  throw DestinationError(fmt::format(
      "destination URL '{}': unknown scheme '{}' (memory, sqlite, file, s3, postgresql)", url, scheme));
}

}  // namespace interloper
