// Crash safety: a child process writes windows in a loop and records each write in the store;
// the parent SIGKILLs it at random moments and checks, after every kill, that each partition
// holds exactly one generation's complete rows and that the store never claims more than the
// destination holds.
//
// The child is this same test binary, re-executed with IL_CRASH_CHILD set; without it the
// child test skips.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "destination/s3_fixtures.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "interloper/store.hpp"
#include "support/postgres.hpp"

extern char** environ;

namespace interloper {
namespace {

using testing::day;
using testing::TempDir;

constexpr unsigned days = 10;
const TimePartitionConfig daily{"date", {.allow_window = true}};
const DatasetRef dataset{"crash", "rows", &daily};

// Rows a generation writes into partition `p`: the count differs between consecutive
// generations so a mix or a partial file cannot look whole.
std::size_t rows_for(std::int64_t generation, unsigned p) { return (generation % 2 ? 40 : 25) + p; }

// The PostgreSQL schema of one crash test, named after its directory so the child finds it.
std::string crash_schema(const std::string& dir) {
  std::string schema = "il_crash_";
  for (char c : std::filesystem::path(dir).filename().string()) {
    schema += std::isalnum(static_cast<unsigned char>(c))
                  ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                  : '_';
  }
  return schema;
}

std::unique_ptr<Destination> open_kind(const std::string& kind, const std::string& dir) {
  if (kind == "file") return std::make_unique<FileDestination>(dir + "/files");
  if (kind == "s3") {
    const auto server = testing::s3_server();
    if (!server) throw std::runtime_error("no S3 server");
    testing::use_test_credentials(*server);
    S3Destination::Options options;
    options.bucket = "interloper-test";
    options.prefix = crash_schema(dir);  // the same objects for the parent and its children
    options.endpoint = server->endpoint;
    options.region = "us-east-1";
    auto destination = std::make_unique<S3Destination>(options);
    destination->create_bucket();
    return destination;
  }
  if (kind == "postgres") {
    return std::make_unique<PostgresDestination>(testing::postgres_url().value_or("") +
                                                 "?schema=" + crash_schema(dir));
  }
  return std::make_unique<SqliteDestination>(dir + "/data.db");
}

TimePartitionWindow window_for(std::int64_t generation) {
  // Odd generations write all days, even ones a middle slice: partitions drift apart.
  return generation % 2 ? TimePartitionWindow(day(2026, 1, 1), day(2026, 1, days))
                        : TimePartitionWindow(day(2026, 1, 3), day(2026, 1, 7));
}

// Disabled so ctest never lists it; the crash test runs it in a child process on purpose.
TEST(CrashChild, DISABLED_Writes) {
  const char* kind = std::getenv("IL_CRASH_CHILD");
  const char* dir = std::getenv("IL_CRASH_DIR");
  if (!kind || !dir) GTEST_SKIP() << "runs only as the crash test's child";
  auto destination = open_kind(kind, dir);
  SqliteStore store(std::string(dir) + "/store.db");
  // The next generation follows the newest one in the data (the store keeps states only).
  std::int64_t generation = 1;
  TimePartitionWindow all(day(2026, 1, 1), day(2026, 1, days));
  Table before = destination->read(dataset, &all);
  for (std::size_t r = 0; r < before.num_rows(); ++r) {
    generation = std::max<std::int64_t>(generation, before.at(r, "generation").as_int() + 1);
  }
  // Tell the parent when the writes begin ('S') and whenever one has been recorded ('C'), so
  // its random delays fall among writes, not start-up, and it can make sure of progress.
  const char* ready = std::getenv("IL_CRASH_READY_FD");
  auto signal_parent = [ready](char byte) {
    if (ready && ::write(std::atoi(ready), &byte, 1) != 1) std::abort();
  };
  signal_parent('S');
  const std::string payload(120, 'p');
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    TimePartitionWindow window = window_for(generation);
    Table rows;
    for (std::size_t p = 0; p < window.size(); ++p) {
      auto partition = window.partition_at(p);
      auto d = dynamic_cast<const TimePartition&>(*partition).value().date();
      unsigned index = static_cast<unsigned>(static_cast<unsigned>(d.day()) - 1);
      for (std::size_t s = 0; s < rows_for(generation, index); ++s) {
        rows.append({{"date", d},
                     {"generation", static_cast<long long>(generation)},
                     {"seq", static_cast<long long>(s)},
                     {"payload", payload}});
      }
    }
    destination->write(dataset, &window, rows);
    MaterializationRecord record;
    record.asset = dataset.asset;
    record.status = MaterializationStatus::materialized;
    record.rows = static_cast<std::int64_t>(rows.num_rows());
    record.run_id = std::to_string(generation);
    store.record(dataset, &window, record);
    signal_parent('C');
    ++generation;
  }
}

// Checks every partition; returns the highest generation seen.
std::int64_t verify(const std::string& kind, const std::string& dir) {
  auto destination = open_kind(kind, dir);
  SqliteStore store(dir + "/store.db");
  TimePartitionWindow all(day(2026, 1, 1), day(2026, 1, days));
  Table rows = destination->read(dataset, &all);
  std::map<unsigned, std::vector<std::pair<std::int64_t, std::int64_t>>> by_day;
  for (std::size_t r = 0; r < rows.num_rows(); ++r) {
    auto d = std::chrono::year_month_day(rows.at(r, "date").as_date());
    by_day[static_cast<unsigned>(d.day()) - 1].emplace_back(rows.at(r, "generation").as_int(),
                                                            rows.at(r, "seq").as_int());
  }
  std::int64_t highest = 0;
  for (unsigned p = 0; p < days; ++p) {
    TimePartition partition(day(2026, 1, p + 1));
    auto recorded = store.latest(dataset, &partition);
    const auto& cells = by_day[p];
    if (cells.empty()) {
      EXPECT_FALSE(recorded.has_value()) << kind << ": store claims empty partition " << p;
      continue;
    }
    std::int64_t generation = cells.front().first;
    highest = std::max(highest, generation);
    EXPECT_EQ(cells.size(), rows_for(generation, p)) << kind << ": partition " << p;
    for (std::size_t s = 0; s < cells.size(); ++s) {
      EXPECT_EQ(cells[s].first, generation) << kind << ": mixed generations in partition " << p;
      EXPECT_EQ(cells[s].second, static_cast<std::int64_t>(s)) << kind << ": partition " << p;
    }
    if (recorded) {
      EXPECT_EQ(recorded->status, MaterializationStatus::materialized) << kind << ": " << p;
    }
  }
  return highest;
}

// Reads the pipe until `wanted` arrives; false after 30 s without it.
bool await_byte(int fd, char wanted) {
  for (;;) {
    pollfd readable{fd, POLLIN, 0};
    if (::poll(&readable, 1, 30'000) != 1) return false;
    char byte = 0;
    if (::read(fd, &byte, 1) != 1) return false;
    if (byte == wanted) return true;
  }
}

// Discards what a killed child left in the pipe.
void drain(int fd) {
  pollfd readable{fd, POLLIN, 0};
  char buffer[256];
  while (::poll(&readable, 1, 0) == 1 && ::read(fd, buffer, sizeof buffer) > 0) {
  }
}

// `max_delay_ms` spans a few writes of the kind (an fsync-heavy file write is slower).
// IL_CRASH_KILLS, when set, replaces every test's count of kills (for a long run by hand).
void crash_repeatedly(const std::string& kind, int kills, int max_delay_ms) {
  if (const char* asked = std::getenv("IL_CRASH_KILLS")) kills = std::max(1, std::atoi(asked));
  TempDir dir;
  std::mt19937 rng(20260101);
  std::uniform_int_distribution<int> delay_ms(0, max_delay_ms);
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  env_strings.push_back("IL_CRASH_CHILD=" + kind);
  env_strings.push_back("IL_CRASH_DIR=" + dir.path().string());
  env_strings.push_back("IL_CRASH_READY_FD=" + std::to_string(ready[1]));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=CrashChild.DISABLED_Writes";
  std::string also_disabled = "--gtest_also_run_disabled_tests";
  char* argv[] = {self, filter.data(), also_disabled.data(), nullptr};

  std::int64_t highest = 0;
  for (int k = 0; k < kills; ++k) {
    pid_t pid = 0;
    ASSERT_EQ(::posix_spawn(&pid, self, nullptr, nullptr, argv, envp.data()), 0);
    ASSERT_TRUE(await_byte(ready[0], 'S')) << kind << ": child never started writing";
    // Every fourth child is killed only after a completed write, so the generations advance
    // however slow the machine (or a sanitizer build) is; the others die at random moments.
    if (k % 4 == 0) {
      ASSERT_TRUE(await_byte(ready[0], 'C')) << kind << ": child never completed a write";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    int status = 0;
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    ASSERT_EQ(done, 0) << kind << ": child exited early with status " << status;
    ::kill(pid, SIGKILL);
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);  // bounded: SIGKILL cannot be ignored
    drain(ready[0]);
    highest = std::max(highest, verify(kind, dir.path().string()));
    if (::testing::Test::HasFailure()) break;
  }
  ::close(ready[0]);
  ::close(ready[1]);
  // The children made progress, so the kills landed among real writes.
  EXPECT_GE(highest, 5) << kind;
}

TEST(CrashSafety, FileDestinationSurvivesSigkill) { crash_repeatedly("file", 55, 200); }
TEST(CrashSafety, SqliteDestinationSurvivesSigkill) { crash_repeatedly("sqlite", 55, 80); }
TEST(CrashSafety, S3DestinationSurvivesSigkill) {
  IL_REQUIRE_S3(server);
  (void)server;
  crash_repeatedly("s3", 55, 150);
}
TEST(CrashSafety, PostgresDestinationSurvivesSigkill) {
  IL_REQUIRE_POSTGRES(url);
  (void)url;
  crash_repeatedly("postgres", 55, 60);
}

}  // namespace
}  // namespace interloper
