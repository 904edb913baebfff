// The S3 servers the tests run against: scripts/with-moto starts moto_server on loopback twice
// and exports IL_TEST_S3_ENDPOINT (any credentials) and IL_TEST_S3_STRICT_ENDPOINT (signatures
// checked, plain keys only) with the keys of the user the strict one knows. Without it the S3 tests
// skip with a message, except under CI=true, where a missing server is a failure.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <optional>
#include <random>
#include <string>

#include "interloper/destination.hpp"

namespace interloper::testing {

struct S3Server {
  std::string endpoint;
  std::string strict_endpoint;
  std::string access_key_id;
  std::string secret_access_key;
  std::string python;  // an interpreter that imports boto3
};

inline std::optional<S3Server> s3_server() {
  const char* endpoint = std::getenv("IL_TEST_S3_ENDPOINT");
  if (endpoint == nullptr || *endpoint == '\0') return std::nullopt;
  auto get = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value ? value : "");
  };
  return S3Server{endpoint, get("IL_TEST_S3_STRICT_ENDPOINT"), get("IL_TEST_S3_ACCESS_KEY_ID"),
                  get("IL_TEST_S3_SECRET_ACCESS_KEY"), get("IL_TEST_S3_PYTHON")};
}

inline bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

// Points the AWS_* variables at the test server's user.
inline void use_test_credentials(const S3Server& server) {
  ::setenv("AWS_ACCESS_KEY_ID", server.access_key_id.c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", server.secret_access_key.c_str(), 1);
  ::unsetenv("AWS_SESSION_TOKEN");
}

// A prefix no other test uses, so tests share one bucket without seeing each other's objects.
inline std::string fresh_prefix(std::string_view name) {
  static std::atomic<int> counter{0};
  std::random_device device;
  return std::string(name) + "-" + std::to_string(device()) + "-" + std::to_string(++counter);
}

// An S3 destination on the test server (the strict one when `strict`), in bucket
// "interloper-test" (created if needed) under a fresh prefix.
inline std::shared_ptr<S3Destination> test_s3_destination(
    const S3Server& server, std::string_view name,
    FileDestination::Format format = FileDestination::Format::jsonl, bool strict = false,
    std::size_t part_size = std::size_t{64} << 20) {
  use_test_credentials(server);
  S3Destination::Options options;
  options.bucket = "interloper-test";
  options.prefix = fresh_prefix(name);
  options.endpoint = strict ? server.strict_endpoint : server.endpoint;
  options.part_size = part_size;
  options.region = "us-east-1";
  options.format = format;
  auto destination = std::make_shared<S3Destination>(options);
  destination->create_bucket();
  return destination;
}

}  // namespace interloper::testing

// Inside a test (or a function returning void): the server, or a skip (a failure under CI).
#define IL_REQUIRE_S3(server)                                                                  \
  auto server##_found = ::interloper::testing::s3_server();                                    \
  if (!server##_found) {                                                                       \
    if (::interloper::testing::under_ci()) {                                                   \
      FAIL() << "CI=true but IL_TEST_S3_ENDPOINT is unset: scripts/with-moto did not start "   \
                "moto_server";                                                                 \
    }                                                                                          \
    GTEST_SKIP() << "no S3 server: run under scripts/with-moto (needs Python's moto) to test " \
                    "S3";                                                                      \
  }                                                                                            \
  const ::interloper::testing::S3Server& server = *server##_found
