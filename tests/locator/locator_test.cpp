// The one URL grammar: every scheme taken apart, passwords kept apart and never printed, and bad
// URLs refused with an error that names the URL redacted.
#include <gtest/gtest.h>

#include "interloper/destination.hpp"
#include "interloper/locator.hpp"
#include "interloper/store.hpp"

namespace interloper {
namespace {

TEST(Locator, ServerUrlsAreTakenApart) {
  const Locator at = parse_locator("postgresql://me:s3cret@db:5432/ops?schema=queue&sslmode=off");
  EXPECT_EQ(at.scheme, "postgresql");
  EXPECT_EQ(at.user, "me");
  EXPECT_EQ(at.password(), "s3cret");
  EXPECT_EQ(at.host, "db:5432");
  EXPECT_EQ(at.path, "ops");
  EXPECT_EQ(at.query, "schema=queue&sslmode=off");
  EXPECT_EQ(at.option("schema"), "queue");
  EXPECT_EQ(at.option("missing", "fallback"), "fallback");
  EXPECT_EQ(at.redacted(), "postgresql://me:***@db:5432/ops?schema=queue&sslmode=off");
  EXPECT_EQ(at.secret_text(), "postgresql://me:s3cret@db:5432/ops?schema=queue&sslmode=off");
  EXPECT_TRUE(at.is_postgres());

  const Locator short_form = parse_locator("postgres:///warehouse");
  EXPECT_EQ(short_form.scheme, "postgres");
  EXPECT_EQ(short_form.host, "");
  EXPECT_EQ(short_form.path, "warehouse");
  EXPECT_EQ(short_form.password(), "");
  EXPECT_EQ(short_form.redacted(), "postgres:///warehouse");

  // The user-info ends at the last '@' before the path, as libpq reads it.
  const Locator at_sign = parse_locator("postgresql://me:p@ss@db/w");
  EXPECT_EQ(at_sign.password(), "p@ss");
  EXPECT_EQ(at_sign.host, "db");
  EXPECT_EQ(at_sign.redacted(), "postgresql://me:***@db/w");

  const Locator s3 = parse_locator("s3://bucket/raw/events?region=eu-west-1");
  EXPECT_EQ(s3.scheme, "s3");
  EXPECT_EQ(s3.host, "bucket");
  EXPECT_EQ(s3.path, "raw/events");
  EXPECT_EQ(s3.option("region"), "eu-west-1");
}

TEST(Locator, LocalUrlsKeepTheirPath) {
  EXPECT_EQ(parse_locator("sqlite:///var/lib/state.db").path, "/var/lib/state.db");
  EXPECT_EQ(parse_locator("sqlite://./rel.db").path, "./rel.db");
  EXPECT_EQ(parse_locator("sqlite://../up.db").path, "../up.db");
  EXPECT_EQ(parse_locator("sqlite:rel.db").path, "rel.db");
  const Locator file = parse_locator("file:out?format=csv");
  EXPECT_EQ(file.scheme, "file");
  EXPECT_EQ(file.path, "out");
  EXPECT_EQ(file.option("format"), "csv");
  EXPECT_TRUE(file.is_local());
  // What would be a host is kept for the consumer's message, not read as a path.
  const Locator host = parse_locator("sqlite://state.db");
  EXPECT_EQ(host.host, "state.db");
  EXPECT_EQ(host.path, "");
  const Locator memory = parse_locator("memory://");
  EXPECT_EQ(memory.scheme, "memory");
  EXPECT_EQ(memory.path, "");
  EXPECT_EQ(memory.host, "");
}

TEST(Locator, ABarePathHasNoScheme) {
  for (const char* path : {"state.db", "/var/lib/state.db", "./a:b.db", "1x:y", "dir/x?y"}) {
    const Locator at = parse_locator(path);
    EXPECT_EQ(at.scheme, "") << path;
    EXPECT_EQ(at.path, path);
    EXPECT_EQ(at.query, "") << path;
  }
}

std::string error_of(std::string_view text) {
  try {
    parse_locator(text);
  } catch (const DestinationError& e) {
    return e.what();
  }
  return "";
}

TEST(Locator, BadUrlsNameTheUrlRedacted) {
  EXPECT_EQ(error_of(""), "URL '': empty");
  EXPECT_EQ(error_of("postgresql://me:s3cret@db/w?sslmode"),
            "URL 'postgresql://me:***@db/w?sslmode': parameter 'sslmode' has no value");
  EXPECT_EQ(error_of("s3://me:s3cret@bucket/x?region"),
            "URL 's3://me:***@bucket/x?region': parameter 'region' has no value");
}

std::string open_error(std::string_view text, bool store) {
  try {
    if (store) {
      open_store(text);
    } else {
      open_destination(text);
    }
  } catch (const DestinationError& e) {
    return e.what();
  }
  return "";
}

// Destinations and stores read the same locator and say what they do not accept of it; no
// message shows a password, whatever the scheme.
TEST(Locator, ConsumersRefuseWhatTheyDoNotOpenWithoutAPassword) {
  for (bool store : {false, true}) {
    for (std::string url : {"mysql://me:s3cret@db/state", "sqlite://me:s3cret@host/x.db",
                            "memory://me:s3cret@host", "ftp://me:s3cret@host/x?a",
                            "file://me:s3cret@host/x"}) {
      const std::string error = open_error(url, store);
      EXPECT_FALSE(error.empty()) << url;
      EXPECT_EQ(error.find("s3cret"), std::string::npos) << error;
      EXPECT_NE(error.find("me:***@"), std::string::npos) << error;
    }
  }
  EXPECT_EQ(open_error("mysql://me:s3cret@db/state", true),
            "store 'mysql://me:***@db/state': unknown scheme 'mysql' (write a path, "
            "sqlite:///absolute/path.db, sqlite:relative/path.db, postgresql://... or memory://)");
  EXPECT_EQ(open_error("ftp://me:s3cret@host/x?a", false),
            "destination URL 'ftp://me:***@host/x?a': parameter 'a' has no value");
}

TEST(Locator, StoresAndDestinationsOpenFromTheValue) {
  EXPECT_NE(open_store(parse_locator("memory://")), nullptr);
  EXPECT_NE(open_destination(parse_locator("memory://")), nullptr);
  EXPECT_EQ(store_file(parse_locator("sqlite:///var/state.db")), "/var/state.db");
  EXPECT_EQ(store_file(parse_locator("state.db")), "state.db");
  EXPECT_EQ(store_file(parse_locator("memory:")), std::nullopt);
}

}  // namespace
}  // namespace interloper
