// The S3 client's text: percent-encoding, digests, and the little XML S3 answers in.
#include "interloper/s3/text.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <cctype>
#include <cstring>

#include "interloper/error.hpp"
#include "interloper/s3/client.hpp"

namespace interloper::detail {

namespace s3_text {

std::string hex(const unsigned char* bytes, unsigned size) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (unsigned i = 0; i < size; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

std::string base64(const unsigned char* bytes, unsigned size) {
  std::string out(4 * ((size + 2) / 3) + 1, '\0');
  int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes, static_cast<int>(size));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string md5_base64(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_md5(), nullptr) != 1) {
    throw DestinationError("s3: MD5 is not available");
  }
  return base64(digest, size);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return std::string(text);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace s3_text

std::string s3_uri_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    int hi = -1, lo = -1;
    if (text[i] == '%' && i + 2 < text.size()) {
      hi = s3_text::hex_value(text[i + 1]);
      lo = s3_text::hex_value(text[i + 2]);
    }
    if (hi >= 0 && lo >= 0) {
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += plus_is_space && text[i] == '+' ? ' ' : text[i];
    }
  }
  return out;
}

namespace s3_text {

std::string xml_unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    std::size_t semi = text.find(';', i);
    if (semi == std::string_view::npos) {
      out += text[i];
      continue;
    }
    std::string_view entity = text.substr(i + 1, semi - i - 1);
    if (entity == "amp") {
      out += '&';
    } else if (entity == "lt") {
      out += '<';
    } else if (entity == "gt") {
      out += '>';
    } else if (entity == "quot") {
      out += '"';
    } else if (entity == "apos") {
      out += '\'';
    } else if (entity.size() > 1 && entity[0] == '#') {
      unsigned long code = entity[1] == 'x'
                               ? std::strtoul(std::string(entity.substr(2)).c_str(), nullptr, 16)
                               : std::strtoul(std::string(entity.substr(1)).c_str(), nullptr, 10);
      if (code < 0x80) out += static_cast<char>(code);
    } else {
      out.append(text.substr(i, semi - i + 1));
    }
    i = semi;
  }
  return out;
}

// The text of every <tag>...</tag> element in `xml`, in order (flat: S3's answers nest little).
std::vector<std::string_view> elements(std::string_view xml, std::string_view tag) {
  std::vector<std::string_view> out;
  const std::string open = fmt::format("<{}>", tag), close = fmt::format("</{}>", tag);
  std::size_t at = 0;
  while ((at = xml.find(open, at)) != std::string_view::npos) {
    std::size_t start = at + open.size();
    std::size_t end = xml.find(close, start);
    if (end == std::string_view::npos) break;
    out.push_back(xml.substr(start, end - start));
    at = end + close.size();
  }
  return out;
}

std::string element(std::string_view xml, std::string_view tag) {
  auto found = elements(xml, tag);
  return found.empty() ? std::string() : xml_unescape(found.front());
}

std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace s3_text

std::string s3_uri_encode(std::string_view text, bool keep_slash) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~' ||
        (keep_slash && c == '/')) {
      out += c;
    } else {
      out += '%';
      out += digits[u >> 4];
      out += digits[u & 15];
    }
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    throw DestinationError("s3: SHA-256 is not available");
  }
  return s3_text::hex(digest, size);
}

}  // namespace interloper::detail
