// S3Client's object operations: put, get, head, list, remove, and creating the bucket.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "interloper/error.hpp"
#include "interloper/s3/client.hpp"
#include "interloper/s3/client_internal.hpp"
#include "interloper/s3/text.hpp"

namespace interloper::detail {

using s3_text::element;
using s3_text::elements;
using s3_text::md5_base64;
using s3_text::xml_escape;

std::optional<std::string> S3Head::meta(std::string_view name) const {
  for (const auto& [key, value] : metadata) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::string S3Client::put(std::string_view key, std::string_view body, const S3Metadata& metadata) {
  Request request{.method = "PUT", .key = std::string(key), .body = body};
  for (const auto& [name, value] : metadata) {
    request.headers.push_back(fmt::format("x-amz-meta-{}: {}", name, value));
  }
  Response response = perform(request);
  if (response.status != 200) fail(request, response);
  return unquoted(response.header("etag"));
}

std::optional<std::string> S3Client::get(std::string_view key) {
  Request request{.method = "GET", .key = std::string(key)};
  Response response = perform(request);
  if (response.status == 404 && element(response.body, "Code") != "NoSuchBucket") {
    return std::nullopt;
  }
  if (response.status != 200) fail(request, response);
  return std::move(response.body);
}

std::optional<S3Head> S3Client::head(std::string_view key) {
  Request request{.method = "HEAD", .key = std::string(key)};
  Response response = perform(request);
  if (response.status == 404) {
    // HEAD answers carry no body: ask the bucket whether it is the bucket that is missing.
    Request bucket{.method = "HEAD"};
    Response answer = perform(bucket);
    if (answer.status == 404) {
      throw DestinationError(
          fmt::format("s3 destination: bucket '{}' does not exist at {}", location_.bucket, host_));
    }
    return std::nullopt;
  }
  if (response.status != 200) fail(request, response);
  S3Head out;
  out.size = std::atoll(response.header("content-length").c_str());
  for (const auto& [name, value] : response.headers) {
    if (name.rfind("x-amz-meta-", 0) == 0) out.metadata.emplace_back(name.substr(11), value);
  }
  return out;
}

std::vector<S3ObjectInfo> S3Client::list(std::string_view prefix) {
  std::vector<S3ObjectInfo> out;
  std::string token;
  for (;;) {
    Request request{.method = "GET"};
    request.query = {{"list-type", "2"}, {"prefix", std::string(prefix)}, {"encoding-type", "url"}};
    if (!token.empty()) request.query.emplace_back("continuation-token", token);
    Response response = perform(request);
    if (response.status != 200) fail(request, response);
    for (std::string_view contents : elements(response.body, "Contents")) {
      S3ObjectInfo info;
      info.key = s3_uri_decode(element(contents, "Key"), true);
      info.size = std::atoll(element(contents, "Size").c_str());
      info.etag = unquoted(element(contents, "ETag"));
      out.push_back(std::move(info));
    }
    if (element(response.body, "IsTruncated") != "true") break;
    token = element(response.body, "NextContinuationToken");
    if (token.empty()) break;
  }
  std::sort(out.begin(), out.end(),
            [](const S3ObjectInfo& a, const S3ObjectInfo& b) { return a.key < b.key; });
  return out;
}

void S3Client::remove(const std::vector<std::string>& keys) {
  for (std::size_t from = 0; from < keys.size(); from += 1000) {
    std::string body = "<Delete><Quiet>true</Quiet>";
    for (std::size_t i = from; i < std::min(keys.size(), from + 1000); ++i) {
      body += "<Object><Key>" + xml_escape(keys[i]) + "</Key></Object>";
    }
    body += "</Delete>";
    Request request{.method = "POST", .query = {{"delete", ""}}, .body = body};
    request.headers.push_back("Content-MD5: " + md5_base64(body));
    Response response = perform(request);
    if (response.status != 200) fail(request, response);
    auto errors = elements(response.body, "Error");
    if (!errors.empty()) {
      throw DestinationError(fmt::format("s3 destination: cannot delete '{}' from {}: {}",
                                         element(errors.front(), "Key"), describe(),
                                         element(errors.front(), "Message")));
    }
  }
}

void S3Client::create_bucket() {
  Request request{.method = "PUT"};
  std::string body;
  if (location_.region != "us-east-1") {
    body = fmt::format(
        "<CreateBucketConfiguration><LocationConstraint>{}</LocationConstraint>"
        "</CreateBucketConfiguration>",
        xml_escape(location_.region));
    request.body = body;
  }
  Response response = perform(request);
  if (response.status == 200) return;
  std::string code = element(response.body, "Code");
  if (code == "BucketAlreadyOwnedByYou") return;
  fail(request, response);
}

}  // namespace interloper::detail
