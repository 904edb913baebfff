// S3Client: construction, URLs, and the transport: signed requests, retries, and failures.
#include "interloper/s3/client.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "interloper/error.hpp"
#include "interloper/s3/client_internal.hpp"
#include "interloper/s3/text.hpp"

namespace interloper::detail {

using s3_text::element;
using s3_text::lower;
using s3_text::trim;

namespace {

const std::string empty_sha256 = sha256_hex("");

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
};

std::size_t collect_body(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

}  // namespace

S3Credentials S3Credentials::from_environment() {
  auto get = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
  };
  S3Credentials out{get("AWS_ACCESS_KEY_ID"), get("AWS_SECRET_ACCESS_KEY"),
                    get("AWS_SESSION_TOKEN")};
  if (out.access_key_id.empty() || out.secret_access_key.empty()) {
    throw DestinationError(fmt::format(
        "s3 destination: no credentials: set {} (and AWS_SESSION_TOKEN for temporary ones)",
        out.access_key_id.empty() ? "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                                  : "AWS_SECRET_ACCESS_KEY"));
  }
  return out;
}

struct S3Client::Pool {
  std::mutex mutex;
  std::vector<CURL*> idle;
  ~Pool() {
    for (CURL* handle : idle) curl_easy_cleanup(handle);
  }
  CURL* acquire() {
    {
      std::lock_guard lock(mutex);
      if (!idle.empty()) {
        CURL* handle = idle.back();
        idle.pop_back();
        curl_easy_reset(handle);
        return handle;
      }
    }
    static CurlGlobal global;
    CURL* handle = curl_easy_init();
    if (!handle) throw DestinationError("s3: cannot start a curl session");
    return handle;
  }
  void release(CURL* handle) {
    std::lock_guard lock(mutex);
    idle.push_back(handle);
  }
};

S3Client::S3Client(S3Location location, S3Credentials credentials, S3RetryPolicy retry)
    : location_(std::move(location)),
      credentials_(std::move(credentials)),
      retry_(retry),
      pool_(std::make_unique<Pool>()) {
  host_ = location_.endpoint.empty() ? fmt::format("https://s3.{}.amazonaws.com", location_.region)
                                     : location_.endpoint;
  while (!host_.empty() && host_.back() == '/') host_.pop_back();
}

S3Client::~S3Client() = default;

std::string S3Client::describe() const {
  return fmt::format("s3://{} at {}", location_.bucket, host_);
}

std::string S3Client::url_for(const Request& request) const {
  std::string url;
  if (location_.path_style) {
    url = fmt::format("{}/{}", host_, location_.bucket);
  } else {
    auto scheme_end = host_.find("://");
    std::size_t host_start = scheme_end == std::string::npos ? 0 : scheme_end + 3;
    url = host_.substr(0, host_start) + location_.bucket + "." + host_.substr(host_start);
  }
  if (!request.key.empty() || !location_.path_style) url += '/';
  url += s3_uri_encode(request.key, true);
  // SigV4 signs the query as sorted, encoded name=value pairs; send it exactly so.
  auto query = request.query;
  for (auto& [name, value] : query) {
    name = s3_uri_encode(name, false);
    value = s3_uri_encode(value, false);
  }
  std::sort(query.begin(), query.end());
  for (std::size_t i = 0; i < query.size(); ++i) {
    url += i == 0 ? '?' : '&';
    url += query[i].first + "=" + query[i].second;
  }
  return url;
}

namespace {

// A request's header lines, freed with it.
class HeaderLines {
 public:
  HeaderLines() = default;
  HeaderLines(const HeaderLines&) = delete;
  HeaderLines& operator=(const HeaderLines&) = delete;
  ~HeaderLines() { curl_slist_free_all(list_); }

  void add(const std::string& line) {
    curl_slist* next = curl_slist_append(list_, line.c_str());
    if (!next) throw DestinationError("s3: out of memory");
    list_ = next;
  }
  curl_slist* get() const { return list_; }

 private:
  curl_slist* list_ = nullptr;
};

// The request's method, and its body sent under it as "post fields" (without a copy).
void set_method(CURL* handle, const S3Client::Request& request) {
  if (std::strcmp(request.method, "HEAD") == 0) {
    curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
  } else if (std::strcmp(request.method, "GET") != 0) {
    curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, request.method);
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.empty() ? "" : request.body.data());
    curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
}

// One header line of a response into `out` (a Response).
std::size_t collect_header(char* data, std::size_t size, std::size_t count, void* out) {
  std::string_view line(data, size * count);
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return size * count;
  auto& response = *static_cast<S3Client::Response*>(out);
  auto& header = response.headers.emplace_back(lower(trim(line.substr(0, colon))),
                                               trim(line.substr(colon + 1)));
  // Room for the whole body at once rather than growing it chunk by chunk (within reason: the
  // header is the server's word, and a HEAD response has no body).
  if (header.first == "content-length") {
    constexpr unsigned long long most = 256ULL << 20;
    response.body.reserve(std::min(most, std::strtoull(header.second.c_str(), nullptr, 10)));
  }
  return size * count;
}

}  // namespace

S3Client::Response S3Client::perform_once(const Request& request, std::string& transport_error) {
  struct Lease {
    Pool& pool;
    CURL* handle;
    ~Lease() { pool.release(handle); }
  } lease{*pool_, pool_->acquire()};
  CURL* handle = lease.handle;
  HeaderLines headers;
  headers.add("x-amz-content-sha256: " +
              (request.body.empty() ? empty_sha256 : sha256_hex(request.body)));
  if (!credentials_.session_token.empty()) {
    headers.add("x-amz-security-token: " + credentials_.session_token);
  }
  headers.add("Content-Type: application/octet-stream");
  for (const auto& line : request.headers) headers.add(line);

  const std::string url = url_for(request);
  const std::string sigv4 = fmt::format("aws:amz:{}:s3", location_.region);
  const std::string user = credentials_.access_key_id + ":" + credentials_.secret_access_key;
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_AWS_SIGV4, sigv4.c_str());
  curl_easy_setopt(handle, CURLOPT_USERPWD, user.c_str());
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, retry_.connect_timeout_ms);
  curl_easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, retry_.stall_seconds);
  set_method(handle, request);
  Response response;
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, collect_body);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &response);

  CURLcode code = curl_easy_perform(handle);
  if (code != CURLE_OK) {
    transport_error = curl_easy_strerror(code);
    response.status = 0;
    return response;
  }
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

S3Client::Response S3Client::perform(const Request& request) {
  std::chrono::milliseconds delay = retry_.first_delay;
  std::string transport_error;
  for (int attempt = 1;; ++attempt) {
    transport_error.clear();
    Response response = perform_once(request, transport_error);
    const bool retry = response.status == 0 || response.status >= 500;
    if (!retry) return response;
    if (attempt >= retry_.attempts) {
      if (response.status == 0) {
        throw DestinationError(fmt::format(
            "s3 destination: cannot reach {} ({} {} '{}'): {} (after {} attempts)", describe(),
            request.method, location_.bucket, request.key, transport_error, attempt));
      }
      try {
        fail(request, response);
      } catch (const DestinationError& e) {
        throw DestinationError(fmt::format("{} (after {} attempts)", e.what(), attempt));
      }
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, retry_.max_delay);
  }
}

void S3Client::fail(const Request& request, const Response& response) const {
  std::string code = element(response.body, "Code");
  std::string message = element(response.body, "Message");
  std::string what =
      fmt::format("{} '{}'", request.method, request.key.empty() ? location_.bucket : request.key);
  std::string detail = code.empty() ? fmt::format("HTTP {}", response.status)
                                    : fmt::format("HTTP {} {}: {}", response.status, code, message);
  if (response.status == 403) {
    throw DestinationError(
        fmt::format("s3 destination: access denied by {} ({}): {}; check AWS_ACCESS_KEY_ID, "
                    "AWS_SECRET_ACCESS_KEY and the region",
                    describe(), what, detail));
  }
  if (code == "NoSuchBucket") {
    throw DestinationError(
        fmt::format("s3 destination: bucket '{}' does not exist at {}", location_.bucket, host_));
  }
  throw DestinationError(
      fmt::format("s3 destination: {} failed on {}: {}", what, describe(), detail));
}

}  // namespace interloper::detail
