// Fuzz target: destination URLs.
// Invariants: a URL either parses or is refused with a DestinationError; a refusal never shows
// the password of a "scheme://user:password@" URL; a local URL moved to an absolute path parses
// back to the same scheme, query and format with that path.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "interloper/destination/destination_url.hpp"
#include "interloper/interloper.hpp"

namespace {

// The password of "scheme://user:password@host...", when the URL has one that appears nowhere
// else in it and is long enough not to show up by chance.
std::string_view password_of(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return {};
  // The authority ends at the path, query or fragment; the user info ends at its last '@'.
  const std::string_view authority =
      url.substr(scheme_end + 3, url.find_first_of("/?#", scheme_end + 3) - scheme_end - 3);
  const auto at = authority.rfind('@');
  const auto colon = authority.find(':');
  if (at == std::string_view::npos || colon == std::string_view::npos || colon > at) return {};
  const std::string_view password = authority.substr(colon + 1, at - colon - 1);
  if (password.size() < 6 || url.find(password) != url.rfind(password)) return {};
  return password;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  il::DestinationUrl url;
  try {
    url = il::parse_destination_url(text);
  } catch (const il::DestinationError& e) {
    const std::string_view password = password_of(text);
    if (!password.empty() && std::string_view(e.what()).find(password) != std::string_view::npos) {
      std::abort();
    }
    return 0;
  }
  using Scheme = il::DestinationUrl::Scheme;
  if (url.scheme != Scheme::sqlite && url.scheme != Scheme::file) return 0;
  const il::DestinationUrl moved = il::parse_destination_url(url.with_path("/data/moved"));
  if (moved.scheme != url.scheme || moved.path != "/data/moved" || moved.query != url.query ||
      moved.format != url.format) {
    std::abort();
  }
  return 0;
}
