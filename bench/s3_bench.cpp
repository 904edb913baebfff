// S3 throughput: S3Destination writing and reading a 10^6-row, 30-partition window against a
// moto server on loopback, beside a plain libcurl PUT/GET loop sending the same bytes (already
// encoded, one signed request per partition) to the same server in the same run.
//
//   scripts/with-moto build/bench/s3_bench --benchmark_counters_tabular=true
//
// It needs IL_TEST_S3_ENDPOINT (scripts/with-moto sets it) and says so when it is missing.
// After the runs it prints the destination's speed as a fraction of the plain loop's, and the
// read's as a fraction of the plain loop that also decodes what it fetched.
#include <benchmark/benchmark.h>
#include <curl/curl.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>

#include "ratio_reporter.hpp"
#include "interloper/destination.hpp"

namespace il = interloper;
using namespace std::chrono;

namespace {

constexpr std::size_t kRows = 1'000'000;
constexpr unsigned kDays = 30;
constexpr const char* kBucket = "interloper-bench";

const il::TimePartitionConfig kDaily("date", {.allow_window = true});
const il::DatasetRef kDataset{"bench", "events", &kDaily};
const il::TimePartitionWindow kWindow(year{2026} / 1 / 1, year{2026} / 1 / kDays);

std::string endpoint() {
  const char* value = std::getenv("IL_TEST_S3_ENDPOINT");
  return value ? value : "";
}

// 10^6 rows over 30 days, grouped by day (as an asset usually emits them).
const il::Table& rows() {
  static const il::Table table = [] {
    il::Table t(il::Schema({{"date", il::DataType::date},
                            {"campaign", il::DataType::string},
                            {"clicks", il::DataType::int64},
                            {"cost", il::DataType::float64},
                            {"active", il::DataType::boolean}}));
    t.reserve(kRows);
    std::mt19937_64 rng(1);
    for (std::size_t i = 0; i < kRows; ++i) {
      sys_days d = sys_days(year{2026} / 1 / 1) + days(i * kDays / kRows);
      t.append_row({il::Value(d), il::Value(fmt::format("campaign-{}", rng() % 1000)),
                    il::Value(static_cast<long long>(rng() % 100000)),
                    il::Value(static_cast<double>(rng() % 1000000) / 100.0),
                    il::Value(rng() % 2 == 0)});
    }
    return t;
  }();
  return table;
}

// The bytes the destination stores: one JSON-lines body per day.
const std::vector<std::string>& bodies() {
  static const std::vector<std::string> out = [] {
    std::vector<std::string> b;
    for (const il::Table& part : il::split_by_partition(kDataset, kWindow, rows())) {
      b.push_back(il::to_json_lines(part));
    }
    return b;
  }();
  return out;
}

double total_megabytes() {
  std::size_t bytes = 0;
  for (const auto& body : bodies()) bytes += body.size();
  return static_cast<double>(bytes) / 1e6;
}

il::S3Destination& destination() {
  static il::S3Destination* d = [] {
    il::S3Destination::Options options;
    options.bucket = kBucket;
    options.prefix = "destination";
    options.endpoint = endpoint();
    options.region = "us-east-1";
    auto* out = new il::S3Destination(options);
    out->create_bucket();
    return out;
  }();
  return *d;
}

void set_counters(benchmark::State& state) {
  state.counters["MB/s"] =
      benchmark::Counter(total_megabytes(), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(kRows), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_S3WindowWrite(benchmark::State& state) {
  const il::Table& table = rows();
  for (auto _ : state) destination().write(kDataset, &kWindow, table);
  set_counters(state);
}

void BM_S3WindowRead(benchmark::State& state) {
  destination().write(kDataset, &kWindow, rows());
  for (auto _ : state) {
    il::Table back = destination().read(kDataset, &kWindow);
    if (back.num_rows() != kRows) state.SkipWithError("short read");
  }
  set_counters(state);
}

std::size_t collect(char* data, std::size_t size, std::size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// One signed request with libcurl alone: what any S3 client has to do at the least.
void plain_request(CURL* curl, const std::string& url, const std::string* upload,
                   std::string* download) {
  curl_easy_reset(curl);
  curl_slist* headers = curl_slist_append(nullptr, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
  headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
  curl_easy_setopt(curl, CURLOPT_USERPWD, "bench:bench");
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (upload) {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, upload->data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(upload->size()));
  }
  std::string sink;
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, download ? download : &sink);
  CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  if (code != CURLE_OK || status != 200) {
    throw std::runtime_error(
        fmt::format("{}: {} (HTTP {})", url, curl_easy_strerror(code), status));
  }
}

std::string plain_url(unsigned day) {
  return fmt::format("{}/{}/plain/day-{:02}/data.jsonl", endpoint(), kBucket, day);
}

void BM_PlainCurlPut(benchmark::State& state) {
  destination();  // the bucket
  CURL* curl = curl_easy_init();
  for (auto _ : state) {
    for (unsigned d = 0; d < kDays; ++d) plain_request(curl, plain_url(d), &bodies()[d], nullptr);
  }
  curl_easy_cleanup(curl);
  set_counters(state);
}

void BM_PlainCurlGet(benchmark::State& state) {
  CURL* curl = curl_easy_init();
  for (unsigned d = 0; d < kDays; ++d) plain_request(curl, plain_url(d), &bodies()[d], nullptr);
  for (auto _ : state) {
    for (unsigned d = 0; d < kDays; ++d) {
      std::string body;
      plain_request(curl, plain_url(d), nullptr, &body);
      if (body.size() != bodies()[d].size()) state.SkipWithError("short read");
    }
  }
  curl_easy_cleanup(curl);
  set_counters(state);
}

// The plain GET loop, each body then decoded with the data layer's public reader and the pieces
// gathered into one table made room for up front: what reading costs anyone who needs rows
// rather than bytes, and the fairer yardstick for a destination read.
void BM_PlainCurlGetAndDecode(benchmark::State& state) {
  CURL* curl = curl_easy_init();
  for (unsigned d = 0; d < kDays; ++d) plain_request(curl, plain_url(d), &bodies()[d], nullptr);
  const il::Schema& schema = rows().schema();
  for (auto _ : state) {
    il::Table all(schema);
    all.reserve(kRows);
    for (unsigned d = 0; d < kDays; ++d) {
      std::string body;
      plain_request(curl, plain_url(d), nullptr, &body);
      all.append_table(il::parse_json_lines(body, &schema));
    }
    if (all.num_rows() != kRows) state.SkipWithError("short read");
  }
  curl_easy_cleanup(curl);
  set_counters(state);
}

// Each pair runs back to back, the destination before its plain loop, so that both meet the
// server in the same state; five iterations each, since a 2-core machine is noisy.
BENCHMARK(BM_S3WindowWrite)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
BENCHMARK(BM_PlainCurlPut)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
BENCHMARK(BM_S3WindowRead)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
BENCHMARK(BM_PlainCurlGet)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
BENCHMARK(BM_PlainCurlGetAndDecode)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();


}  // namespace

int main(int argc, char** argv) {
  if (endpoint().empty()) {
    std::cerr << "s3_bench: IL_TEST_S3_ENDPOINT is unset; run it as "
                 "scripts/with-moto build/bench/s3_bench\n";
    return 2;
  }
  // moto's default server takes any credentials.
  ::setenv("AWS_ACCESS_KEY_ID", "bench", 0);
  ::setenv("AWS_SECRET_ACCESS_KEY", "bench", 0);
  benchmark::Initialize(&argc, argv);
  destination();  // the bucket, made before anything is timed
  rows();
  bodies();
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto ratio = [&](const char* ours, const char* plain, const char* target) {
    auto a = reporter.times.find(std::string(ours) + "/iterations:5/real_time");
    auto b = reporter.times.find(std::string(plain) + "/iterations:5/real_time");
    if (a == reporter.times.end() || b == reporter.times.end()) return;
    std::cout << fmt::format("{} runs at {:.2f} of {} ({:.1f} MB{})\n", ours, b->second / a->second,
                             plain, total_megabytes(), target);
  };
  ratio("BM_S3WindowWrite", "BM_PlainCurlPut", ", target >= 0.80");
  ratio("BM_S3WindowRead", "BM_PlainCurlGet", ", target >= 0.80");
  ratio("BM_S3WindowRead", "BM_PlainCurlGetAndDecode", "");
  ratio("BM_PlainCurlGetAndDecode", "BM_PlainCurlGet", "");
  benchmark::Shutdown();
  return 0;
}
