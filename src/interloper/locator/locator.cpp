// The one URL grammar: locators, and the redaction of the passwords URLs carry.
#include "interloper/locator.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>

namespace interloper {

namespace {

// The password's raw and percent-decoded spellings, both of which a library may echo.
std::vector<std::string> spellings(const std::string& password) {
  std::vector<std::string> out;
  if (password.empty()) return out;
  out.push_back(password);
  std::string decoded;
  for (std::size_t i = 0; i < password.size(); ++i) {
    if (password[i] == '%' && i + 2 < password.size()) {
      decoded += static_cast<char>(std::strtol(password.substr(i + 1, 2).c_str(), nullptr, 16));
      i += 2;
    } else {
      decoded += password[i];
    }
  }
  if (decoded != password) out.push_back(decoded);
  return out;
}

// Where the user-info part of `url` ends ('@'), or npos; `start` is after "://". The authority
// ends at the first of `ends`: libpq's reading by default.
std::size_t userinfo_end(std::string_view url, std::size_t start, const char* ends = "/?") {
  std::size_t authority_end = url.find_first_of(ends, start);
  std::string_view authority = url.substr(start, authority_end - start);
  auto at = authority.rfind('@');
  return at == std::string_view::npos ? std::string_view::npos : start + at;
}

// The length of the scheme of `text` (letters, digits, '+', '-' and '.' before a ':', starting
// with a letter), or 0 when it has none.
std::size_t scheme_length(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      std::isalpha(static_cast<unsigned char>(text[0])) == 0) {
    return 0;
  }
  for (std::size_t i = 0; i < colon; ++i) {
    const char c = text[i];
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '+' && c != '-' && c != '.') {
      return 0;
    }
  }
  return colon;
}

}  // namespace

std::string scrub_password(std::string text, const std::string& password) {
  for (const std::string& secret : spellings(password)) {
    for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 3)) {
      text.replace(at, secret.size(), "***");
    }
  }
  return text;
}

std::string redact(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  std::size_t start = scheme_end + 3;
  std::size_t at = userinfo_end(url, start);
  if (at == std::string_view::npos) return std::string(url);
  auto colon = url.substr(start, at - start).find(':');
  if (colon == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, start + colon + 1)) + "***" + std::string(url.substr(at));
}

std::string hide_password(std::string message, std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return message;
  const std::size_t start = scheme_end + 3;
  // libpq reads the user-info up to the last '@' before a '/' or '?'; a URL parser that follows
  // RFC 3986 also stops at a '#'. Whatever the part quoted in `message` was cut by, neither
  // reading's password shows.
  for (const char* ends : {"/?", "/?#"}) {
    const std::size_t at = userinfo_end(url, start, ends);
    if (at == std::string_view::npos) continue;
    const std::string_view info = url.substr(start, at - start);
    const auto colon = info.find(':');
    if (colon == std::string_view::npos || colon + 1 == info.size()) continue;
    message = scrub_password(std::move(message), std::string(info.substr(colon + 1)));
  }
  return message;
}

std::string Locator::option(std::string_view name, std::string_view fallback) const {
  for (const auto& [key, value] : options) {
    if (key == name) return value;
  }
  return std::string(fallback);
}

Locator parse_locator(std::string_view text) {
  Locator out;
  out.text_ = std::string(text);
  out.redacted_ = redact(text);
  auto fail = [&](std::string_view why) {
    throw DestinationError(
        hide_password(fmt::format("URL '{}': {}", out.redacted_, why), text));
  };
  if (text.empty()) fail("empty");
  const std::size_t scheme = scheme_length(text);
  if (scheme == 0) {
    out.path = std::string(text);  // a bare path: no query either
    return out;
  }
  for (std::size_t i = 0; i < scheme; ++i) {
    out.scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  std::string_view rest = text.substr(scheme + 1);
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    out.query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  const bool authority = rest.substr(0, 2) == "//";
  if (authority) rest.remove_prefix(2);
  if (out.is_local() || out.scheme == "memory") {
    // A path; what stands after "//" without a '/' or '.' would be a host, kept for the message.
    if (authority && !rest.empty() && rest[0] != '/' && rest[0] != '.') {
      out.host = std::string(rest.substr(0, rest.find('/')));
      const std::size_t slash = rest.find('/');
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    }
    out.path = std::string(rest);
  } else {
    std::string_view auth = rest.substr(0, rest.find('/'));
    rest.remove_prefix(auth.size());
    if (auto at = auth.rfind('@'); at != std::string_view::npos) {
      std::string_view info = auth.substr(0, at);
      auth.remove_prefix(at + 1);
      const auto colon = info.find(':');
      out.user = std::string(info.substr(0, colon));
      if (colon != std::string_view::npos) out.password_ = std::string(info.substr(colon + 1));
    }
    out.host = std::string(auth);
    if (!rest.empty()) rest.remove_prefix(1);
    out.path = std::string(rest);
  }
  std::string_view query = out.query;
  while (!query.empty()) {
    std::string_view item = query.substr(0, query.find('&'));
    query.remove_prefix(std::min(query.size(), item.size() + 1));
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) fail(fmt::format("parameter '{}' has no value", item));
    out.options.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return out;
}

}  // namespace interloper
