// Internal to the S3 client: a request, its response, and unquoting the ETags S3 sends back.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interloper/s3/client.hpp"

namespace interloper::detail {

struct S3Client::Request {
  const char* method = "GET";
  std::string key{};  // empty: the bucket itself
  std::vector<std::pair<std::string, std::string>> query{};
  std::vector<std::string> headers{};
  std::string_view body{};
};

struct S3Client::Response {
  long status = 0;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case

  std::string header(std::string_view name) const {
    for (const auto& [key, value] : headers) {
      if (key == name) return value;
    }
    return {};
  }
};

// An ETag without the quotes S3 puts around it.
inline std::string unquoted(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

}  // namespace interloper::detail
