// `interloper serve` over HTTP: a real server on a free loopback port, over a pipeline with
// materialized, failed and missing partitions in a real SQLite store.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/cli_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

// A running `interloper serve`, stopped (SIGTERM, then reaped) when destroyed.
class Server {
 public:
  Server(const fs::path& dir, std::vector<std::string> args) : port_(free_port()) {
    args.push_back("--port");
    args.push_back(std::to_string(port_));
    pid_ = ::fork();
    if (pid_ == 0) {
      if (::chdir(dir.c_str()) != 0) ::_exit(127);
      const std::string binary = interloper::testing::interloper_binary();
      std::vector<char*> argv = {const_cast<char*>(binary.c_str())};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    // Bounded wait for the port to answer.
    for (int i = 0; i < 200; ++i) {
      if (client().Get("/api/runs")) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "serve did not answer on port " << port_;
  }
  ~Server() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(2);
    c.set_read_timeout(10);
    return c;
  }
  std::string url(const std::string& path) const {
    return fmt::format("http://127.0.0.1:{}{}", port_, path);
  }
  json get(const std::string& path, int expected = 200) const {
    auto response = client().Get(path);
    if (!response) {
      ADD_FAILURE() << "no answer to " << path;
      return json();
    }
    EXPECT_EQ(response->status, expected) << path << ": " << response->body;
    EXPECT_EQ(response->get_header_value("Content-Type"), "application/json") << path;
    return json::parse(response->body);
  }

 private:
  int port_;
  pid_t pid_ = -1;
};

class Serve : public ::testing::Test {
 protected:
  void SetUp() override {
    temp_.write("emit.sh",
                "#!/bin/sh\n"
                "if [ \"$1\" = 2026-03-04 ]; then echo \"upstream lost $1\" >&2; exit 3; fi\n"
                "echo \"{\\\"date\\\":\\\"$1\\\",\\\"n\\\":1}\"\n",
                true);
    temp_.write(
        "pipeline.yaml",
        "sources:\n"
        "  - name: shop\n"
        "    destination: sqlite://.interloper/data.db\n"
        "    assets:\n"
        "      - name: events\n"
        "        partitioning: {kind: time, column: date, granularity: day, start: "
        "2026-03-01}\n"
        "        command: [./emit.sh, \"{partition.key}\"]\n"
        "      - name: totals\n"
        "        deps: [events]\n"
        "        partitioning: {kind: time, column: date, granularity: day, start: "
        "2026-03-01}\n"
        "        sql: SELECT date, n FROM events WHERE date >= :bounds_start AND date < "
        ":bounds_end\n"
        "      - name: regions\n"
        "        partitioning: {kind: list, column: region, values: [eu, '<script>x</script>']}\n"
        "        command: [/bin/sh, -c, 'echo "
        "\"{{\\\"region\\\":\\\"$IL_PARTITION_KEY\\\"}}\"']\n");
    auto o = interloper::testing::run_interloper(
        {"backfill", "pipeline.yaml", "--window", "2026-03-01..2026-03-05", "--asset", "events"},
        dir_.string());
    ASSERT_EQ(o.code, 1) << o.err;  // one partition fails
    o = interloper::testing::run_interloper(
        {"materialize", "pipeline.yaml", "--window", "<script>x</script>", "--asset", "regions"},
        dir_.string());
    ASSERT_EQ(o.code, 0) << o.err;
  }

  interloper::testing::TempDir temp_{"il_serve"};
  const fs::path dir_ = temp_.path();
};

const json& asset_of(const json& overview, const std::string& name) {
  for (const json& a : overview["assets"]) {
    if (a["name"] == name) return a;
  }
  static const json none;
  ADD_FAILURE() << "no asset " << name;
  return none;
}

TEST_F(Serve, OverviewCountsEveryAssetOverTheWindow) {
  Server server(dir_, {"serve", "pipeline.yaml", "--window", "2026-03-01..2026-03-06"});
  const json overview = server.get("/api/overview");
  ASSERT_EQ(overview["assets"].size(), 3u);
  const json& events = asset_of(overview, "events");
  EXPECT_EQ(events["source"], "shop");
  EXPECT_EQ(events["window"], "2026-03-01..2026-03-06");
  EXPECT_EQ(events["partitions"], 6);
  EXPECT_EQ(events["materialized"], 4);
  EXPECT_EQ(events["failed"], 1);
  EXPECT_EQ(events["missing"], 1);
  EXPECT_EQ(events["partitioning"]["granularity"], "day");
  EXPECT_NE(events["destination"].get<std::string>().find("data.db"), std::string::npos);
  EXPECT_EQ(asset_of(overview, "totals")["missing"], 6);
  // The list asset is counted over all its values, whatever the time window says.
  const json& regions = asset_of(overview, "regions");
  EXPECT_EQ(regions["partitions"], 2);
  EXPECT_EQ(regions["materialized"], 1);
  EXPECT_EQ(regions["missing"], 1);
  ASSERT_TRUE(overview["last_run"].is_object());
  EXPECT_EQ(overview["last_run"]["status"], "succeeded");
}

TEST_F(Serve, GridGivesCellsRangesAndPartitionDetail) {
  Server server(dir_, {"serve", "pipeline.yaml"});
  const json grid = server.get("/api/assets/events?window=2026-03-01..2026-03-06");
  EXPECT_EQ(grid["granularity"], "day");
  EXPECT_EQ(grid["partitions"], 6);
  ASSERT_EQ(grid["cells"].size(), 6u);
  EXPECT_EQ(grid["cells"][3]["key"], "2026-03-04");
  EXPECT_EQ(grid["cells"][3]["state"], "failed");
  EXPECT_EQ(grid["cells"][5]["state"], "missing");
  EXPECT_EQ(grid["ranges"]["materialized"], json::parse("[[0,2],[4,4]]"));
  EXPECT_EQ(grid["counts"]["failed"], 1);

  const json failed = server.get("/api/assets/events/partitions/2026-03-04");
  EXPECT_EQ(failed["state"], "failed");
  EXPECT_NE(failed["error"].get<std::string>().find("upstream lost 2026-03-04"), std::string::npos)
      << failed;
  EXPECT_FALSE(failed["run_id"].get<std::string>().empty());
  const json done = server.get("/api/assets/events/partitions/2026-03-02");
  EXPECT_EQ(done["state"], "materialized");
  EXPECT_FALSE(done.contains("error")) << done;
  EXPECT_EQ(server.get("/api/assets/events/partitions/2026-03-06")["state"], "missing");

  const json regions = server.get("/api/assets/regions");
  ASSERT_EQ(regions["cells"].size(), 2u);
  EXPECT_EQ(regions["cells"][1]["key"], "<script>x</script>");
  EXPECT_EQ(regions["cells"][1]["state"], "materialized");
}

TEST_F(Serve, LargeWindowsComeInBuckets) {
  Server server(dir_, {"serve", "pipeline.yaml"});
  const json grid = server.get("/api/assets/events?window=2026-03-01..2126-03-01");
  EXPECT_FALSE(grid.contains("cells"));
  ASSERT_GT(grid["buckets"].size(), 100u);
  ASSERT_LE(grid["buckets"].size(), 1000u);
  const json& first = grid["buckets"][0];
  EXPECT_EQ(first["first"], "2026-03-01");
  EXPECT_EQ(first["materialized"], 4);
  EXPECT_EQ(first["failed"], 1);
  std::int64_t total = 0;
  for (const json& b : grid["buckets"]) {
    total += b["materialized"].get<std::int64_t>() + b["failed"].get<std::int64_t>() +
             b["missing"].get<std::int64_t>();
  }
  EXPECT_EQ(total, grid["partitions"].get<std::int64_t>());
}

TEST_F(Serve, LineageAndRuns) {
  Server server(dir_, {"serve", "pipeline.yaml"});
  const json lineage = server.get("/api/lineage");
  ASSERT_EQ(lineage["nodes"].size(), 3u);
  ASSERT_EQ(lineage["edges"].size(), 1u);
  EXPECT_EQ(lineage["edges"][0]["from"], "events");
  EXPECT_EQ(lineage["edges"][0]["to"], "totals");
  for (const json& node : lineage["nodes"]) {
    EXPECT_EQ(node["layer"], node["name"] == "totals" ? 1 : 0) << node;
  }
  const json runs = server.get("/api/runs");
  ASSERT_EQ(runs["runs"].size(), 2u);
  EXPECT_EQ(runs["runs"][0]["status"], "succeeded");  // newest first: the materialize
  EXPECT_EQ(runs["runs"][1]["status"], "failed");
  EXPECT_EQ(runs["runs"][1]["failed"], 1);
  EXPECT_EQ(runs["runs"][1]["window"], "2026-03-01..2026-03-05");
}

TEST_F(Serve, BadRequestsAnswerJsonErrors) {
  Server server(dir_, {"serve", "pipeline.yaml"});
  EXPECT_NE(server.get("/api/assets/nope", 400)["error"].get<std::string>().find("nope"),
            std::string::npos);
  EXPECT_NE(
      server.get("/api/assets/events?window=2026-13-01", 400)["error"].get<std::string>().find(
          "2026-13-01"),
      std::string::npos);
  EXPECT_TRUE(
      server.get("/api/assets/events?window=2026-03-05..2026-03-01", 400).contains("error"));
  EXPECT_TRUE(server.get("/api/assets/regions?window=mars", 400).contains("error"));
  EXPECT_TRUE(server.get("/api/assets/events/partitions/yesterday", 400).contains("error"));
  EXPECT_TRUE(server.get("/api/nothing", 404).contains("error"));
  EXPECT_TRUE(server.get("/nothing/here", 404).contains("error"));
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The pages after their scripts ran, in headless Chromium.
TEST_F(Serve, PagesRenderInChromium) {
  const std::string chromium = "/usr/bin/chromium";
  if (!fs::exists(chromium)) {
    const char* ci = std::getenv("CI");
    if (ci != nullptr && std::string(ci) == "true") FAIL() << "chromium is missing";
    GTEST_SKIP() << "chromium is missing: install Debian's chromium to run the browser test";
  }
  Server server(dir_, {"serve", "pipeline.yaml"});
  auto dump = [&](const std::string& path, const std::string& screenshot = "") {
    std::vector<std::string> argv = {chromium,
                                     "--headless",
                                     "--no-sandbox",
                                     "--disable-gpu",
                                     "--virtual-time-budget=5000",
                                     "--user-data-dir=" + (dir_ / "chromium").string()};
    if (!screenshot.empty()) {
      argv.push_back("--screenshot=" + (fs::path(IL_TEST_BINARY_DIR) / screenshot).string());
      argv.push_back("--window-size=1280,900");
    } else {
      argv.push_back("--dump-dom");
    }
    argv.push_back(server.url(path));
    const auto o = interloper::testing::run_command(argv);
    EXPECT_EQ(o.code, 0) << o.err;
    return o.out;
  };
  const std::string overview = dump("/");
  EXPECT_EQ(occurrences(overview, "<tr class=\"asset\">"), 3u) << overview;
  EXPECT_NE(overview.find("href=\"/assets/events\""), std::string::npos);

  const std::string events = dump("/assets/events?window=2026-03-01..2026-03-06");
  EXPECT_EQ(occurrences(events, "class=\"cell materialized\""), 4u) << events;
  EXPECT_EQ(occurrences(events, "class=\"cell failed\""), 1u);
  EXPECT_EQ(occurrences(events, "class=\"cell missing\""), 1u);
  EXPECT_NE(events.find("upstream lost 2026-03-04"), std::string::npos);

  const std::string regions = dump("/assets/regions");
  EXPECT_NE(regions.find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos) << regions;
  EXPECT_EQ(regions.find("<script>x</script>"), std::string::npos);

  const std::string lineage = dump("/lineage");
  EXPECT_EQ(occurrences(lineage, "class=\"node\""), 3u) << lineage;
  const std::string runs = dump("/runs");
  EXPECT_EQ(occurrences(runs, "<tr class=\"run\">"), 2u) << runs;

  dump("/", "serve-overview.png");
  dump("/assets/events?window=2026-03-01..2026-03-31", "serve-asset.png");
}

TEST_F(Serve, AllowRunsBackfillsWithTheTokenOnly) {
  {
    Server read_only(dir_, {"serve", "pipeline.yaml"});
    auto r = read_only.client().Post("/api/assets/totals/backfill", "", "text/plain");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
  }
  Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs"});
  const std::string page = server.client().Get("/")->body;
  const std::string marker = "name=\"interloper-token\" content=\"";
  const auto at = page.find(marker);
  ASSERT_NE(at, std::string::npos);
  const std::string token = page.substr(at + marker.size(), 32);
  const std::string path = "/api/assets/totals/backfill?window=2026-03-01..2026-03-02";
  auto client = server.client();
  EXPECT_EQ(client.Post(path, "", "text/plain")->status, 403);
  EXPECT_EQ(client.Post(path, {{"X-Interloper-Token", "0"}}, "", "text/plain")->status, 403);
  EXPECT_EQ(
      client.Post("/api/assets/nope/backfill", {{"X-Interloper-Token", token}}, "", "text/plain")
          ->status,
      400);
  auto r = client.Post(path, {{"X-Interloper-Token", token}}, "", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  // Bounded wait for the backfill child to record both days.
  json grid;
  for (int i = 0; i < 200; ++i) {
    grid = server.get("/api/assets/totals?window=2026-03-01..2026-03-02");
    if (grid["counts"]["materialized"] == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(grid["counts"]["materialized"], 2) << grid;
}

TEST_F(Serve, RefusesAnAddressItCannotBind) {
  const auto o = interloper::testing::run_interloper(
      {"serve", "pipeline.yaml", "--host", "203.0.113.7", "--port", "1"}, dir_.string());
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("cannot listen on 203.0.113.7:1"), std::string::npos) << o.err;
}

}  // namespace
