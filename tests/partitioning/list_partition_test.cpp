#include <gtest/gtest.h>

#include "interloper/partitioning.hpp"
#include "support/expect.hpp"

namespace il = interloper;

namespace {

il::ListPartitionConfig regions(bool allow_window = false) {
  return il::ListPartitionConfig("region", {"eu", "us", "apac", "latam"}, allow_window);
}

TEST(ListPartitionConfig, RejectsBadValueLists) {
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {}), il::PartitionError, "no values");
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {"eu", "us", "eu"}), il::PartitionError,
                       "'eu' twice");
  IL_EXPECT_THROW_WITH(il::ListPartitionConfig("region", {"eu", ""}), il::PartitionError,
                       "empty value");
}

TEST(ListPartitionConfig, Basics) {
  const auto config = regions();
  EXPECT_EQ(config.kind(), "list");
  EXPECT_EQ(config.column(), "region");
  EXPECT_FALSE(config.allow_window());
  EXPECT_EQ(config.values(), (std::vector<std::string>{"eu", "us", "apac", "latam"}));
  EXPECT_EQ(config.index_of("apac"), 2u);
  IL_EXPECT_THROW_WITH(config.index_of("mars"), il::PartitionError, "'mars'");
  IL_EXPECT_THROW_WITH(config.index_of("mars"), il::PartitionError, "eu, us, apac, latam");
}

TEST(ListPartitionConfig, LongListsAreAbbreviatedInErrors) {
  std::vector<std::string> tenants;
  for (int i = 0; i < 50; ++i) tenants.push_back("t" + std::to_string(i));
  const il::ListPartitionConfig config("tenant", tenants);
  IL_EXPECT_THROW_WITH(config.index_of("t99"), il::PartitionError, "t0, t1, t2, t3, t4, ...");
}

TEST(ListPartition, KeyValueAndFilter) {
  const auto p = regions().partition("us");
  EXPECT_EQ(p.value(), "us");
  EXPECT_EQ(p.key(), "us");
  EXPECT_EQ(p.kind(), "list");
  const il::Filter f = p.filter("region");
  EXPECT_EQ(f.kind(), il::Filter::Kind::membership);
  EXPECT_EQ(f.values(), std::vector<std::string>{"us"});
  IL_EXPECT_THROW_WITH(regions().partition("mars"), il::PartitionError, "'mars'");
  EXPECT_EQ(p.as_window()->to_string(), "us");
  EXPECT_EQ(p.clone()->key(), "us");
}

TEST(ListPartitionWindow, ContiguousRangeOfTheDeclaredOrder) {
  const auto config = regions(true);
  const il::ListPartitionWindow w = config.window("us", "latam");
  EXPECT_EQ(w.size(), 3u);
  EXPECT_EQ(w.values(), (std::vector<std::string>{"us", "apac", "latam"}));
  EXPECT_EQ(w.keys(), w.values());
  EXPECT_EQ(w.first(), "us");
  EXPECT_EQ(w.last(), "latam");
  EXPECT_EQ(w.to_string(), "us..latam");
  EXPECT_EQ(w.kind(), "list");
  EXPECT_TRUE(w.contains(il::ListPartition("apac")));
  EXPECT_FALSE(w.contains(il::ListPartition("eu")));
  EXPECT_FALSE(w.contains(il::TimePartition(il::TimePoint{})));
  EXPECT_EQ(w.partition_at(1)->key(), "apac");
  EXPECT_THROW(static_cast<void>(w.partition_at(3)), std::out_of_range);
  EXPECT_EQ(w.filter("region").values(), w.values());
  EXPECT_EQ(config.window("eu", "eu").to_string(), "eu");
  EXPECT_EQ(w.clone()->keys(), w.keys());
}

TEST(ListPartitionWindow, BackwardsOrUnknownIsRejected) {
  const auto config = regions(true);
  IL_EXPECT_THROW_WITH(config.window("apac", "eu"), il::PartitionError, "apac..eu runs backwards");
  IL_EXPECT_THROW_WITH(config.window("eu", "mars"), il::PartitionError, "'mars'");
  IL_EXPECT_THROW_WITH(config.parse_window("latam..us"), il::PartitionError, "backwards");
  EXPECT_EQ(config.parse_window("eu..us")->keys(), (std::vector<std::string>{"eu", "us"}));
  EXPECT_EQ(config.parse_window("apac")->size(), 1u);
}

TEST(ListPartitionWindow, CopiesShareTheValues) {
  const auto config = regions(true);
  const il::ListPartitionWindow w = config.window("eu", "us");
  const il::ListPartitionWindow copy = w;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(&copy.first(), &w.first());
  EXPECT_EQ(&w.first(), &config.values()[0]);
}

}  // namespace
