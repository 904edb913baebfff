#include "interloper/destination/destination_url.hpp"

#include <fmt/format.h>

#include "interloper/destination/url_query.hpp"
#include "interloper/postgres/postgres.hpp"

namespace interloper {

namespace {

// The path and query of a local destination's URL ("scheme:" already removed as `scheme`).
void parse_path(DestinationUrl& out, std::string_view scheme, std::string_view rest) {
  const std::string shown = postgres::redact(out.text);
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.substr(0, 2) == "//") {
    rest.remove_prefix(2);
    if (!rest.empty() && rest[0] != '/' && rest[0] != '.') {
      // The host as shown: the redacted URL differs from the original in the userinfo only.
      std::string_view host = std::string_view(shown).substr(scheme.size() + 3);
      host = host.substr(0, host.find_first_of("/?"));
      throw DestinationError(
          fmt::format("destination URL '{}': '{}' would be a host; write {}:///absolute/path or "
                      "{}:relative/path",
                      shown, host, scheme, scheme));
    }
  }
  if (rest.empty()) throw DestinationError(fmt::format("destination URL '{}': no path", shown));
  out.path = std::string(rest);
  out.query = std::string(query);
  for (const auto& [name, value] : query_parameters(shown, query)) {
    if (scheme != "file" || name != "format") {
      throw DestinationError(
          fmt::format("destination URL '{}': unknown parameter '{}'", shown, name));
    }
    if (value == "jsonl") {
      out.format = FileDestination::Format::jsonl;
    } else if (value == "csv") {
      out.format = FileDestination::Format::csv;
    } else {
      throw DestinationError(
          fmt::format("destination URL '{}': unknown format '{}' (jsonl or csv)", shown, value));
    }
  }
}

}  // namespace

std::string DestinationUrl::with_path(const std::string& new_path) const {
  std::string out = (scheme == Scheme::file ? "file://" : "sqlite://") + new_path;
  if (!query.empty()) out += "?" + query;
  return out;
}

namespace {

DestinationUrl parse_url_text(std::string_view url) {
  DestinationUrl out;
  out.text = std::string(url);
  auto colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    throw DestinationError(
        fmt::format("destination '{}' is not a URL (expected sqlite:///abs/path.db, "
                    "sqlite:relative/path.db or file:///dir?format=jsonl|csv)",
                    postgres::redact(url)));
  }
  std::string_view scheme = url.substr(0, colon);
  std::string_view rest = url.substr(colon + 1);
  if (scheme == "memory") {
    if (rest != "//" && !rest.empty()) {
      throw DestinationError(
          fmt::format("destination URL '{}': memory:// takes nothing else", postgres::redact(url)));
    }
    out.scheme = DestinationUrl::Scheme::memory;
  } else if (scheme == "sqlite" || scheme == "file") {
    out.scheme = scheme == "file" ? DestinationUrl::Scheme::file : DestinationUrl::Scheme::sqlite;
    parse_path(out, scheme, rest);
  } else if (scheme == "s3") {
    out.scheme = DestinationUrl::Scheme::s3;
    out.s3 = S3Destination::parse_url(url);  // credentials are read when the destination opens
  } else if (scheme == "postgresql" || scheme == "postgres") {
    out.scheme = DestinationUrl::Scheme::postgresql;
  } else {
    // An unknown scheme may still carry a password ("mysql://me:secret@db"): never echo it.
    throw DestinationError(fmt::format(
        "destination '{}' has an unknown scheme '{}' (expected sqlite, file, s3, postgresql or "
        "memory)",
        postgres::redact(url), scheme));
  }
  return out;
}

}  // namespace

DestinationUrl parse_destination_url(std::string_view url) {
  try {
    return parse_url_text(url);
  } catch (const DestinationError& e) {
    // A part quoted from a URL of any scheme may hold a password written in it.
    throw DestinationError(postgres::hide_password(e.what(), url));
  }
}

}  // namespace interloper
