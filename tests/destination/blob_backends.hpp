// The BlobStore backends the blob tests run on: local files (in a temporary directory), memory,
// and S3 (moto, under scripts/with-moto; each store under a fresh prefix of the test bucket).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "destination/s3_fixtures.hpp"
#include "interloper/blob/stores.hpp"
#include "support/temp_dir.hpp"

namespace interloper::testing {

// Fresh, empty stores of one backend; they live as long as the Backend.
class BlobBackend {
 public:
  explicit BlobBackend(std::string kind) : kind_(std::move(kind)) {}

  // False (with the reason in `why`) when the backend cannot run here.
  bool available(std::string& why) {
    if (kind_ != "s3") return true;
    auto server = s3_server();
    if (server) {
      use_test_credentials(*server);
      client_ = std::make_shared<detail::S3Client>(
          detail::S3Location{server->endpoint, "us-east-1", "interloper-test", true},
          detail::S3Credentials::from_environment());
      client_->create_bucket();
      return true;
    }
    why = under_ci() ? "CI=true but IL_TEST_S3_ENDPOINT is unset"
                     : "no S3 server: run under scripts/with-moto to test S3";
    return false;
  }

  std::unique_ptr<blob::BlobStore> fresh() {
    ++count_;
    if (kind_ == "memory") return blob::memory_store();
    if (kind_ == "local") return blob::local_store(dir_.path() / ("s" + std::to_string(count_)));
    return blob::s3_store(client_, fresh_prefix("blobs") + "/", kPartSize);
  }

  const std::string& kind() const { return kind_; }
  const std::filesystem::path& dir() const { return dir_.path(); }

  static constexpr std::size_t kPartSize = std::size_t{5} << 20;

 private:
  std::string kind_;
  TempDir dir_{"il-blobs"};
  std::shared_ptr<detail::S3Client> client_;
  int count_ = 0;
};

inline std::vector<std::string> blob_backends() { return {"local", "memory", "s3"}; }

}  // namespace interloper::testing

// Inside a test: the backend `backend` of the test's parameter, or a skip (a failure under CI).
#define IL_BLOB_BACKEND(backend)                          \
  ::interloper::testing::BlobBackend backend(GetParam()); \
  if (std::string why; !backend.available(why)) {         \
    if (::interloper::testing::under_ci()) FAIL() << why; \
    GTEST_SKIP() << why;                                  \
  }
