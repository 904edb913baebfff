// Partition keys as path components, shared by the file and S3 destinations: reversibly escaped
// ('%XX' for any byte that is not a letter, digit, '_', '-' or a non-leading '.'; "%" for the
// empty key), and a key whose escape would pass 200 characters cut to a readable prefix and a
// hash after '~', which escaping never produces (the key itself is then kept beside the data).
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "interloper/asset.hpp"
#include "interloper/destination.hpp"

namespace interloper {

namespace {

constexpr std::size_t max_component = 200;
constexpr std::size_t kept_prefix = 160;

bool plain(char c, bool first) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || (c == '.' && !first);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string FileDestination::escape_key(std::string_view key) {
  if (key.empty()) return "%";
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(key.size());
  for (std::size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    if (plain(c, i == 0)) {
      out += c;
    } else {
      auto u = static_cast<unsigned char>(c);
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  if (out.size() <= max_component) return out;
  // Too long for one directory name: keep a readable prefix (never cutting an escape) and a
  // hash of the whole key after '~', which escaping never produces; the key itself is kept in
  // the directory's _key file.
  std::size_t cut = 0;
  while (cut < out.size()) {
    std::size_t step = out[cut] == '%' ? 3 : 1;
    if (cut + step > kept_prefix) break;
    cut += step;
  }
  return out.substr(0, cut) + "~" + fingerprint(key);
}

std::string FileDestination::unescape_key(std::string_view component) {
  if (component == "%") return "";
  if (component.find('~') != std::string_view::npos) {
    throw DestinationError(fmt::format(
        "file destination: '{}' names a long key by its hash; the key is in its _key file",
        component));
  }
  std::string out;
  out.reserve(component.size());
  for (std::size_t i = 0; i < component.size(); ++i) {
    char c = component[i];
    if (c != '%') {
      if (!plain(c, i == 0)) {
        throw DestinationError(
            fmt::format("file destination: '{}' is not an escaped key", component));
      }
      out += c;
      continue;
    }
    int hi = i + 2 < component.size() ? hex_digit(component[i + 1]) : -1;
    int lo = hi >= 0 ? hex_digit(component[i + 2]) : -1;
    if (lo < 0) {
      throw DestinationError(
          fmt::format("file destination: '{}' is not an escaped key", component));
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

}  // namespace interloper
