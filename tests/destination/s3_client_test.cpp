// S3Client's retries, against a loopback HTTP server that answers 5xx on purpose (no S3 server
// fails on demand), and its encoding helpers.
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <thread>

#include "interloper/error.hpp"
#include "interloper/s3/client.hpp"

namespace interloper::detail {
namespace {

// A server on a free loopback port, stopped on destruction.
class FlakyServer {
 public:
  explicit FlakyServer(int failures) : failures_(failures) {
    server_.Get(R"(/bucket/(.*))", [this](const httplib::Request&, httplib::Response& res) {
      if (hits_++ < failures_) {
        res.status = 503;
        res.set_content("<Error><Code>SlowDown</Code><Message>Reduce your rate</Message></Error>",
                        "application/xml");
        return;
      }
      res.set_content("hello", "application/octet-stream");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    // Bound and listening already: requests queue until the thread accepts them.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FlakyServer() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int hits() const { return hits_; }

 private:
  int failures_;
  std::atomic<int> hits_{0};
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

S3Client client_for(const std::string& endpoint, int attempts) {
  S3RetryPolicy retry;
  retry.attempts = attempts;
  retry.first_delay = std::chrono::milliseconds(5);
  return S3Client(S3Location{endpoint, "us-east-1", "bucket", true},
                  S3Credentials{"AKIDEXAMPLE", "secret-example", ""}, retry);
}

TEST(S3Client, RetriesServerErrorsWithBackoff) {
  FlakyServer server(2);
  S3Client client = client_for(server.endpoint(), 4);
  EXPECT_EQ(client.get("a/b.jsonl"), std::optional<std::string>("hello"));
  EXPECT_EQ(server.hits(), 3);
}

TEST(S3Client, GivesUpAfterItsAttemptsNamingTheAnswer) {
  FlakyServer server(100);
  S3Client client = client_for(server.endpoint(), 3);
  try {
    client.get("a/b.jsonl");
    FAIL() << "expected DestinationError";
  } catch (const DestinationError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("HTTP 503 SlowDown"), std::string::npos) << message;
    EXPECT_NE(message.find("after 3 attempts"), std::string::npos) << message;
    EXPECT_EQ(message.find("secret-example"), std::string::npos) << message;
  }
  EXPECT_EQ(server.hits(), 3);
}

TEST(S3Client, EncodesAsSigV4Canonicalizes) {
  EXPECT_EQ(s3_uri_encode("a/b=c d~_.-%", true), "a/b%3Dc%20d~_.-%25");
  EXPECT_EQ(s3_uri_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(s3_uri_decode("a%2Fb%3D+c", true), "a/b= c");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

}  // namespace
}  // namespace interloper::detail
