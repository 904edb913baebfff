// Objects written by the file destination before it was an object destination over a blob
// store (tests/destination/fixtures/old_object_layout: its own output, a hashed long key
// included), read and updated in place by today's FileDestination; and the same objects laid
// out in S3 the way S3Destination stored them then (the hashed key in the object's metadata,
// no _key object), read and updated in place by today's S3Destination.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "destination/s3_fixtures.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "interloper/s3/client.hpp"

namespace interloper {
namespace {

namespace fs = std::filesystem;
using testing::day;
using testing::TempDir;

const fs::path kFixture = fs::path(IL_TEST_SOURCE_DIR) / "tests/destination/fixtures/old_object_layout";
const std::string kLongKey(230, 'k');

const TimePartitionConfig& daily() {
  static const TimePartitionConfig config{"day", {.allow_window = true}};
  return config;
}
const ListPartitionConfig& regions() {
  static const ListPartitionConfig config("region", {kLongKey, "emea", "a/b"}, true);
  return config;
}
const DatasetRef kOrders{"shop", "orders", &daily()};
const DatasetRef kRegions{"shop", "regions", &regions()};
const DatasetRef kDims{"", "dims", nullptr};

std::vector<long long> ints(const Table& t, const std::string& column) {
  std::vector<long long> out;
  for (const Value& v : t.column(column)) out.push_back(v.as_int());
  return out;
}

// What the fixture holds, read back; then a rewrite of one partition of each dataset, in place.
void reads_and_updates(Destination& destination) {
  const TimePartitionWindow days(day(2026, 1, 1), day(2026, 1, 3));
  Table orders = destination.read(kOrders, &days);
  EXPECT_EQ(ints(orders, "id"), (std::vector<long long>{1, 2, 3}));
  EXPECT_EQ(orders.at(1, "note"), Value("x,\"y\""));
  auto counts = destination.partition_counts(kOrders, days);
  ASSERT_EQ(counts.size(), 3u);
  EXPECT_EQ(counts[0].rows, 2);
  EXPECT_TRUE(counts[1].written);
  EXPECT_EQ(counts[1].rows, 0);
  EXPECT_EQ(counts[2].rows, 1);
  for (const PartitionCheck& check : destination.check_partitions(kOrders, days)) {
    EXPECT_EQ(check.state, PartitionCheck::State::present) << check.key << ": " << check.reason;
  }
  auto all_regions = regions().window(kLongKey, "a/b");
  EXPECT_EQ(ints(destination.read(kRegions, &all_regions), "n"),
            (std::vector<long long>{10, 20, 30}));
  EXPECT_EQ(destination.read(kDims, nullptr).num_rows(), 1u);

  const TimePartitionWindow first(day(2026, 1, 1), day(2026, 1, 1));
  Table day1;
  day1.append({{"day", day(2026, 1, 1)}, {"id", 9}, {"note", "new"}});
  destination.write(kOrders, &first, day1);
  EXPECT_EQ(ints(destination.read(kOrders, &days), "id"), (std::vector<long long>{9, 3}));
  for (const PartitionCheck& check : destination.check_partitions(kOrders, days)) {
    EXPECT_EQ(check.state, PartitionCheck::State::present) << check.key << ": " << check.reason;
  }
  auto long_only = regions().window(kLongKey, kLongKey);
  Table region;
  region.append({{"region", kLongKey}, {"n", 11}});
  destination.write(kRegions, &long_only, region);
  EXPECT_EQ(ints(destination.read(kRegions, &all_regions), "n"),
            (std::vector<long long>{11, 20, 30}));
}

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.insert(entry.path().filename());
  return out;
}

TEST(OldObjectLayout, FilesAreReadAndUpdatedInPlace) {
  for (const char* format : {"jsonl", "csv"}) {
    SCOPED_TRACE(format);
    TempDir dir;
    fs::copy(kFixture / format, dir.path() / "root", fs::copy_options::recursive);
    const fs::path region_dir = dir.path() / "root/shop/regions";
    const std::set<std::string> before = entries(region_dir);
    FileDestination destination((dir / "root"),
                                std::string(format) == "csv" ? ObjectFormat::csv
                                                             : ObjectFormat::jsonl);
    reads_and_updates(destination);
    // The long key's directory is the one the fixture holds (its name carries the same hash).
    EXPECT_EQ(entries(region_dir), before);
  }
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(OldObjectLayout, S3ObjectsAreReadAndUpdatedInPlace) {
  IL_REQUIRE_S3(server);
  auto destination = testing::test_s3_destination(server, "old-layout");
  const std::string prefix = S3Destination::parse_url(destination->url()).prefix + "/";
  testing::use_test_credentials(server);
  detail::S3Client client(detail::S3Location{server.endpoint, "us-east-1", "interloper-test", true},
                          detail::S3Credentials::from_environment());
  // The objects as S3Destination stored them: rows (and a hashed key) in metadata, no _key.
  const fs::path root = kFixture / "jsonl";
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = fs::relative(entry.path(), root).string();
    const std::string filename = entry.path().filename();
    if (filename == "_key" || filename == "_written") continue;
    const std::string body = slurp(entry.path());
    detail::S3Metadata metadata;
    if (filename == "data.jsonl") {
      metadata.emplace_back("rows", std::to_string(std::count(body.begin(), body.end(), '\n')));
      if (name.find('~') != std::string::npos) {
        metadata.emplace_back("partition-key", detail::s3_uri_encode(kLongKey, false));
      }
    }
    client.put(prefix + name, body, metadata);
  }
  const std::vector<std::string> keys{"a/b", "emea", kLongKey};
  EXPECT_EQ(destination->partition_keys(kRegions), keys);
  reads_and_updates(*destination);
  EXPECT_EQ(destination->partition_keys(kRegions), keys);
  std::set<std::string> folders;
  for (const auto& info : client.list(prefix + "shop/regions/region=")) {
    folders.insert(info.key.substr(0, info.key.rfind('/')));
  }
  EXPECT_EQ(folders.size(), 3u);  // the long key's object stays under its old name
}

}  // namespace
}  // namespace interloper
