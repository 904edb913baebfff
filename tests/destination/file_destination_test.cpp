// FileDestination specifics: layout, key escaping, empty partitions, schema file.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "destination/destination_contract.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "support/any_value_list.hpp"

IL_INSTANTIATE_DESTINATION_CONTRACT(JsonFiles, [](const std::string& dir) {
  return std::make_shared<interloper::FileDestination>(dir + "/files");
});
IL_INSTANTIATE_DESTINATION_CONTRACT(CsvFiles, [](const std::string& dir) {
  return std::make_shared<interloper::FileDestination>(dir + "/files",
                                                       interloper::FileDestination::Format::csv);
});

namespace interloper {
namespace {

namespace fs = std::filesystem;
using testing::day;
using testing::TempDir;

TEST(FileKeyEscaping, RoundTripsAndStaysInsideItsDirectory) {
  std::vector<std::string> keys = {"eu",
                                   "",
                                   ".",
                                   "..",
                                   "../x",
                                   "/",
                                   "%",
                                   "%2F",
                                   "a.b",
                                   ".hidden",
                                   std::string("\0", 1),
                                   "a=b",
                                   "~",
                                   "caf\xc3\xa9",
                                   "-",
                                   "_"};
  std::set<std::string> seen;
  for (const auto& key : keys) {
    std::string c = FileDestination::escape_key(key);
    EXPECT_FALSE(c.empty());
    EXPECT_NE(c, ".");
    EXPECT_NE(c, "..");
    EXPECT_EQ(c.find('/'), std::string::npos) << c;
    EXPECT_EQ(c.find('\0'), std::string::npos);
    EXPECT_EQ(c.find('='), std::string::npos);
    EXPECT_NE(c[0], '.');
    EXPECT_EQ(FileDestination::unescape_key(c), key) << c;
    EXPECT_TRUE(seen.insert(c).second) << "collision: " << c;
  }
  EXPECT_EQ(FileDestination::escape_key("eu"), "eu");
  EXPECT_EQ(FileDestination::escape_key("../x"), "%2E.%2Fx");
  EXPECT_EQ(FileDestination::escape_key(""), "%");
}

// Hostile keys, a NUL byte included, stay inside the destination's root and read back the same
// from a destination opened anew on the same directory.
TEST(FileDestinationLayout, HostileKeysStayInsideTheRootAcrossReopening) {
  const std::vector<std::string> values = {"../x", "/", "..", std::string("a\0b", 3),
                                           std::string(300, '/') + "z"};
  interloper::testing::AnyValueList regions("region", values, true);
  DatasetRef sales{"shop", "sales", &regions};
  auto window = regions.window(values.front(), values.back());
  Table rows;
  for (std::size_t i = 0; i < values.size(); ++i) {
    rows.append({{"region", values[i]}, {"n", static_cast<int>(i)}});
  }
  for (auto format : {FileDestination::Format::jsonl, FileDestination::Format::csv}) {
    TempDir dir;
    FileDestination(dir / "files", format).write(sales, &window, rows);
    EXPECT_EQ(FileDestination(dir / "files", format).read(sales, &window), rows);
    for (const auto& entry : fs::recursive_directory_iterator(dir.path())) {
      auto rel = fs::relative(entry.path(), dir.path()).string();
      EXPECT_EQ(rel.rfind("files", 0), 0u) << rel;
    }
  }
}

TEST(FileKeyEscaping, LongKeysAreHashedAndDistinct) {
  std::string a(400, 'a');
  std::string b = a + "b";
  std::string ca = FileDestination::escape_key(a);
  std::string cb = FileDestination::escape_key(b);
  EXPECT_LE(ca.size(), 200u);
  EXPECT_NE(ca, cb);
  EXPECT_NE(ca.find('~'), std::string::npos);
  EXPECT_THROW(FileDestination::unescape_key(ca), DestinationError);
  EXPECT_LE(FileDestination::escape_key(std::string(300, '/')).size(), 200u);
  EXPECT_THROW(FileDestination::unescape_key("%zz"), DestinationError);
  EXPECT_THROW(FileDestination::unescape_key("a/b"), DestinationError);
}

TEST(FileDestinationLayout, PartitionsSchemaAndEmptyFiles) {
  TempDir dir;
  FileDestination destination(dir / "root");
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 2));
  Table rows;
  rows.append({{"date", day(2026, 1, 1)}, {"clicks", 3}});
  destination.write(stats, &window, rows);
  fs::path base = dir.path() / "root/ads/stats";
  EXPECT_TRUE(fs::exists(base / "_schema.json"));
  EXPECT_GT(fs::file_size(base / "date=2026-01-01/data.jsonl"), 0u);
  EXPECT_EQ(fs::file_size(base / "date=2026-01-02/data.jsonl"), 0u);
  // No temporary files are left behind.
  for (const auto& entry : fs::recursive_directory_iterator(base)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  }
  EXPECT_EQ(destination.url(), "file://" + (dir.path() / "root").string() + "?format=jsonl");

  FileDestination csv(dir / "csv", FileDestination::Format::csv);
  DatasetRef dims{"", "dims", nullptr};
  csv.write(dims, nullptr, rows);
  EXPECT_TRUE(fs::exists(dir.path() / "csv/dims/data.csv"));
  std::ifstream in(dir.path() / "csv/dims/data.csv");
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "date,clicks");
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// status --verify's question: is each partition's file still what the destination wrote?
TEST(FileDestinationVerify, AFileOverwrittenOrTruncatedBehindItsBackIsChanged) {
  TempDir dir;
  FileDestination destination(dir / "root");
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 4));
  Table rows;
  for (int d = 1; d <= 3; ++d) rows.append({{"date", day(2026, 1, d)}, {"clicks", d}});
  destination.write(stats, &window, rows);
  using State = PartitionCheck::State;
  auto states = [&] {
    std::vector<State> out;
    for (const PartitionCheck& c : destination.check_partitions(stats, window)) {
      out.push_back(c.state);
    }
    return out;
  };
  // Day 4 was written empty: present, like the others.
  EXPECT_EQ(states(),
            (std::vector<State>{State::present, State::present, State::present, State::present}));

  const fs::path base = dir.path() / "root/ads/stats";
  const fs::path day1 = base / "date=2026-01-01/data.jsonl";
  const fs::path day2 = base / "date=2026-01-02/data.jsonl";
  std::string text = read_text(day1);  // a digit changed: the same size, other content
  ASSERT_NE(text.find("\"clicks\":1"), std::string::npos) << text;
  text.replace(text.find("\"clicks\":1"), 10, "\"clicks\":7");
  std::ofstream(day1, std::ios::trunc | std::ios::binary) << text;
  fs::resize_file(day2, 5);
  fs::remove_all(base / "date=2026-01-03");
  const std::vector<PartitionCheck> checks = destination.check_partitions(stats, window);
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].key, "2026-01-01");
  EXPECT_EQ(checks[0].state, State::changed);
  EXPECT_EQ(checks[0].object, day1.string());
  EXPECT_NE(checks[0].reason.find("content differs"), std::string::npos) << checks[0].reason;
  EXPECT_EQ(checks[1].state, State::changed);
  EXPECT_EQ(checks[1].object, day2.string());
  EXPECT_NE(checks[1].reason.find("size 5, written "), std::string::npos) << checks[1].reason;
  EXPECT_EQ(checks[2].state, State::missing);
  EXPECT_EQ(checks[3].state, State::present);

  // Writing again records the new files.
  destination.write(stats, &window, rows);
  EXPECT_EQ(states(),
            (std::vector<State>{State::present, State::present, State::present, State::present}));
  // A partition written before records were kept is checked for existence only.
  fs::remove(base / "date=2026-01-01/_written");
  fs::resize_file(day1, 3);
  EXPECT_EQ(states()[0], State::present);
}

// The PID of a process that has exited and been reaped.
pid_t dead_pid() {
  pid_t pid = 0;
  char arg0[] = "/bin/true";
  char* argv[] = {arg0, nullptr};
  EXPECT_EQ(posix_spawn(&pid, "/bin/true", nullptr, nullptr, argv, nullptr), 0);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return pid;
}

TEST(FileDestinationLayout, RemovesTempFilesOfDeadWritersOnly) {
  TempDir dir;
  FileDestination destination(dir / "root");
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
  TimePartitionWindow partition(day(2026, 1, 1), day(2026, 1, 1));
  Table rows;
  rows.append({{"date", day(2026, 1, 1)}, {"clicks", 3}});
  destination.write(stats, &partition, rows);

  fs::path base = dir.path() / "root/ads/stats";
  fs::path pdir = base / "date=2026-01-01";
  const pid_t dead = dead_pid();
  ASSERT_GT(dead, 0);
  fs::path stale = pdir / (".data.jsonl.tmp-" + std::to_string(dead) + "-7");
  fs::path stale_schema = base / ("._schema.json.tmp-" + std::to_string(dead) + "-8");
  fs::path ours = pdir / (".data.jsonl.tmp-" + std::to_string(::getpid()) + "-9");
  fs::path parent = pdir / (".data.jsonl.tmp-" + std::to_string(::getppid()) + "-10");
  fs::path unrelated = pdir / ".notes.tmp-x";
  for (const fs::path& p : {stale, stale_schema, ours, parent, unrelated}) {
    std::ofstream(p) << "{}\n";
  }

  destination.write(stats, &partition, rows);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_schema));
  EXPECT_TRUE(fs::exists(ours));
  EXPECT_TRUE(fs::exists(parent));
  EXPECT_TRUE(fs::exists(unrelated));
  EXPECT_EQ(destination.read(stats, &partition).num_rows(), 1u);
}

// Temporary files anywhere under `dir`.
std::vector<std::string> temp_files(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().filename().string().find(".tmp-") != std::string::npos) {
      out.push_back(entry.path().string());
    }
  }
  return out;
}

// A full disk, for real: in a child process whose files may not grow past 64 KiB (SIGXFSZ
// ignored, so write() fails with EFBIG as it fails with ENOSPC on a full disk), each way a file
// write can fail must throw DestinationError, remove every temporary file and keep the old
// partition. The child's exit status says which check failed.
int write_on_a_full_disk(const fs::path& root, FileDestination::Format format) {
  ::signal(SIGXFSZ, SIG_IGN);
  FileDestination destination(root.string(), format);
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef stats{"ads", "stats", &daily};
  TimePartitionWindow window(day(2026, 1, 1), day(2026, 1, 2));
  Table small;
  small.append({{"date", day(2026, 1, 1)}, {"clicks", 1}});
  destination.write(stats, &window, small);
  rlimit limit{64 << 10, 64 << 10};
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
  Table big;
  for (int i = 0; i < 5000; ++i) {
    big.append({{"date", day(2026, 1, 1 + i % 2)}, {"clicks", i}, {"note", std::string(40, 'x')}});
  }
  Table huge;  // more than a writer buffers, so the failure comes from append()
  for (int i = 0; i < 40; ++i) huge.append_table(big);
  auto fails = [](auto&& write) {
    try {
      write();
    } catch (const DestinationError&) {
      return true;
    }
    return false;
  };
  if (!fails([&] { destination.write(stats, &window, big); })) return 11;
  if (!temp_files(root).empty()) return 12;
  if (!fails([&] { destination.open_writer(stats, &window)->append(huge); })) return 13;
  if (!temp_files(root).empty()) return 14;
  if (!fails([&] {
        auto writer = destination.open_writer(stats, &window);
        writer->append(big);
        writer->append(big);
        writer->commit();
      })) {
    return 15;
  }
  if (!temp_files(root).empty()) return 16;
  if (!(destination.read(stats, &window) == small)) return 17;
  return 0;
}

TEST(FileDestinationFailures, AFullDiskLeavesNoTemporaryFiles) {
  for (auto format : {FileDestination::Format::jsonl, FileDestination::Format::csv}) {
    TempDir dir;
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) ::_exit(write_on_a_full_disk(dir.path() / "root", format));
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "format " << static_cast<int>(format);
  }
}

TEST(FileDestinationLayout, LongKeysKeepTheirKeyBeside) {
  TempDir dir;
  FileDestination destination(dir / "root");
  std::string long_key(250, 'x');
  ListPartitionConfig config("k", {long_key, "short"}, true);
  DatasetRef data{"s", "a", &config};
  auto window = config.window(long_key, "short");
  Table rows;
  rows.append({{"k", long_key}, {"n", 1}});
  destination.write(data, &window, rows);
  fs::path pdir = dir.path() / "root/s/a" / ("k=" + FileDestination::escape_key(long_key));
  std::ifstream in(pdir / "_key");
  std::string stored((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(stored, long_key);
  // A time window over the same dataset ignores directories that are not time keys.
  auto partition = config.partition(long_key);
  EXPECT_EQ(destination.row_count(data, &partition), 1);
}

}  // namespace
}  // namespace interloper
