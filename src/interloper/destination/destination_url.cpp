#include "interloper/destination/destination_url.hpp"

#include <fmt/format.h>

namespace interloper {

namespace {

// The path and options of a local destination's locator.
void check_path(DestinationUrl& out) {
  const Locator& at = out.locator;
  const std::string& shown = at.redacted();
  if (!at.host.empty()) {
    throw DestinationError(
        fmt::format("destination URL '{}': '{}' would be a host; write {}:///absolute/path or "
                    "{}:relative/path",
                    shown, at.host, at.scheme, at.scheme));
  }
  if (at.path.empty()) throw DestinationError(fmt::format("destination URL '{}': no path", shown));
  out.path = at.path;
  out.query = at.query;
  for (const auto& [name, value] : at.options) {
    if (at.scheme != "file" || name != "format") {
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

DestinationUrl read_locator(Locator at) {
  DestinationUrl out;
  out.locator = std::move(at);
  const Locator& l = out.locator;
  if (l.scheme.empty()) {
    throw DestinationError(
        fmt::format("destination '{}' is not a URL (expected sqlite:///abs/path.db, "
                    "sqlite:relative/path.db or file:///dir?format=jsonl|csv)",
                    l.redacted()));
  }
  if (l.scheme == "memory") {
    if (!l.host.empty() || (!l.path.empty() && l.path != "//") || !l.query.empty()) {
      throw DestinationError(
          fmt::format("destination URL '{}': memory:// takes nothing else", l.redacted()));
    }
    out.scheme = DestinationUrl::Scheme::memory;
  } else if (l.is_local()) {
    out.scheme = l.scheme == "file" ? DestinationUrl::Scheme::file : DestinationUrl::Scheme::sqlite;
    check_path(out);
  } else if (l.scheme == "s3") {
    out.scheme = DestinationUrl::Scheme::s3;
    // Credentials are read when the destination opens.
    out.s3 = S3Destination::parse_url(l.secret_text());
  } else if (l.is_postgres()) {
    out.scheme = DestinationUrl::Scheme::postgresql;
  } else {
    throw DestinationError(fmt::format(
        "destination '{}' has an unknown scheme '{}' (expected sqlite, file, s3, postgresql or "
        "memory)",
        l.redacted(), l.scheme));
  }
  return out;
}

}  // namespace

std::string DestinationUrl::with_path(const std::string& new_path) const {
  std::string out = (scheme == Scheme::file ? "file://" : "sqlite://") + new_path;
  if (!query.empty()) out += "?" + query;
  return out;
}

DestinationUrl parse_destination_url(const Locator& url) {
  try {
    return read_locator(url);
  } catch (const DestinationError& e) {
    // A part quoted from a URL of any scheme may hold a password written in it.
    throw DestinationError(hide_password(e.what(), url.secret_text()));
  }
}

DestinationUrl parse_destination_url(std::string_view url) {
  Locator at;
  try {
    at = parse_locator(url);
  } catch (const DestinationError& e) {
    throw DestinationError(std::string("destination ") + e.what());
  }
  return parse_destination_url(at);
}

}  // namespace interloper
