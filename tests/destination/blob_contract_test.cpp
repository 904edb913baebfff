// The BlobStore contract, one suite run on every backend: local files, memory, S3.
#include <gtest/gtest.h>

#include <string>

#include "destination/blob_backends.hpp"
#include "interloper/blob/blob_store.hpp"
#include "interloper/error.hpp"

namespace interloper {
namespace {

using blob::BlobInfo;
using blob::BlobStore;

std::vector<std::string> names(const std::vector<BlobInfo>& listed) {
  std::vector<std::string> out;
  for (const BlobInfo& info : listed) out.push_back(info.name);
  return out;
}

class BlobContract : public ::testing::TestWithParam<std::string> {};

TEST_P(BlobContract, PutGetHeadAndReplace) {
  IL_BLOB_BACKEND(backend);
  auto store = backend.fresh();
  EXPECT_EQ(store->get("a/b.txt"), std::nullopt);
  EXPECT_EQ(store->head("a/b.txt"), std::nullopt);
  store->put("a/b.txt", "hello", {{"rows", "3"}});
  EXPECT_EQ(store->get("a/b.txt"), "hello");
  auto head = store->head("a/b.txt");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->size, 5);
  EXPECT_EQ(blob::find_meta(head->metadata, "rows"),
            store->keeps_metadata() ? std::optional<std::string>("3") : std::nullopt);
  store->put("a/b.txt", "bye");
  EXPECT_EQ(store->get("a/b.txt"), "bye");
  store->put("a/empty", "");
  EXPECT_EQ(store->get("a/empty"), "");
  EXPECT_EQ(store->head("a/empty")->size, 0);
}

TEST_P(BlobContract, ListsByPrefixInNameOrderWithSizes) {
  IL_BLOB_BACKEND(backend);
  auto store = backend.fresh();
  for (const char* name : {"ds/k=2/data", "ds/k=1/data", "ds/k=1/_written", "ds/_schema.json",
                           "dt/k=1/data", "ds/k=10/data"}) {
    store->put(name, name);
  }
  EXPECT_EQ(names(store->list("ds/k=")), (std::vector<std::string>{"ds/k=1/_written", "ds/k=1/data",
                                                                   "ds/k=10/data", "ds/k=2/data"}));
  EXPECT_EQ(names(store->list("ds/k=1/")),
            (std::vector<std::string>{"ds/k=1/_written", "ds/k=1/data"}));
  EXPECT_EQ(store->list("ds/")[0].size,
            static_cast<std::int64_t>(std::string("ds/_schema.json").size()));
  EXPECT_EQ(store->list("ds").size(), 5u);
  EXPECT_TRUE(store->list("nothing/").empty());
}

TEST_P(BlobContract, AStreamedPutAppearsWholeAtCommitOnly) {
  IL_BLOB_BACKEND(backend);
  auto store = backend.fresh();
  store->put("p/data", "old");
  // More than a part and more than a local writer buffers, in pieces.
  const std::string piece(std::size_t{1} << 20, 'x');
  std::string expected;
  {
    auto writer = store->open_put("p/data");
    for (int i = 0; i < 6; ++i) {
      writer->append(piece + std::to_string(i));
      expected += piece + std::to_string(i);
    }
    EXPECT_EQ(writer->size(), expected.size());
    EXPECT_EQ(store->get("p/data"), "old");
    const std::string tag = writer->commit({});
    EXPECT_EQ(tag, store->tag("p/data"));
  }
  EXPECT_EQ(store->get("p/data"), expected);
  std::string chunks;
  EXPECT_TRUE(store->get_chunks("p/data", [&](std::string_view c) { chunks += c; }));
  EXPECT_EQ(chunks, expected);
  EXPECT_FALSE(store->get_chunks("p/none", [](std::string_view) {}));
}

TEST_P(BlobContract, AnAbandonedPutLeavesNothing) {
  IL_BLOB_BACKEND(backend);
  auto store = backend.fresh();
  store->put("p/data", "old");
  {
    auto writer = store->open_put("p/data");
    writer->append(std::string(std::size_t{3} << 20, 'y'));
    auto other = store->open_put("q/data");
    other->append(std::string_view("new"));
  }
  EXPECT_EQ(store->get("p/data"), "old");
  EXPECT_EQ(names(store->list("")), std::vector<std::string>{"p/data"});
  if (backend.kind() == "local") {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(backend.dir())) {
      EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
    }
  }
}

TEST_P(BlobContract, PutIfAbsentNeverReplaces) {
  IL_BLOB_BACKEND(backend);
  auto store = backend.fresh();
  EXPECT_TRUE(store->put_if_absent("k/_key", "first"));
  EXPECT_FALSE(store->put_if_absent("k/_key", "second"));
  EXPECT_EQ(store->get("k/_key"), "first");
}

TEST_P(BlobContract, RemoveAndTags) {
  IL_BLOB_BACKEND(backend);
  auto store = backend.fresh();
  const std::string one = store->put("r/a", "one");
  store->put("r/b", "two");
  EXPECT_EQ(store->tag("r/a"), one);
  EXPECT_NE(store->put("r/a", "ONE"), one);
  EXPECT_EQ(store->put("r/c", "one"), one);  // the tag follows the bytes
  store->remove({"r/a", "r/missing"});
  EXPECT_EQ(store->get("r/a"), std::nullopt);
  EXPECT_EQ(names(store->list("r/")), (std::vector<std::string>{"r/b", "r/c"}));
  EXPECT_THROW(store->tag("r/a"), DestinationError);
  store->remove({"r/b", "r/c"});
  EXPECT_TRUE(store->list("").empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, BlobContract, ::testing::ValuesIn(testing::blob_backends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace interloper
