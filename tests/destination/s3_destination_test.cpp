// S3Destination against a real S3 server on loopback (moto_server, see scripts/with-moto): the
// contract, the layout as an independent client (boto3) sees it, reads of many objects in order,
// multipart uploads, streaming, and the errors for bad credentials, a missing bucket, an
// unreachable endpoint and an object that does not decode.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "destination/destination_contract.hpp"
#include "destination/s3_fixtures.hpp"
#include "destination/storage_fixtures.hpp"
#include "interloper/destination.hpp"
#include "support/any_value_list.hpp"

namespace {

std::shared_ptr<interloper::Destination> contract_destination(
    interloper::FileDestination::Format format) {
  std::shared_ptr<interloper::Destination> out;
  [&] {
    IL_REQUIRE_S3(server);
    out = interloper::testing::test_s3_destination(server, "contract", format);
  }();
  return out;
}

}  // namespace

IL_INSTANTIATE_DESTINATION_CONTRACT(S3Json, [](const std::string&) {
  return contract_destination(interloper::FileDestination::Format::jsonl);
});
IL_INSTANTIATE_DESTINATION_CONTRACT(S3Csv, [](const std::string&) {
  return contract_destination(interloper::FileDestination::Format::csv);
});

namespace interloper {
namespace {

using testing::S3Server;
using testing::TempDir;
using json = nlohmann::json;

// Restores the AWS_* variables a test changes.
class SavedEnvironment {
 public:
  SavedEnvironment() {
    for (const char* name : names) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
    }
  }
  ~SavedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name, value->c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
  }

 private:
  static constexpr const char* names[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                          "AWS_SESSION_TOKEN", "AWS_REGION"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
};

// Runs a Python script with boto3 (an independent S3 client) and parses its JSON output. The
// script gets the endpoint, the bucket and `prefix` as argv[1..3]; credentials come from AWS_*.
json boto3(const S3Server& server, const std::string& bucket, const std::string& script,
           const std::string& prefix = "") {
  TempDir dir;
  const std::string path = dir / "check.py";
  std::ofstream(path) << "import sys, json, boto3\n"
                         "s3 = boto3.client('s3', endpoint_url=sys.argv[1], "
                         "region_name='us-east-1')\n"
                         "bucket = sys.argv[2]\n"
                      << script;
  const std::string command = "'" + server.python + "' '" + path + "' '" + server.endpoint + "' '" +
                              bucket + "' '" + prefix + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  int status = ::pclose(pipe);
  if (status != 0) throw std::runtime_error("boto3 check failed: " + out);
  return json::parse(out);
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const DestinationError& e) {
    return e.what();
  }
  return "";
}

TEST(S3DestinationUrl, ParsesEveryPart) {
  auto o = S3Destination::parse_url(
      "s3://lake.data/raw/events/?endpoint=http://127.0.0.1:9000&region=eu-west-1&format=csv&"
      "path_style=0");
  EXPECT_EQ(o.bucket, "lake.data");
  EXPECT_EQ(o.prefix, "raw/events");
  EXPECT_EQ(o.endpoint, "http://127.0.0.1:9000");
  EXPECT_EQ(o.region, "eu-west-1");
  EXPECT_EQ(o.format, FileDestination::Format::csv);
  EXPECT_EQ(o.path_style, std::optional<bool>(false));
  auto bare = S3Destination::parse_url("s3://lake");
  EXPECT_EQ(bare.prefix, "");
  EXPECT_EQ(bare.endpoint, "");
  EXPECT_FALSE(bare.path_style.has_value());
}

TEST(S3DestinationUrl, ErrorsNameTheBadPart) {
  auto parse = [](const char* url) { return error_of([&] { S3Destination::parse_url(url); }); };
  EXPECT_NE(parse("s3://Bad_Bucket/x").find("'Bad_Bucket'"), std::string::npos);
  EXPECT_NE(parse("s3:///x").find("bucket"), std::string::npos);
  EXPECT_NE(parse("s3://lake?format=parquet").find("'parquet'"), std::string::npos);
  EXPECT_NE(parse("s3://lake?acl=public").find("'acl'"), std::string::npos);
  EXPECT_NE(parse("s3://lake?path_style=yes").find("'yes'"), std::string::npos);
  EXPECT_NE(parse("s3://lake?endpoint=127.0.0.1:9000").find("http://"), std::string::npos);
  EXPECT_NE(parse("s3://lake?region").find("'region'"), std::string::npos);
}

TEST(S3DestinationUrl, UrlRoundTripsWithoutCredentials) {
  SavedEnvironment saved;
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLEKEYID", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "very-secret-value", 1);
  auto destination =
      open_destination("s3://lake/raw?endpoint=http://127.0.0.1:9&region=eu-west-1&path_style=1");
  const std::string url = destination->url();
  EXPECT_EQ(url,
            "s3://lake/raw?endpoint=http://127.0.0.1:9&region=eu-west-1&format=jsonl&"
            "path_style=1");
  EXPECT_EQ(open_destination(url)->url(), url);
  EXPECT_EQ(url.find("AKIDEXAMPLEKEYID"), std::string::npos);
  EXPECT_EQ(url.find("very-secret-value"), std::string::npos);
}

TEST(S3DestinationErrors, MissingCredentialsNameTheVariable) {
  SavedEnvironment saved;
  ::unsetenv("AWS_ACCESS_KEY_ID");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  std::string message = error_of([] { open_destination("s3://lake"); });
  EXPECT_NE(message.find("AWS_ACCESS_KEY_ID"), std::string::npos) << message;
}

TEST(S3DestinationErrors, UnreachableEndpointIsReportedAfterRetries) {
  SavedEnvironment saved;
  ::setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLEKEYID", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "very-secret-value", 1);
  S3Destination::Options options;
  options.bucket = "lake";
  options.endpoint = "http://127.0.0.1:1";  // nothing listens on port 1
  options.attempts = 2;
  S3Destination destination(options);
  DatasetRef ref{"crm", "customers", nullptr};
  std::string message = error_of([&] { destination.read(ref, nullptr); });
  EXPECT_NE(message.find("cannot reach s3://lake at http://127.0.0.1:1"), std::string::npos)
      << message;
  EXPECT_NE(message.find("after 2 attempts"), std::string::npos) << message;
  EXPECT_EQ(message.find("very-secret-value"), std::string::npos) << message;
  EXPECT_EQ(message.find("AKIDEXAMPLEKEYID"), std::string::npos) << message;
}

TEST(S3DestinationErrors, WrongCredentialsAreAccessDenied) {
  IL_REQUIRE_S3(server);
  SavedEnvironment saved;
  // The strict server checks signatures: this also proves ours, multipart uploads included.
  auto good = testing::test_s3_destination(server, "credentials", FileDestination::Format::jsonl,
                                           true, std::size_t{5} << 20);
  DatasetRef ref{"crm", "customers", nullptr};
  Table rows;
  for (int i = 0; i < 60000; ++i) rows.append({{"id", i}, {"note", std::string(100, 'n')}});
  good->write(ref, nullptr, rows);  // about 7 MB: two parts
  EXPECT_EQ(good->row_count(ref, nullptr), 60000);

  for (const auto& [key_id, secret] :
       {std::pair<std::string, std::string>{server.access_key_id, "not-the-secret-123"},
        std::pair<std::string, std::string>{"AKIAUNKNOWNKEY000000", "not-the-secret-123"}}) {
    ::setenv("AWS_ACCESS_KEY_ID", key_id.c_str(), 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", secret.c_str(), 1);
    auto bad = open_destination(good->url());
    std::string message = error_of([&] { bad->write(ref, nullptr, rows); });
    EXPECT_NE(message.find("access denied"), std::string::npos) << message;
    EXPECT_NE(message.find("AWS_SECRET_ACCESS_KEY"), std::string::npos) << message;
    EXPECT_EQ(message.find("not-the-secret-123"), std::string::npos) << message;
    EXPECT_EQ(message.find(key_id), std::string::npos) << message;
    EXPECT_NE(error_of([&] { bad->read(ref, nullptr); }).find("access denied"), std::string::npos);
  }
  testing::use_test_credentials(server);
  EXPECT_EQ(good->read(ref, nullptr), rows);
}

TEST(S3DestinationErrors, MissingBucketIsNamed) {
  IL_REQUIRE_S3(server);
  SavedEnvironment saved;
  testing::use_test_credentials(server);
  auto destination = open_destination("s3://no-such-bucket-here/x?endpoint=" + server.endpoint);
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef ref{"ads", "stats", &daily};
  TimePartitionWindow window(testing::day(2026, 1, 1), testing::day(2026, 1, 2));
  Table rows;
  rows.append({{"date", testing::day(2026, 1, 1)}, {"clicks", 1}});
  for (const std::string& message :
       {error_of([&] { destination->write(ref, &window, rows); }),
        error_of([&] { destination->read(ref, &window); }),
        error_of([&] { destination->partition_counts(ref, window); })}) {
    EXPECT_NE(message.find("bucket 'no-such-bucket-here' does not exist"), std::string::npos)
        << message;
  }
}

TEST(S3DestinationLayout, AnIndependentClientSeesEscapedPartitions) {
  IL_REQUIRE_S3(server);
  SavedEnvironment saved;
  auto destination = testing::test_s3_destination(server, "layout");
  const std::string long_value(300, 'x');
  const std::vector<std::string> values = {"eu/west",
                                           "..",
                                           "../x",
                                           "%2F",
                                           "with space",
                                           "\xc3\xbcn\xc3\xaf \xe2\x98\x83",
                                           std::string("nul\0byte", 8),
                                           "a=b",
                                           long_value,
                                           "never"};
  interloper::testing::AnyValueList config("region", values, true);
  DatasetRef ref{"shop", "sales", &config};
  Table rows;
  for (std::size_t i = 0; i + 3 < values.size(); ++i) {  // all but "a=b", the long one, "never"
    rows.append({{"region", values[i]}, {"amount", static_cast<int>(i)}});
  }
  rows.append({{"region", long_value}, {"amount", 99}});
  auto written = config.window(values.front(), long_value);  // "never" stays unwritten
  ASSERT_EQ(destination->write(ref, &written, rows), static_cast<std::int64_t>(rows.num_rows()));

  const std::string prefix = S3Destination::parse_url(destination->url()).prefix + "/";
  json seen = boto3(server, "interloper-test",
                    "prefix = sys.argv[3]\n"
                    "keys = {o['Key']: o['Size'] for o in s3.list_objects_v2(Bucket=bucket, "
                    "Prefix=prefix)['Contents']}\n"
                    "one = s3.get_object(Bucket=bucket, Key=prefix + "
                    "'shop/sales/region=eu%2Fwest/data.jsonl')\n"
                    "empty = s3.head_object(Bucket=bucket, Key=prefix + "
                    "'shop/sales/region=a%3Db/data.jsonl')\n"
                    "print(json.dumps({'keys': keys, 'body': one['Body'].read().decode(), "
                    "'rows': one['Metadata'].get('rows'), 'empty_rows': "
                    "empty['Metadata'].get('rows')}))\n",
                    prefix);
  std::map<std::string, std::int64_t> expected_keys{{prefix + "shop/sales/_schema.json", -1}};
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    const std::string dir = prefix + "shop/sales/region=" + FileDestination::escape_key(values[i]);
    expected_keys[dir + "/data.jsonl"] = -1;
    expected_keys[dir + "/_written"] = -1;  // what the object was when written
  }
  std::map<std::string, std::int64_t> keys;
  for (const auto& [key, size] : seen["keys"].items()) keys[key] = -1;
  EXPECT_EQ(keys, expected_keys);
  EXPECT_EQ(seen["keys"][prefix + "shop/sales/region=a%3Db/data.jsonl"], 0);
  EXPECT_EQ(seen["body"].get<std::string>(), "{\"region\":\"eu/west\",\"amount\":0}\n");
  EXPECT_EQ(seen["rows"].get<std::string>(), "1");
  EXPECT_EQ(seen["empty_rows"].get<std::string>(), "0");

  // Listing, counts and reads give the original keys back, the long one included.
  std::vector<std::string> listed = destination->partition_keys(ref);
  std::vector<std::string> stored(values.begin(), values.end() - 1);
  std::sort(stored.begin(), stored.end());
  EXPECT_EQ(listed, stored);
  auto counts = destination->partition_counts(ref, config.window(values.front(), values.back()));
  ASSERT_EQ(counts.size(), values.size());
  EXPECT_TRUE(counts[7].written);  // "a=b": written with no rows
  EXPECT_EQ(counts[7].rows, 0);
  EXPECT_TRUE(counts[8].written);
  EXPECT_EQ(counts[8].rows, 1);
  EXPECT_FALSE(counts[9].written);  // "never": no object at all
  ListPartition long_partition(long_value);
  Table back = destination->read(ref, long_partition.as_window().get());
  ASSERT_EQ(back.num_rows(), 1u);
  EXPECT_EQ(back.at(0, "amount"), Value(99));
}

// status --verify's question: is each partition's object still what the destination wrote? An
// independent client overwrites one object and truncates another.
TEST(S3DestinationVerify, AnObjectOverwrittenOrTruncatedBehindItsBackIsChanged) {
  IL_REQUIRE_S3(server);
  SavedEnvironment saved;
  auto destination = testing::test_s3_destination(server, "verify");
  ListPartitionConfig config("region", {"eu", "us", "asia", "never"}, true);
  DatasetRef ref{"shop", "sales", &config};
  Table rows;
  for (const char* region : {"eu", "us", "asia"}) rows.append({{"region", region}, {"n", 1}});
  auto window = config.window("eu", "never");
  auto written = config.window("eu", "asia");
  destination->write(ref, &written, rows);
  using State = PartitionCheck::State;
  auto states = [&] {
    std::vector<State> out;
    for (const PartitionCheck& c : destination->check_partitions(ref, window)) {
      out.push_back(c.state);
    }
    return out;
  };
  EXPECT_EQ(states(),
            (std::vector<State>{State::present, State::present, State::present, State::missing}));

  const std::string prefix = S3Destination::parse_url(destination->url()).prefix + "/";
  boto3(server, "interloper-test",
        "p = sys.argv[3] + 'shop/sales/'\n"
        "s3.put_object(Bucket=bucket, Key=p + 'region=eu/data.jsonl', "
        "Body=b'{\"region\":\"eu\",\"n\":7}\\n')\n"
        "s3.put_object(Bucket=bucket, Key=p + 'region=us/data.jsonl', Body=b'{\"reg')\n"
        "print('{}')\n",
        prefix);
  const std::vector<PartitionCheck> checks = destination->check_partitions(ref, window);
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].key, "eu");
  EXPECT_EQ(checks[0].state, State::changed);  // same size, another ETag
  EXPECT_EQ(checks[0].object, "s3://interloper-test/" + prefix + "shop/sales/region=eu/data.jsonl");
  EXPECT_NE(checks[0].reason.find("ETag "), std::string::npos) << checks[0].reason;
  EXPECT_EQ(checks[1].state, State::changed);
  EXPECT_NE(checks[1].reason.find("size 5, written 22"), std::string::npos) << checks[1].reason;
  EXPECT_EQ(checks[2].state, State::present);
  EXPECT_EQ(checks[3].state, State::missing);
  // A record someone garbled is reported, not trusted.
  boto3(server, "interloper-test",
        "s3.put_object(Bucket=bucket, Key=sys.argv[3] + 'shop/sales/region=asia/_written', "
        "Body=b'24')\n"
        "print('{}')\n",
        prefix);
  const PartitionCheck garbled = destination->check_partitions(ref, window)[2];
  EXPECT_EQ(garbled.state, State::changed);
  EXPECT_NE(garbled.reason.find("written  (24 bytes)"), std::string::npos) << garbled.reason;

  // Writing again records the new objects; an object without a record (written before records
  // were kept) is checked for existence only.
  destination->write(ref, &written, rows);
  EXPECT_EQ(states(),
            (std::vector<State>{State::present, State::present, State::present, State::missing}));
  boto3(server, "interloper-test",
        "p = sys.argv[3] + 'shop/sales/'\n"
        "s3.delete_object(Bucket=bucket, Key=p + 'region=eu/_written')\n"
        "s3.put_object(Bucket=bucket, Key=p + 'region=eu/data.jsonl', Body=b'')\n"
        "print('{}')\n",
        prefix);
  EXPECT_EQ(states()[0], State::present);
  // Dropping a partition drops its record too.
  auto us = config.window("us", "us");
  destination->drop(ref, &us);
  json left = boto3(server, "interloper-test",
                    "r = s3.list_objects_v2(Bucket=bucket, Prefix=sys.argv[3] + "
                    "'shop/sales/region=us/')\n"
                    "print(json.dumps(sorted(o['Key'] for o in r.get('Contents', []))))\n",
                    prefix);
  EXPECT_EQ(left, json::array()) << left;
  // A write batch by batch records its objects as a single write does.
  auto writer = destination->open_writer(ref, &written);
  writer->append(rows);
  writer->commit();
  EXPECT_EQ(states(),
            (std::vector<State>{State::present, State::present, State::present, State::missing}));
}

TEST(S3DestinationLayout, AWindowReadsObjectsInOrderAndNamesABadOne) {
  IL_REQUIRE_S3(server);
  SavedEnvironment saved;
  auto destination = testing::test_s3_destination(server, "read-order");
  const std::string prefix = S3Destination::parse_url(destination->url()).prefix;
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef ref{"ads", "clicks", &daily};
  // More partitions than requests in flight, so that fetching runs ahead of decoding.
  TimePartitionWindow window(testing::day(2026, 1, 1), testing::day(2026, 1, 12));
  Table rows;
  for (int d = 1; d <= 12; ++d) {
    for (int i = 0; i < 50; ++i)
      rows.append({{"date", testing::day(2026, 1, d)}, {"n", d * 100 + i}});
  }
  destination->write(ref, &window, rows);
  EXPECT_EQ(destination->read(ref, &window), rows);

  // Another tool replaces one object in the middle with a value that is not the stored type.
  boto3(server, "interloper-test",
        "s3.put_object(Bucket=bucket, Key=sys.argv[3] + '/ads/clicks/date=2026-01-07/data.jsonl', "
        "Body=b'{\"date\":\"2026-01-07\",\"n\":1}\\n{\"date\":\"2026-01-07\",\"n\":\"x\"}\\n')\n"
        "print('{}')\n",
        prefix);
  const std::string message = error_of([&] { destination->read(ref, &window); });
  EXPECT_NE(message.find("date=2026-01-07/data.jsonl"), std::string::npos) << message;
  EXPECT_NE(message.find("row 2 (line 2): column 'n'"), std::string::npos) << message;
}

TEST(S3DestinationLayout, ALastBatchThatCannotBeWrittenLeavesEveryPartitionAsItWas) {
  IL_REQUIRE_S3(server);
  SavedEnvironment saved;
  auto destination = testing::test_s3_destination(server, "last-batch");
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef ref{"ads", "costs", &daily};
  TimePartitionWindow window(testing::day(2026, 1, 1), testing::day(2026, 1, 12));
  auto days = [](double cost_of_the_ninth) {
    Table t;
    for (int d = 1; d <= 12; ++d) {
      t.append({{"date", testing::day(2026, 1, d)}, {"cost", d == 9 ? cost_of_the_ninth : 0.5}});
    }
    return t;
  };
  const Table before = days(1.5);
  destination->write(ref, &window, before);
  // Partitions are sent while later ones are encoded; a value JSON cannot hold in the ninth is
  // found before the first is sent.
  auto writer = destination->open_writer(ref, &window);
  const std::string message =
      error_of([&] { writer->append_and_commit(days(std::numeric_limits<double>::infinity())); });
  EXPECT_NE(message.find("column 'cost' row 9"), std::string::npos) << message;
  EXPECT_EQ(destination->read(ref, &window), before);
}

TEST(S3DestinationLayout, LargePartitionsGoUpInPartsAndStream) {
  IL_REQUIRE_S3(server);
  SavedEnvironment saved;
  auto destination = testing::test_s3_destination(
      server, "multipart", FileDestination::Format::jsonl, false, std::size_t{5} << 20);
  const std::string prefix = S3Destination::parse_url(destination->url()).prefix;
  TimePartitionConfig daily{"date", {.allow_window = true}};
  DatasetRef ref{"ads", "events", &daily};
  TimePartitionWindow window(testing::day(2026, 1, 1), testing::day(2026, 1, 2));

  const std::string padding(100, 'p');
  auto batch = [&](int first, int count) {
    Table t;
    for (int i = first; i < first + count; ++i) {
      t.append({{"date", testing::day(2026, 1, 1)}, {"id", i}, {"note", padding}});
    }
    return t;
  };
  const int batches = 12, per_batch = 10000;  // about 14 MB in one partition
  {
    auto abandoned = destination->open_writer(ref, &window);
    abandoned->append(batch(0, per_batch));
  }  // never committed: nothing was stored
  EXPECT_TRUE(destination->partition_keys(ref).empty());

  auto writer = destination->open_writer(ref, &window);
  for (int b = 0; b < batches; ++b) writer->append(batch(b * per_batch, per_batch));
  EXPECT_EQ(writer->commit(), batches * per_batch);

  json seen = boto3(server, "interloper-test",
                    "head = s3.head_object(Bucket=bucket, Key='" + prefix +
                        "/ads/events/date=2026-01-01/data.jsonl')\n"
                        "print(json.dumps({'etag': head['ETag'], 'size': head['ContentLength'], "
                        "'rows': head['Metadata']['rows']}))\n");
  const std::string etag = seen["etag"];
  const std::int64_t size = seen["size"];
  const std::int64_t part = std::int64_t{5} << 20;
  EXPECT_GT(size, 2 * part);
  // A multipart object's ETag ends with its number of parts.
  EXPECT_NE(etag.find(fmt::format("-{}\"", (size + part - 1) / part)), std::string::npos) << etag;
  EXPECT_EQ(seen["rows"].get<std::string>(), std::to_string(batches * per_batch));

  TimePartition first(testing::day(2026, 1, 1));
  EXPECT_EQ(destination->row_count(ref, &first), batches * per_batch);
  Table back = destination->read(ref, &window);
  ASSERT_EQ(back.num_rows(), static_cast<std::size_t>(batches * per_batch));
  EXPECT_EQ(back.at(back.num_rows() - 1, "id"), Value(batches * per_batch - 1));
  EXPECT_EQ(destination->partition_keys(ref),
            (std::vector<std::string>{"2026-01-01", "2026-01-02"}));
}

}  // namespace
}  // namespace interloper
