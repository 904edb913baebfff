// A small S3 client over libcurl, signed with libcurl's built-in AWS SigV4.
//
// It speaks the handful of S3 calls a destination needs: PUT/GET/HEAD/DELETE of one object,
// ListObjectsV2, DeleteObjects and multipart uploads. Every request carries the SHA-256 of its
// body (x-amz-content-sha256), its query parameters sorted and encoded the way SigV4 canonicalizes
// them, and a non-form Content-Type, so that the signature libcurl computes matches the server's.
//
// Failures: 5xx answers, timeouts and dropped connections are retried with exponential backoff;
// what remains is a DestinationError that names the bucket, the key and the endpoint, with a
// hint for 403 (credentials), 404 on the bucket (no such bucket) and an unreachable endpoint.
// Credentials never appear in a message.
//
// Thread safety: one S3Client may be used from several threads at once (it keeps a pool of
// curl handles, so connections are reused).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace interloper::detail {

struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // optional

  // From AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN. Throws DestinationError
  // naming the variable that is missing (never a value).
  static S3Credentials from_environment();
};

struct S3Location {
  std::string endpoint;     // "http://127.0.0.1:9000"; empty: https://s3.REGION.amazonaws.com
  std::string region;       // never empty
  std::string bucket;       // never empty
  bool path_style = false;  // ENDPOINT/BUCKET/KEY instead of BUCKET.HOST/KEY
};

struct S3RetryPolicy {
  int attempts = 5;  // tries per request, the first included
  std::chrono::milliseconds first_delay{100};
  std::chrono::milliseconds max_delay{3000};
  long connect_timeout_ms = 5000;
  long stall_seconds = 60;  // a transfer slower than 1 byte/s for this long is a timeout
};

// User metadata (x-amz-meta-NAME: value); names in lower case, values printable ASCII.
using S3Metadata = std::vector<std::pair<std::string, std::string>>;

struct S3ObjectInfo {
  std::string key;
  std::int64_t size = 0;
  std::string etag;  // without its quotes
};

struct S3Head {
  std::int64_t size = 0;
  S3Metadata metadata;
  // The metadata value called `name`, if present.
  std::optional<std::string> meta(std::string_view name) const;
};

class S3Client {
 public:
  S3Client(S3Location location, S3Credentials credentials, S3RetryPolicy retry = {});
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  const S3Location& location() const { return location_; }

  // Replaces the object with `body` (one PUT: readers see the old or the new object). Returns
  // the new object's ETag, without its quotes ("" when the store sends none).
  std::string put(std::string_view key, std::string_view body, const S3Metadata& metadata = {});
  // The object's bytes, or nullopt when there is no such object.
  std::optional<std::string> get(std::string_view key);
  // Size and metadata, or nullopt when there is no such object.
  std::optional<S3Head> head(std::string_view key);
  // Every object whose key starts with `prefix`, in key order (all pages).
  std::vector<S3ObjectInfo> list(std::string_view prefix);
  // Deletes objects (missing ones are not an error), up to 1000 per request.
  void remove(const std::vector<std::string>& keys);

  // Multipart upload: start, add parts numbered 1, 2, ... (each but the last at least 5 MiB),
  // then complete (the object appears at once; its ETag, unquoted, is returned) or abort
  // (nothing appears).
  std::string start_multipart(std::string_view key, const S3Metadata& metadata = {});
  // Returns the part's ETag, to pass to complete_multipart in part order.
  std::string upload_part(std::string_view key, const std::string& upload_id, int number,
                          std::string_view body);
  std::string complete_multipart(std::string_view key, const std::string& upload_id,
                                 const std::vector<std::string>& etags);
  void abort_multipart(std::string_view key, const std::string& upload_id) noexcept;

  // Creates the bucket (an existing bucket of ours is not an error). For tests and set-up.
  void create_bucket();

  // "s3://BUCKET at ENDPOINT", for messages.
  std::string describe() const;

  struct Request;
  struct Response;

 private:
  Response perform(const Request& request);
  Response perform_once(const Request& request, std::string& transport_error);
  std::string url_for(const Request& request) const;
  [[noreturn]] void fail(const Request& request, const Response& response) const;

  struct Pool;
  S3Location location_;
  S3Credentials credentials_;
  S3RetryPolicy retry_;
  std::string host_;  // "scheme://host[:port]" of the endpoint
  std::unique_ptr<Pool> pool_;
};

// Percent-encodes `text` as SigV4 canonicalizes it (unreserved characters stay; '/' stays when
// `keep_slash`).
std::string s3_uri_encode(std::string_view text, bool keep_slash);
// Decodes %XX escapes (and '+' as a space when `plus_is_space`).
std::string s3_uri_decode(std::string_view text, bool plus_is_space = false);
// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::string_view bytes);

}  // namespace interloper::detail
