// S3Destination: an object destination over the S3 blob store, one object per partition under
// PREFIX/SOURCE/ASSET/COLUMN=KEY/ (the layout is object_core.hpp's). Objects carry their row
// count in metadata ("rows"), and, when the key is too long for its escaped form, the key
// itself ("partition-key", percent-encoded), so counting and listing never download data.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include "interloper/blob/stores.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/object_core.hpp"
#include "interloper/destination/url_query.hpp"
#include "interloper/s3/client.hpp"

namespace interloper {

namespace {

constexpr std::size_t min_part_size = std::size_t{5} << 20;

bool parse_flag(std::string_view url, std::string_view name, std::string_view value) {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  throw DestinationError(
      fmt::format("destination URL '{}': {} must be 0 or 1, not '{}'", url, name, value));
}

std::string percent_decode(std::string_view url, std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    auto digit = [](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    int hi = i + 2 < text.size() ? digit(text[i + 1]) : -1;
    int lo = hi >= 0 ? digit(text[i + 2]) : -1;
    if (lo < 0) {
      throw DestinationError(fmt::format("destination URL '{}': bad escape in '{}'", url, text));
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

// Bucket names as S3 allows them: 3 to 63 lower-case letters, digits, '-' and '.'.
bool valid_bucket(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  return std::all_of(bucket.begin(), bucket.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

void apply_parameter(std::string_view url, S3Destination::Options& options, const std::string& name,
                     const std::string& value) {
  if (name == "endpoint") {
    if (value.rfind("http://", 0) != 0 && value.rfind("https://", 0) != 0) {
      throw DestinationError(fmt::format(
          "destination URL '{}': endpoint '{}' must start with http:// or https://", url, value));
    }
    options.endpoint = value;
  } else if (name == "region") {
    options.region = value;
  } else if (name == "format") {
    if (value == "jsonl") {
      options.format = FileDestination::Format::jsonl;
    } else if (value == "csv") {
      options.format = FileDestination::Format::csv;
    } else {
      throw DestinationError(
          fmt::format("destination URL '{}': unknown format '{}' (jsonl or csv)", url, value));
    }
  } else if (name == "path_style") {
    options.path_style = parse_flag(url, name, value);
  } else {
    throw DestinationError(fmt::format(
        "destination URL '{}': unknown parameter '{}' (endpoint, region, format, path_style)", url,
        name));
  }
}

}  // namespace

S3Destination::Options S3Destination::parse_url(std::string_view url) {
  constexpr std::string_view scheme = "s3://";
  if (url.substr(0, scheme.size()) != scheme) {
    throw DestinationError(fmt::format("destination URL '{}' does not start with s3://", url));
  }
  std::string_view rest = url.substr(scheme.size());
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  Options options;
  auto slash = rest.find('/');
  options.bucket = std::string(rest.substr(0, slash));
  if (!valid_bucket(options.bucket)) {
    throw DestinationError(fmt::format(
        "destination URL '{}': '{}' is not a bucket name (3 to 63 of a-z, 0-9, '-', '.')", url,
        options.bucket));
  }
  if (slash != std::string_view::npos) {
    std::string_view prefix = rest.substr(slash + 1);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    options.prefix = percent_decode(url, prefix);
  }
  for (auto& [key, value] : query_parameters(url, query)) {
    apply_parameter(url, options, key, percent_decode(url, value));
  }
  return options;
}

struct S3Destination::State {
  Options options;
  std::shared_ptr<detail::S3Client> client;
};

S3Destination::S3Destination(Options options) : state_(std::make_unique<State>()) {
  if (!valid_bucket(options.bucket)) {
    throw DestinationError(
        fmt::format("s3 destination: '{}' is not a bucket name", options.bucket));
  }
  if (options.part_size < min_part_size) {
    throw DestinationError(
        fmt::format("s3 destination: part size {} is below S3's 5 MiB minimum", options.part_size));
  }
  if (options.region.empty()) {
    const char* region = std::getenv("AWS_REGION");
    options.region = region && *region ? region : "us-east-1";
  }
  detail::S3Location location{options.endpoint, options.region, options.bucket,
                              options.path_style.value_or(!options.endpoint.empty())};
  detail::S3RetryPolicy retry;
  retry.attempts = std::max(1, options.attempts);
  state_->client = std::make_shared<detail::S3Client>(
      location, detail::S3Credentials::from_environment(), retry);
  set_core(std::make_unique<Core>(
      blob::s3_store(state_->client, options.prefix.empty() ? "" : options.prefix + "/",
                     options.part_size),
      options.format, "s3 destination"));
  state_->options = std::move(options);
}

S3Destination::~S3Destination() = default;

std::string S3Destination::url() const {
  const Options& o = state_->options;
  std::string out = "s3://" + o.bucket;
  if (!o.prefix.empty()) out += "/" + detail::s3_uri_encode(o.prefix, true);
  out += "?";
  if (!o.endpoint.empty()) out += "endpoint=" + o.endpoint + "&";
  out += "region=" + o.region;
  out += o.format == FileDestination::Format::csv ? "&format=csv" : "&format=jsonl";
  if (o.path_style) out += *o.path_style ? "&path_style=1" : "&path_style=0";
  return out;
}

void S3Destination::create_bucket() { state_->client->create_bucket(); }

}  // namespace interloper
