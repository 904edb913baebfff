// Where a destination, a store or a queue lives, as one value: every URL the library is given is
// parsed once into a Locator, printed only redacted, and opened from that value
// (open_destination, open_store, queue::Queue).
//
//   Locator at = parse_locator("postgresql://me:s3cret@db:5432/ops?schema=queue");
//   at.scheme == "postgresql"; at.user == "me"; at.host == "db:5432"; at.path == "ops";
//   at.option("schema") == "queue"; at.redacted() == "postgresql://me:***@db:5432/ops?schema=queue"
//   at.password() == "s3cret"   // kept apart: never in redacted(), errors or logs
//
// The grammar:
//   - no scheme (no "name:" before any '/'): a bare path, `scheme` empty (stores take one);
//   - memory: or memory:// and nothing else;
//   - local schemes, sqlite: and file:, take a path: "scheme:///abs", "scheme://./rel",
//     "scheme://../rel" or "scheme:rel" (anything else after "//" would be a host);
//   - every other scheme (postgresql, postgres, s3, and schemes the library does not open) has an
//     authority: "scheme://[user[:password]@]host[:port][/path]"; the user-info ends at the last
//     '@' before the first '/' or '?', as libpq reads it.
//   The query ("?a=1&b=2") is kept as written (`query`) and as items (`options`, values not
//   decoded); an item without '=' is an error.
// Which schemes and options a consumer accepts is its own business: open_destination and
// open_store say so in their errors, naming the URL redacted.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interloper/error.hpp"

namespace interloper {

class Locator {
 public:
  std::string scheme;  // lower-case as written; "" for a bare path
  std::string user;    // from the user-info ("" when none)
  std::string host;    // the authority after the user-info (host[:port], an S3 bucket)
  std::string path;    // local schemes and bare paths: the path as written; others: after host/
  std::string query;   // as written, without '?'
  std::vector<std::pair<std::string, std::string>> options;  // the query's items, in order

  // The URL as given with its password replaced by ***: the only way a Locator is printed.
  const std::string& redacted() const { return redacted_; }
  // The password of the user-info ("" when none), for the code that connects.
  const std::string& password() const { return password_; }
  // The URL as given, password included: for the library that connects (libpq), never printed.
  const std::string& secret_text() const { return text_; }

  // The value of option `name`, or `fallback` when absent.
  std::string option(std::string_view name, std::string_view fallback = "") const;
  // Whether the scheme is one whose part after "scheme:" is a local path.
  bool is_local() const { return scheme == "sqlite" || scheme == "file"; }
  bool is_postgres() const { return scheme == "postgresql" || scheme == "postgres"; }

 private:
  friend Locator parse_locator(std::string_view text);
  std::string text_;
  std::string redacted_;
  std::string password_;
};

// Parses `text` by the grammar above. Throws DestinationError "URL 'REDACTED': WHAT" for an
// empty text, a host where a local scheme needs a path, a local scheme without a path, memory
// with anything after it, or a query item without '='.
Locator parse_locator(std::string_view text);

// `url` with the password of its user-info replaced by ***.
std::string redact(std::string_view url);
// `message` with every spelling of the password of `url`'s user-info (raw and percent-decoded,
// as either reading of the user-info finds it) replaced by ***: for errors that quote parts of a
// URL of any scheme.
std::string hide_password(std::string message, std::string_view url);

// `text` with every spelling of `password` (raw and percent-decoded) replaced by ***.
std::string scrub_password(std::string text, const std::string& password);

}  // namespace interloper
