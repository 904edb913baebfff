// open_destination: the accepted URL forms and the errors for the others.
#include <gtest/gtest.h>

#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/destination_url.hpp"

namespace interloper {
namespace {

using testing::TempDir;

std::string error_of(std::string_view url) {
  try {
    open_destination(url);
  } catch (const DestinationError& e) {
    return e.what();
  }
  return "";
}

TEST(OpenDestination, AcceptedForms) {
  TempDir dir;
  auto memory = open_destination("memory://");
  EXPECT_NE(dynamic_cast<MemoryDestination*>(memory.get()), nullptr);

  auto absolute = open_destination("sqlite://" + (dir / "a.db"));
  auto* sqlite = dynamic_cast<SqliteDestination*>(absolute.get());
  ASSERT_NE(sqlite, nullptr);
  EXPECT_EQ(sqlite->path(), dir / "a.db");
  EXPECT_EQ(open_destination(absolute->url())->url(), absolute->url());

  auto files = open_destination("file://" + (dir / "files") + "?format=csv");
  ASSERT_NE(dynamic_cast<FileDestination*>(files.get()), nullptr);
  EXPECT_EQ(files->url(), "file://" + (dir / "files") + "?format=csv");
  EXPECT_NE(dynamic_cast<FileDestination*>(open_destination("file://" + (dir / "j")).get()),
            nullptr);
}

TEST(OpenDestination, RelativePaths) {
  TempDir dir;
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto a = open_destination("sqlite:rel.db");
  auto b = open_destination("sqlite://./sub/rel2.db");
  auto c = open_destination("file:files?format=jsonl");
  std::filesystem::current_path(cwd);
  EXPECT_EQ(dynamic_cast<SqliteDestination*>(a.get())->path(), "rel.db");
  EXPECT_EQ(dynamic_cast<SqliteDestination*>(b.get())->path(), "./sub/rel2.db");
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "rel.db"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "sub/rel2.db"));
  EXPECT_NE(c, nullptr);
}

TEST(OpenDestination, ErrorsNameTheProblem) {
  EXPECT_NE(error_of("mysql://x/y").find("'mysql'"), std::string::npos);
  EXPECT_NE(error_of("file:///tmp/x?format=parquet").find("'parquet'"), std::string::npos);
  EXPECT_NE(error_of("file:///tmp/x?compress=1").find("'compress'"), std::string::npos);
  EXPECT_NE(error_of("sqlite://host/x.db").find("'host'"), std::string::npos);
  EXPECT_NE(error_of("nothing").find("'nothing'"), std::string::npos);
  EXPECT_NE(error_of("sqlite:").find("no path"), std::string::npos);
  EXPECT_NE(error_of("memory://x").find("memory://"), std::string::npos);
}

// A URL of a scheme interloper does not know may still carry a password: messages show ***.
TEST(OpenDestination, ErrorsNeverEchoAPassword) {
  for (std::string url : {"mysql://me:secret@db/warehouse", "sqlite://me:secret@host/x.db",
                          "memory://me:secret@host", ":postgresql://me:secret@db/x",
                          "s3://me:secret@bucket/raw", "s3://me:secret@bucket/raw?format=xml",
                          "s3://me:secret@bucket#x@y/raw", "file:out?a://me:secret@db"}) {
    std::string error = error_of(url);
    EXPECT_EQ(error.find("secret"), std::string::npos) << error;
    EXPECT_NE(error.find("me:***@"), std::string::npos) << error;
  }
}

TEST(OpenDestination, ParsedFormsAreOneGrammar) {
  DestinationUrl url = parse_destination_url("file:out?format=csv");
  EXPECT_EQ(url.scheme, DestinationUrl::Scheme::file);
  EXPECT_EQ(url.path, "out");
  EXPECT_EQ(url.format, FileDestination::Format::csv);
  EXPECT_EQ(url.with_path("/data/out"), "file:///data/out?format=csv");
  EXPECT_EQ(parse_destination_url("sqlite://./a.db").with_path("/x/a.db"), "sqlite:///x/a.db");
  EXPECT_EQ(parse_destination_url("s3://bucket/p").scheme, DestinationUrl::Scheme::s3);
  EXPECT_EQ(parse_destination_url("postgres://db/x").scheme, DestinationUrl::Scheme::postgresql);
  EXPECT_THROW(parse_destination_url("sqlite:a.db?format=csv"), DestinationError);
}

}  // namespace
}  // namespace interloper
