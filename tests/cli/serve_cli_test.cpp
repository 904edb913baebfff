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
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "interloper/postgres/postgres.hpp"
#include "interloper/time.hpp"
#include "support/chromium.hpp"
#include "support/cli_process.hpp"
#include "support/postgres.hpp"
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
  int port() const { return port_; }
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
    // The day named by $HOLD_DAY creates `held` and waits (at most 60 s) for `release`.
    temp_.write("emit.sh",
                "#!/bin/sh\n"
                "if [ \"$1\" = 2026-03-04 ]; then echo \"upstream lost $1\" >&2; exit 3; fi\n"
                "if [ \"$1\" = \"$HOLD_DAY\" ]; then\n"
                "  touch held; i=0\n"
                "  while [ ! -e release ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
                "fi\n"
                "echo \"{\\\"date\\\":\\\"$1\\\",\\\"n\\\":1}\"\n",
                true);
    temp_.write(
        "pipeline.yaml",
        "sources:\n"
        "  - name: shop\n"
        "    description: The web shop's order API\n"
        "    destination: sqlite://.interloper/data.db\n"
        "    assets:\n"
        "      - name: events\n"
        "        description: |\n"
        "          One row per order <b>placed</b>,\n"
        "          by day of placing.\n"
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
        "\"{{\\\"region\\\":\\\"$IL_PARTITION_KEY\\\"}}\"']\n"
        "jobs:\n"
        "  - name: nightly\n"
        "    cron: \"0 3 * * *\"\n"
        "    time_zone: Europe/Berlin\n"
        "    assets: [events]\n"
        "    lookback: 2\n"
        "    offset: 1\n");
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
  // What the file says the asset and its source are, without the block's last line break.
  EXPECT_EQ(events["description"], "One row per order <b>placed</b>,\nby day of placing.");
  EXPECT_EQ(events["source_description"], "The web shop's order API");
  EXPECT_TRUE(asset_of(overview, "totals")["description"].is_null());
  // The list asset is counted over all its values, whatever the time window says.
  const json& regions = asset_of(overview, "regions");
  EXPECT_EQ(regions["partitions"], 2);
  EXPECT_EQ(regions["materialized"], 1);
  EXPECT_EQ(regions["missing"], 1);
  ASSERT_TRUE(overview["last_run"].is_object());
  EXPECT_EQ(overview["last_run"]["status"], "succeeded");
  // Per asset, the failure that ended last: the store keeps a run and a time for failed
  // partitions only.
  const json& failure = events["last_failure"];
  ASSERT_TRUE(failure.is_object()) << events;
  EXPECT_EQ(failure["partitions"], "2026-03-04");
  const json history = server.get("/api/runs")["runs"];
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(failure["run_id"], history[1]["run_id"]);  // the backfill, not the last run
  EXPECT_GE(failure["finished"].get<std::string>(), history[1]["started"].get<std::string>());
  EXPECT_NE(failure["error"].get<std::string>().find("upstream lost 2026-03-04"),
            std::string::npos);
  EXPECT_TRUE(asset_of(overview, "totals")["last_failure"].is_null());
  EXPECT_TRUE(regions["last_failure"].is_null());
  // Per asset, what last ran it: the backfill for events, the materialize for regions.
  EXPECT_EQ(events["last_run"]["run_id"], history[1]["run_id"]) << events;
  EXPECT_EQ(regions["last_run"]["run_id"], history[0]["run_id"]) << regions;
  EXPECT_EQ(regions["last_run"]["status"], "materialized");
  EXPECT_EQ(regions["last_run"]["rows"], 1);
  EXPECT_TRUE(asset_of(overview, "totals")["last_run"].is_null());
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
  EXPECT_EQ(grid["description"], "One row per order <b>placed</b>,\nby day of placing.");
  EXPECT_EQ(grid["source"], "shop");
  EXPECT_EQ(grid["source_description"], "The web shop's order API");

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

// Whether the browser tests can run: a missing Chromium skips them, or fails them under CI.
bool have_chromium() {
  if (fs::exists(interloper::testing::kChromium)) return true;
  const char* ci = std::getenv("CI");
  if (ci != nullptr && std::string(ci) == "true") ADD_FAILURE() << "chromium is missing";
  return false;
}

std::size_t occurrences(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The pages after their scripts ran, in headless Chromium.
TEST_F(Serve, PagesRenderInChromium) {
  const std::string chromium = interloper::testing::kChromium;
  if (!have_chromium()) GTEST_SKIP() << "chromium is missing: install Debian's chromium";
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
  EXPECT_EQ(occurrences(overview, "<td class=\"last-failure\">"), 3u);
  EXPECT_EQ(occurrences(overview, "<td class=\"last-run\">"), 3u);
  EXPECT_NE(overview.find(">materialized · <span class=\"when\"><span class=\"nobr\">2026-"),
            std::string::npos)
      << overview;
  EXPECT_NE(overview.find(">2026-03-04</span> · <span class=\"when\"><span class=\"nobr\">2026-"),
            std::string::npos)
      << overview;
  // Run ids show as their salt and counter, the whole id on hover.
  EXPECT_EQ(occurrences(overview, "<code class=\"run-id nobr\" title=\"run-"), 3u) << overview;
  // Descriptions, as text: the asset's under its name, its source's on hover over the source.
  EXPECT_NE(overview.find("<span class=\"desc\">One row per order &lt;b&gt;placed&lt;/b&gt;,\nby "
                          "day of placing.</span>"),
            std::string::npos)
      << overview;
  EXPECT_EQ(overview.find("<b>placed"), std::string::npos);
  EXPECT_EQ(occurrences(overview, "<td class=\"source\" title=\"The web shop's order API\">"), 3u)
      << overview;
  // Read-only: no button starts a run.
  EXPECT_EQ(occurrences(overview, "<button"), 0u);

  const std::string events = dump("/assets/events?window=2026-03-01..2026-03-06");
  EXPECT_EQ(occurrences(events, "class=\"cell materialized\""), 4u) << events;
  EXPECT_EQ(occurrences(events, "class=\"cell failed\""), 1u);
  EXPECT_EQ(occurrences(events, "class=\"cell missing\""), 1u);
  EXPECT_NE(events.find("upstream lost 2026-03-04"), std::string::npos);
  EXPECT_EQ(occurrences(events, "<button"), 0u);
  EXPECT_NE(events.find("<p class=\"about\">One row per order &lt;b&gt;placed&lt;/b&gt;,"),
            std::string::npos)
      << events;
  EXPECT_NE(events.find(">source shop: The web shop's order API<"), std::string::npos) << events;

  const std::string regions = dump("/assets/regions");
  EXPECT_NE(regions.find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos) << regions;
  EXPECT_EQ(regions.find("<script>x</script>"), std::string::npos);

  const std::string lineage = dump("/lineage");
  EXPECT_EQ(occurrences(lineage, "class=\"node\""), 3u) << lineage;
  const std::string runs = dump("/runs");
  EXPECT_EQ(occurrences(runs, "<tr class=\"run\">"), 2u) << runs;
  EXPECT_EQ(occurrences(runs, "<tr class=\"job\">"), 1u);
  EXPECT_EQ(occurrences(runs, "<span class=\"fire\""), 3u);

  dump("/", "serve-overview.png");
  dump("/assets/events?window=2026-03-01..2026-03-31", "serve-asset.png");
}

// The token a page served with --allow-runs carries.
std::string token_of(const Server& server) {
  const std::string page = server.client().Get("/")->body;
  const std::string marker = "name=\"interloper-token\" content=\"";
  const auto at = page.find(marker);
  if (at == std::string::npos) return "";
  return page.substr(at + marker.size(), 32);
}

struct Answer {
  int status = 0;
  json body;
};

// POSTs a backfill of `asset` over `window` ("" for its default) with the page's token.
Answer start_backfill(const Server& server, const std::string& token, const std::string& asset,
                      const std::string& window) {
  const std::string path =
      "/api/assets/" + asset + "/backfill" + (window.empty() ? "" : "?window=" + window);
  auto r = server.client().Post(path, {{"X-Interloper-Token", token}}, "", "text/plain");
  if (!r) {
    ADD_FAILURE() << "no answer to POST " << path;
    return {};
  }
  return {r->status, json::parse(r->body)};
}

// Sends `request` as it is on a socket of its own and returns everything the server answers
// before it closes the connection (at most 10 s).
std::string raw_request(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  timeval limit{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, n);
  }
  ::close(fd);
  return answer;
}

// Waits (at most 60 s) until `count` partitions of `asset` over `window` are materialized.
bool materialized(const Server& server, const std::string& asset, const std::string& window,
                  int count) {
  for (int i = 0; i < 1200; ++i) {
    const json grid = server.get("/api/assets/" + asset + "?window=" + window);
    if (grid["counts"]["materialized"] == count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST_F(Serve, AllowRunsBackfillsWithTheTokenOnly) {
  {
    Server read_only(dir_, {"serve", "pipeline.yaml"});
    auto r = read_only.client().Post("/api/assets/totals/backfill", "", "text/plain");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
  }
  Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs"});
  const std::string token = token_of(server);
  ASSERT_EQ(token.size(), 32u);
  const std::string path = "/api/assets/totals/backfill?window=2026-03-01..2026-03-02";
  auto client = server.client();
  EXPECT_EQ(client.Post(path, "", "text/plain")->status, 403);
  EXPECT_EQ(client.Post(path, {{"X-Interloper-Token", "0"}}, "", "text/plain")->status, 403);
  EXPECT_EQ(
      client.Post("/api/assets/nope/backfill", {{"X-Interloper-Token", token}}, "", "text/plain")
          ->status,
      400);
  // `curl -X POST` sends no Content-Length: the refusal says what to send.
  const std::string bare =
      raw_request(server.port(),
                  "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Interloper-Token: " + token +
                      "\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(bare.rfind("HTTP/1.1 400", 0), 0u) << bare;
  EXPECT_NE(bare.find(R"({"error":"a POST must say its length: send Content-Length: 0)"),
            std::string::npos)
      << bare;
  auto r = client.Post(path, {{"X-Interloper-Token", token}}, "", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(materialized(server, "totals", "2026-03-01..2026-03-02", 2));
}

// With --allow-runs each asset has a "Run missing partitions" button; clicking it starts the
// backfill, says so, and the grid fills in as the page refreshes itself.
TEST_F(Serve, RunMissingButtonBackfillsFromThePage) {
  if (!have_chromium()) GTEST_SKIP() << "chromium is missing: install Debian's chromium";
  Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs"});
  interloper::testing::Chromium browser(interloper::testing::kChromium,
                                        (dir_ / "chromium").string());
  const auto patience = std::chrono::seconds(60);
  browser.open(server.url("/"));
  EXPECT_TRUE(browser.wait_for(
      "document.querySelectorAll('tr.asset button.run-missing').length === 3", patience));

  browser.open(server.url("/assets/totals?window=2026-03-01..2026-03-02"));
  ASSERT_TRUE(
      browser.wait_for("document.querySelectorAll('.cell.missing').length === 2 && "
                       "document.querySelectorAll('button.run-missing').length === 1",
                       patience));
  browser.evaluate("document.querySelector('button.run-missing').click()");
  ASSERT_TRUE(
      browser.wait_for("document.querySelector('.run-outcome').textContent !== ''", patience));
  EXPECT_EQ(browser.evaluate("document.querySelector('.run-outcome').textContent"),
            "backfill of the missing partitions of 2026-03-01..2026-03-02 started");
  EXPECT_TRUE(
      browser.wait_for("document.querySelectorAll('.cell.materialized').length === 2", patience));
  EXPECT_EQ(
      server.get("/api/assets/totals?window=2026-03-01..2026-03-02")["counts"]["materialized"], 2);
  // The outcome of the click survives the page's refreshes.
  EXPECT_EQ(browser.evaluate("document.querySelector('.run-outcome').textContent"),
            "backfill of the missing partitions of 2026-03-01..2026-03-02 started");
}

TEST_F(Serve, RunsShowEachJobsNextFiresInItsZone) {
  const std::int64_t before = std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  Server server(dir_, {"serve", "pipeline.yaml"});
  const json runs = server.get("/api/runs");
  ASSERT_EQ(runs["jobs"].size(), 1u) << runs;
  const json& job = runs["jobs"][0];
  EXPECT_EQ(job["name"], "nightly");
  EXPECT_EQ(job["cron"], "0 3 * * *");
  EXPECT_EQ(job["time_zone"], "Europe/Berlin");
  EXPECT_EQ(job["assets"], json::array({"events"}));
  EXPECT_EQ(job["mode"], "backfill");
  const json& fires = job["next_fires"];
  ASSERT_EQ(fires.size(), 3u);
  for (const json& fire : fires) {
    // 03:00 on Berlin's wall clock, whatever the offset of the day; the window is the two days
    // before the fire's day there.
    const std::string local = fire["fire"];
    EXPECT_EQ(local.substr(10, 9), "T03:00:00") << fire;
    EXPECT_TRUE(local.substr(19) == "+01:00" || local.substr(19) == "+02:00") << fire;
    const auto day = interloper::TimePoint::parse(local.substr(0, 10));
    const auto& g = interloper::TimeGranularity::DAY;
    EXPECT_EQ(fire["window"], g.format(g.advance(day, -2)) + ".." + g.format(g.advance(day, -1)));
  }
  const auto first =
      interloper::TimePoint::parse(fires[0]["fire_utc"].get<std::string>().substr(0, 19));
  EXPECT_GT(first.epoch_seconds(), before);
  EXPECT_LE(first.epoch_seconds(), before + 25 * 3600);
  // The fires `interloper jobs` lists from just before the first one, in the same shape.
  const auto o = interloper::testing::run_interloper(
      {"--json", "jobs", "pipeline.yaml", "--count", "3", "--at",
       interloper::TimePoint::from_epoch_seconds(first.epoch_seconds() - 1).to_string() + "Z"},
      dir_.string());
  ASSERT_EQ(o.code, 0) << o.err;
  const auto lines = interloper::testing::lines_of(o.out);
  ASSERT_EQ(lines.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(json::parse(lines[i]), fires[i]);
}

// With --queue, the runs page shows the queue's backfills and the tasks its workers run, as
// `status --queue` reports them.
TEST_F(Serve, RunsShowTheQueuesBackfillsAndRunningTasks) {
  IL_REQUIRE_POSTGRES(url);
  const std::string queue = url + "?schema=" + interloper::testing::fresh_schema("serve");
  auto o = interloper::testing::run_interloper(
      {"backfill", "pipeline.yaml", "--window", "2026-03-06..2026-03-08", "--asset", "events",
       "--queue", queue},
      dir_.string());
  ASSERT_EQ(o.code, 0) << o.err;
  Server server(dir_, {"serve", "pipeline.yaml", "--queue", queue});
  json shown = server.get("/api/runs")["queue"];
  ASSERT_TRUE(shown.is_object());
  EXPECT_EQ(shown["pipeline"], "pipeline");
  EXPECT_EQ(shown["url"], interloper::postgres::parse_url(queue, {"schema"}).redacted);
  ASSERT_EQ(shown["backfills"].size(), 1u) << shown;
  const json& backfill = shown["backfills"][0];
  EXPECT_EQ(backfill["backfill"], 1);
  EXPECT_EQ(backfill["window"], "2026-03-06..2026-03-08");
  EXPECT_EQ(backfill["assets"], json::array({"events"}));
  EXPECT_EQ(backfill["queued"], 3);
  EXPECT_EQ(backfill["running"], 0);
  o = interloper::testing::run_interloper({"--json", "status", "pipeline.yaml", "--queue", queue},
                                          dir_.string());
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(json::parse(o.out), backfill);

  // A worker holds the newest day while the page looks.
  interloper::testing::Outcome worked;
  std::thread worker([&] {
    worked = interloper::testing::run_interloper(
        {"worker", "pipeline.yaml", "--queue", queue, "--exit-when-idle"}, dir_.string(),
        {{"HOLD_DAY", "2026-03-08"}});
  });
  // Lets the day go and joins the worker, however the test ends.
  struct Release {
    const interloper::testing::TempDir& dir;
    std::thread& worker;
    void operator()() const {
      dir.write("release", "");
      if (worker.joinable()) worker.join();
    }
    ~Release() { (*this)(); }
  } release{temp_, worker};
  json task;
  for (int i = 0; i < 600 && task.is_null(); ++i) {
    shown = server.get("/api/runs")["queue"];
    const json& running = shown["backfills"][0]["running_tasks"];
    if (!running.empty()) task = running[0];
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(task.is_object()) << shown;
  EXPECT_EQ(task["asset"], "events");
  EXPECT_EQ(task["partition"], "2026-03-08");
  EXPECT_EQ(task["attempts"], 1);
  EXPECT_NE(task["worker"].get<std::string>().find(':'), std::string::npos) << task;
  EXPECT_EQ(shown["backfills"][0]["running"], 1);
  if (have_chromium()) {
    interloper::testing::Chromium browser(interloper::testing::kChromium,
                                          (dir_ / "chromium").string());
    browser.open(server.url("/runs"));
    EXPECT_TRUE(
        browser.wait_for("document.querySelectorAll('tr.backfill').length === 1 && "
                         "document.querySelectorAll('tr.task').length === 1",
                         std::chrono::seconds(60)));
    EXPECT_EQ(browser.evaluate("document.querySelector('tr.task td.worker').textContent"),
              task["worker"]);
  }
  release();
  EXPECT_EQ(worked.code, 0) << worked.err;
  const json done = server.get("/api/runs")["queue"]["backfills"][0];
  EXPECT_EQ(done["succeeded"], 3) << done;
  EXPECT_TRUE(done["running_tasks"].empty());
}

TEST_F(Serve, RefusesAQueueItCannotReach) {
  const auto o = interloper::testing::run_interloper(
      {"serve", "pipeline.yaml", "--queue", "postgresql://u:secret@127.0.0.1:1/q", "--port",
       std::to_string(free_port())},
      dir_.string());
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_NE(o.err.find("127.0.0.1:1"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("secret"), std::string::npos) << o.err;
}

TEST_F(Serve, RefusesAPortAnotherServerHolds) {
  Server first(dir_, {"serve", "pipeline.yaml"});
  const auto o = interloper::testing::run_interloper(
      {"serve", "pipeline.yaml", "--port", std::to_string(first.port())}, dir_.string());
  EXPECT_EQ(o.code, 1) << o.out;
  EXPECT_NE(o.err.find(fmt::format("cannot listen on 127.0.0.1:{}", first.port())),
            std::string::npos)
      << o.err;
}

TEST_F(Serve, RefusesAnAddressItCannotBind) {
  const auto o = interloper::testing::run_interloper(
      {"serve", "pipeline.yaml", "--host", "203.0.113.7", "--port", "1"}, dir_.string());
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("cannot listen on 203.0.113.7:1"), std::string::npos) << o.err;
}

// The server used to ignore SIGCHLD so as never to wait for its backfills; the backfill
// inherited that, and then spun forever waiting for the status of a `command:` asset's process
// that the kernel had already reaped.
TEST_F(Serve, BackfillOfACommandAssetStartedFromThePageFinishes) {
  Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs"});
  const std::string token = token_of(server);
  const Answer started = start_backfill(server, token, "events", "2026-03-06..2026-03-08");
  ASSERT_EQ(started.status, 200) << started.body;
  EXPECT_TRUE(materialized(server, "events", "2026-03-06..2026-03-08", 3));
  const json runs = server.get("/api/runs")["runs"];
  ASSERT_EQ(runs.size(), 3u) << runs;
  EXPECT_EQ(runs[0]["window"], "2026-03-06..2026-03-08");
}

// One backfill per asset at a time from the page: a second click while the first runs is
// refused with 409 and the reason; another asset may start; once the first has ended, the asset
// may start again.
TEST_F(Serve, PageStartsOneBackfillPerAssetAtATime) {
  ::setenv("HOLD_DAY", "2026-03-06", 1);  // the server's backfills inherit it
  Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs"});
  ::unsetenv("HOLD_DAY");
  const std::string token = token_of(server);
  ASSERT_EQ(start_backfill(server, token, "events", "2026-03-06").status, 200);
  for (int i = 0; i < 600 && !fs::exists(dir_ / "held"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fs::exists(dir_ / "held"));
  const Answer refused = start_backfill(server, token, "events", "2026-03-07");
  EXPECT_EQ(refused.status, 409) << refused.body;
  const std::string why = refused.body.value("error", "");
  EXPECT_NE(why.find("asset 'events'"), std::string::npos) << why;
  EXPECT_NE(why.find("still runs"), std::string::npos) << why;
  const Answer other = start_backfill(server, token, "regions", "");
  EXPECT_EQ(other.status, 200) << other.body;

  temp_.write("release", "");
  ASSERT_TRUE(materialized(server, "events", "2026-03-06", 1));
  // The first backfill records the day, then its run, then exits: bounded retries.
  Answer again;
  for (int i = 0; i < 200; ++i) {
    again = start_backfill(server, token, "events", "2026-03-07");
    if (again.status != 409) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_TRUE(materialized(server, "events", "2026-03-07", 1));
}

// A run started from the page covers at most --max-run-partitions partitions (100 000 unless
// told): a larger window answers 422 saying why, and starts nothing.
TEST_F(Serve, PageRunsAreBoundedInPartitions) {
  {
    Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs", "--max-run-partitions", "3"});
    const std::string token = token_of(server);
    const Answer refused = start_backfill(server, token, "totals", "2026-03-01..2026-03-05");
    EXPECT_EQ(refused.status, 422) << refused.body;
    const std::string why = refused.body.value("error", "");
    EXPECT_NE(why.find("window 2026-03-01..2026-03-05 has 5 partitions, more than the 3"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("--max-run-partitions"), std::string::npos) << why;
    const Answer started = start_backfill(server, token, "totals", "2026-03-01..2026-03-03");
    EXPECT_EQ(started.status, 200) << started.body;
    EXPECT_TRUE(materialized(server, "totals", "2026-03-01..2026-03-03", 3));
  }
  Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs"});
  const Answer refused =
      start_backfill(server, token_of(server), "totals", "2026-03-01..2400-01-01");
  EXPECT_EQ(refused.status, 422) << refused.body;
  EXPECT_NE(refused.body.value("error", "").find("more than the 100000"), std::string::npos)
      << refused.body;

  const auto o = interloper::testing::run_interloper(
      {"serve", "pipeline.yaml", "--allow-runs", "--max-run-partitions", "0"}, dir_.string());
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--max-run-partitions: must be a whole number above 0, not '0'"),
            std::string::npos)
      << o.err;
}

// How the overview lays out in a window 1 400 pixels wide once it shows `assets` rows: the
// page's width, the right edges of the table and of its last header, and the lines each shown
// run id takes.
json overview_layout(const Server& server, const fs::path& profile, std::size_t assets) {
  interloper::testing::Chromium browser(interloper::testing::kChromium, profile.string(),
                                        std::chrono::seconds(60),
                                        {"--window-size=1400,900", "--hide-scrollbars"});
  browser.open(server.url("/"));
  EXPECT_TRUE(browser.wait_for(
      fmt::format("document.querySelectorAll('tr.asset button.run-missing').length === {}", assets),
      std::chrono::seconds(60)));
  EXPECT_EQ(browser.evaluate("window.innerWidth"), 1400);
  return browser.evaluate(R"JS(({
    page: document.documentElement.scrollWidth,
    table: Math.ceil(document.querySelector("main table").getBoundingClientRect().right),
    lastHeader: Math.ceil([...document.querySelectorAll("main thead th")].pop().getBoundingClientRect().right),
    runIdLines: [...document.querySelectorAll("main .run-id")].map(e => e.getClientRects().length)
  }))JS");
}

// The overview fits a window 1 400 pixels wide, with the run button's column: nothing is cut or
// needs a horizontal scroll, and run ids stay on one line each. Long names, descriptions and
// paths wrap.
TEST_F(Serve, OverviewFitsA1400PixelWindow) {
  if (!have_chromium()) GTEST_SKIP() << "chromium is missing: install Debian's chromium";
  Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs"});
  const json layout = overview_layout(server, dir_ / "chromium", 3);
  EXPECT_LE(layout["page"], 1400) << layout;
  EXPECT_LE(layout["table"], 1400) << layout;
  EXPECT_LE(layout["lastHeader"], 1400) << layout;
  ASSERT_EQ(layout["runIdLines"].size(), 3u) << layout;
  for (const json& lines : layout["runIdLines"]) EXPECT_EQ(lines, 1) << layout;

  const std::string word(120, 'w');
  const fs::path deep = dir_ / "a_directory_with_a_rather_long_name_for_its_data" / word;
  fs::create_directories(deep);
  temp_.write("wide.yaml", fmt::format("sources:\n"
                                       "  - name: source_{0}\n"
                                       "    description: {0}\n"
                                       "    destination: sqlite:{1}/data.db\n"
                                       "    assets:\n"
                                       "      - name: asset_{0}\n"
                                       "        description: {0} {0}\n"
                                       "        partitioning: {{kind: list, column: k, values: "
                                       "[value_{0}, other_{0}]}}\n"
                                       "        command: [/bin/true]\n",
                                       word, deep.string()));
  Server wide(dir_, {"serve", "wide.yaml", "--allow-runs"});
  const json wide_layout = overview_layout(wide, dir_ / "chromium-wide", 1);
  EXPECT_LE(wide_layout["page"], 1400) << wide_layout;
  EXPECT_LE(wide_layout["table"], 1400) << wide_layout;
  EXPECT_LE(wide_layout["lastHeader"], 1400) << wide_layout;

  // The picture, for a person to look at (and for docs/serve.md).
  const auto o = interloper::testing::run_command(
      {interloper::testing::kChromium, "--headless", "--no-sandbox", "--disable-gpu",
       "--hide-scrollbars", "--virtual-time-budget=5000",
       "--user-data-dir=" + (dir_ / "chromium-shot").string(), "--window-size=1400,900",
       "--screenshot=" + (fs::path(IL_TEST_BINARY_DIR) / "serve-overview-1400.png").string(),
       server.url("/")});
  EXPECT_EQ(o.code, 0) << o.err;
}

// The JSON `status --json` prints for `pipeline` (with `window`, when given), run in `dir`.
json status_json_of(const fs::path& dir, const std::string& pipeline, const std::string& window) {
  std::vector<std::string> args = {"--json", "status", pipeline};
  if (!window.empty()) {
    args.push_back("--window");
    args.push_back(window);
  }
  const auto o = interloper::testing::run_interloper(args, dir.string());
  EXPECT_EQ(o.code, 0) << o.err;
  return o.code == 0 ? json::parse(o.out) : json();
}

// The page and its API report from status's model: /api/status is `status --json`, stale
// partitions included, and the overview and grid show each asset over the same window.
TEST_F(Serve, AnswersWhatStatusJsonPrintsStaleIncluded) {
  // The command changes: what the old one wrote is stale.
  temp_.write("pipeline.yaml", [&] {
    std::ifstream in(dir_ / "pipeline.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string before = "command: [./emit.sh, \"{partition.key}\"]";
    text.replace(text.find(before), before.size(),
                 "command: [./emit.sh, \"{partition.key}\", extra]");
    return text;
  }());
  for (const std::string window : {"", "2026-03-01..2026-03-06", "2026-03"}) {
    std::vector<std::string> args = {"serve", "pipeline.yaml"};
    if (!window.empty()) {
      args.push_back("--window");
      args.push_back(window);
    }
    Server server(dir_, args);
    const json expected = status_json_of(dir_, "pipeline.yaml", window);
    EXPECT_EQ(server.get("/api/status"), expected) << window;
    const json overview = server.get("/api/overview");
    for (const json& status : expected) {
      EXPECT_EQ(asset_of(overview, status["asset"])["window"], status["window"]) << window;
    }
    // The same window asked of a server started without one.
    if (!window.empty()) {
      Server plain(dir_, {"serve", "pipeline.yaml"});
      EXPECT_EQ(plain.get("/api/status?window=" + window), expected) << window;
    }
  }
  const json expected = status_json_of(dir_, "pipeline.yaml", "2026-03-01..2026-03-06");
  ASSERT_EQ(expected[0]["asset"], "events");
  EXPECT_EQ(expected[0]["stale"], json({"2026-03-01..2026-03-03", "2026-03-05"})) << expected;

  Server server(dir_, {"serve", "pipeline.yaml", "--window", "2026-03-01..2026-03-06"});
  const json events = asset_of(server.get("/api/overview"), "events");
  EXPECT_EQ(events["materialized"], 4);
  EXPECT_EQ(events["stale"], 4);
  EXPECT_EQ(asset_of(server.get("/api/overview"), "regions")["stale"], 0);
  const json grid = server.get("/api/assets/events");
  EXPECT_EQ(grid["window"], "2026-03-01..2026-03-06");
  EXPECT_EQ(grid["counts"]["stale"], 4);
  EXPECT_EQ(grid["ranges"]["stale"], json::parse("[[0,2],[4,4]]"));
  EXPECT_EQ(grid["cells"][0]["state"], "stale");
  EXPECT_EQ(grid["cells"][3]["state"], "failed");
  EXPECT_EQ(server.get("/api/assets/events/partitions/2026-03-02")["state"], "stale");
  EXPECT_EQ(server.get("/api/assets/regions/partitions/eu")["state"], "missing");
  const json buckets = server.get("/api/assets/events?window=2026-03-01..2126-03-01");
  EXPECT_EQ(buckets["buckets"][0]["stale"], 4);
  if (have_chromium()) {
    const auto page = interloper::testing::run_command(
        {interloper::testing::kChromium, "--headless", "--no-sandbox", "--disable-gpu",
         "--virtual-time-budget=5000", "--user-data-dir=" + (dir_ / "chromium").string(),
         "--dump-dom", server.url("/assets/events")});
    EXPECT_EQ(occurrences(page.out, "class=\"cell stale\""), 4u) << page.out;
    EXPECT_EQ(occurrences(page.out, "class=\"cell failed\""), 1u);
    EXPECT_NE(page.out.find("4 of them stale"), std::string::npos);
  }
  // A window no asset takes is refused as `status` refuses it.
  EXPECT_NE(server.get("/api/status?window=mars", 400)["error"].get<std::string>().find(
                "no asset accepts window 'mars'"),
            std::string::npos);
}

// `--window` gives each asset its own share of the window, as `status` and `backfill` do: on
// the traffic demo a month of days is 720 hours, 30 days and one month.
TEST_F(Serve, WindowGivesEachAssetItsShare) {
  const fs::path demo = fs::path(IL_TEST_SOURCE_DIR) / "examples" / "demo";
  fs::copy_file(demo / "traffic.yaml", dir_ / "traffic.yaml");
  fs::copy_file(demo / "pageviews.sh", dir_ / "pageviews.sh");
  const auto o = interloper::testing::run_interloper(
      {"backfill", "traffic.yaml", "--asset", "pageviews", "--window", "2026-11-01"},
      dir_.string());
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string month = "2026-11-01..2026-11-30";
  Server server(dir_, {"serve", "traffic.yaml", "--window", month});
  const json overview = server.get("/api/overview");
  const json& hours = asset_of(overview, "pageviews");
  EXPECT_EQ(hours["window"], "2026-11-01T00..2026-11-30T23") << hours;
  EXPECT_EQ(hours["partitions"], 720);
  EXPECT_EQ(hours["materialized"], 24);
  EXPECT_EQ(hours["missing"], 696);
  const json& days = asset_of(overview, "daily_views");
  EXPECT_EQ(days["window"], month);
  EXPECT_EQ(days["missing"], 30);
  const json& months = asset_of(overview, "monthly_report");
  EXPECT_EQ(months["window"], "2026-11");
  EXPECT_EQ(months["partitions"], 1);
  EXPECT_EQ(server.get("/api/status"), status_json_of(dir_, "traffic.yaml", month));
  // An asset's page shows its share of the server's window, or of the one it is asked for.
  EXPECT_EQ(server.get("/api/assets/pageviews")["partitions"], 720);
  const json day = server.get("/api/assets/pageviews?window=2026-11-01");
  EXPECT_EQ(day["window"], "2026-11-01T00..2026-11-01T23");
  EXPECT_EQ(day["counts"]["materialized"], 24);
  EXPECT_EQ(server.get("/api/assets/monthly_report?window=2026-11-01..2026-12-31")["window"],
            "2026-11..2026-12");
}

#ifdef IL_FORK_TRAP
// A run started from the page is started with posix_spawn, never fork() (a child forked from
// the threaded server could deadlock on a lock another thread held): a library preloaded into
// the server records any fork() it makes.
TEST_F(Serve, PageRunsStartWithoutFork) {
  const fs::path trap = dir_ / "trap";
  fs::create_directories(trap);
  // The trap works: a shell that forks is caught.
  const fs::path control = dir_ / "control";
  fs::create_directories(control);
  interloper::testing::run_command(
      {"/bin/sh", "-c", "/bin/true; /bin/true"}, dir_.string(),
      {{"LD_PRELOAD", IL_FORK_TRAP}, {"IL_FORK_TRAP_DIR", control.string()}});
  bool caught = false;
  for (const auto& entry : fs::directory_iterator(control)) {
    caught = caught || entry.path().filename().string().rfind("forked-", 0) == 0;
  }
  ASSERT_TRUE(caught) << "the fork trap caught no fork of /bin/sh";

  ::setenv("LD_PRELOAD", IL_FORK_TRAP, 1);
  ::setenv("IL_FORK_TRAP_DIR", trap.c_str(), 1);
  Server server(dir_, {"serve", "pipeline.yaml", "--allow-runs"});
  ::unsetenv("LD_PRELOAD");
  ::unsetenv("IL_FORK_TRAP_DIR");
  ASSERT_TRUE(fs::exists(trap / "loaded"));
  const Answer started =
      start_backfill(server, token_of(server), "events", "2026-03-06..2026-03-07");
  ASSERT_EQ(started.status, 200) << started.body;
  EXPECT_TRUE(materialized(server, "events", "2026-03-06..2026-03-07", 2));
  for (const auto& entry : fs::directory_iterator(trap)) {
    EXPECT_EQ(entry.path().filename().string().rfind("forked-", 0), std::string::npos)
        << "a process forked: " << entry.path();
  }
}
#endif

}  // namespace

// A list whose values look like time keys: serve's --window is read by the list as its values.
TEST_F(Serve, AListWindowOfTimeShapedValuesIsReadAsValues) {
  temp_.write(
      "periods.yaml",
      "sources:\n"
      "  - name: plan\n"
      "    assets:\n"
      "      - name: periods\n"
      "        partitioning: {kind: list, column: period, values: [\"2026\", emea, Q1, "
      "Q2, Q3, us]}\n"
      "        command: [/bin/sh, -c, 'echo \"{\\\"period\\\":\\\"$IL_PARTITION_KEY\\\"}\"']\n");
  auto o = interloper::testing::run_interloper({"materialize", "periods.yaml", "--partition", "Q2"},
                                               dir_.string());
  ASSERT_EQ(o.code, 0) << o.err;
  for (const auto& [window, partitions] :
       std::vector<std::pair<std::string, int>>{{"Q1..Q3", 3}, {"2026", 1}, {"emea..us", 5}}) {
    Server server(dir_, {"serve", "periods.yaml", "--window", window});
    const json overview = server.get("/api/overview");
    const json& periods = asset_of(overview, "periods");
    EXPECT_EQ(periods["window"], window) << periods;
    EXPECT_EQ(periods["partitions"], partitions) << periods;
    EXPECT_EQ(periods["materialized"], window == "2026" ? 0 : 1) << periods;
  }
}
