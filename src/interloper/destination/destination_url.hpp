// The grammar of destination URLs, in one place. open_destination opens what it parses; the
// pipeline loader parses the same way, resolves a relative path against the pipeline's folder and
// reports a malformed URL at its line and column in the file.
//
// The URL itself is read by the one locator grammar (locator.hpp); this adds what destinations
// accept of it.
//
//   DestinationUrl url = parse_destination_url("file:out?format=csv");
//   // url.scheme == DestinationUrl::Scheme::file, url.path == "out", url.query == "format=csv"
//   url.with_path("/data/out");  // "file:///data/out?format=csv"
//
// Accepted forms (docs/destinations.md): memory://; sqlite: and file: followed by a path, as
// "scheme:///abs", "scheme://./rel", "scheme://../rel" or "scheme:rel" (anything else after "//"
// would be a host, which local destinations do not have); file: takes ?format=jsonl|csv;
// s3://bucket/prefix?... (S3Destination::parse_url); postgresql:// and postgres:// (checked when
// the destination connects).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "interloper/destination.hpp"

namespace interloper {

struct DestinationUrl {
  enum class Scheme { memory, sqlite, file, s3, postgresql };

  Scheme scheme = Scheme::memory;
  Locator locator;    // the URL, parsed (printed only as locator.redacted())
  std::string path;   // sqlite, file: the path as written, relative or absolute
  std::string query;  // sqlite, file: the query as written, without '?' ("" when none)
  FileDestination::Format format = FileDestination::Format::jsonl;  // file
  std::optional<S3Destination::Options> s3;                         // s3

  // sqlite, file: this URL naming `path` instead ("scheme://" + path, then "?" + query if any).
  std::string with_path(const std::string& path) const;
};

// Parses `url`. Throws DestinationError naming the URL (its password as ***) and what is wrong:
// no scheme, an unknown scheme, a host where a path belongs, no path, an unknown parameter or
// format, or an S3 URL that S3Destination::parse_url refuses. Thread-safe.
DestinationUrl parse_destination_url(std::string_view url);
DestinationUrl parse_destination_url(const Locator& url);

}  // namespace interloper
