// End-to-end tests of the binary given hostile or careless input: sql bodies that try to leave
// their query, values and URLs that would be misread, limits that must not crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "interloper/pipeline/process.hpp"
#include "support/cli_process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using interloper::testing::lines_of;
using interloper::testing::Outcome;
using interloper::testing::query;
using interloper::testing::run_interloper;

class Hostile : public ::testing::Test {
 protected:
  void TearDown() override {
    std::error_code ec;
    // So that the directory can be removed after a test made it read-only.
    fs::permissions(dir_ / ".interloper", fs::perms::owner_all, fs::perm_options::add, ec);
  }
  std::string pipeline(const std::string& text) {
    return temp_.write("pipeline.yaml", text).string();
  }
  fs::path data_db() const { return dir_ / ".interloper" / "data.db"; }
  interloper::testing::TempDir temp_{"il_hostile"};
  const fs::path dir_ = temp_.path();
};

TEST_F(Hostile, SqlAssetsReadOnlyTheirDependenciesAndLeaveWritesWorking) {
  std::string file = pipeline(
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: events\n"
      "        deps: [secret]\n"  // so that the table exists when sneaky runs
      "        command: [/bin/echo, '{{\"n\":1}}']\n"
      "      - name: secret\n"
      "        command: [/bin/echo, '{{\"pin\":1234}}']\n"
      "      - name: sneaky\n"
      "        deps: [events]\n"
      "        sql: SELECT * FROM shop__secret\n"
      "      - name: total\n"
      "        deps: [events, sneaky]\n"
      "        sql: SELECT SUM(n) AS n FROM events\n"
      "      - name: later\n"
      "        deps: [events]\n"
      "        sql: SELECT n + 1 AS n FROM events\n");
  Outcome o = run_interloper({"materialize", file});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("FAILED    sneaky  -  asset 'sneaky': "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("reading table 'shop__secret', which is not a declared dependency"),
            std::string::npos)
      << o.out;
  // The writes after the refused query went through.
  EXPECT_EQ(query(data_db(), "SELECT n FROM shop__later"), (std::vector<std::string>{"2"}));
  EXPECT_EQ(query(data_db(), "SELECT COUNT(*) FROM sqlite_master WHERE name = 'shop__sneaky'"),
            (std::vector<std::string>{"0"}));
}

// An argument the command line refuses is quoted back without the password of a URL in it.
TEST_F(Hostile, ARefusedArgumentNeverShowsAPassword) {
  std::string file = pipeline(
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: events\n"
      "        command: [/bin/echo, '{{\"n\":1}}']\n");
  Outcome o = run_interloper({"check", file, "--destination", "postgresql://me:hunter22@db/x"});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_EQ(o.err.find("hunter22"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("postgresql://me:***@db/x"), std::string::npos) << o.err;
}

// A body that is no query is refused when the pipeline loads, whatever it depends on.
TEST_F(Hostile, SqlThatIsNoQueryIsRefusedAtLoadNamingTheStatement) {
  const std::string attached = (dir_ / "elsewhere.db").string();
  const std::vector<std::pair<std::string, std::string>> bodies = {
      {"BEGIN", "BEGIN statements are not allowed"},
      {"ATTACH DATABASE '" + attached + "' AS z", "ATTACH statements are not allowed"},
      {"PRAGMA writable_schema=1", "PRAGMA statements are not allowed"},
      {"DELETE FROM shop__events", "DELETE statements are not allowed"},
      {"(SELECT 1)", "'(SELECT 1)' is not one"}};
  for (const auto& [body, refusal] : bodies) {
    std::string file = pipeline(
        "sources:\n"
        "  - name: shop\n"
        "    assets:\n"
        "      - name: events\n"
        "        command: [/bin/echo, '{{\"n\":1}}']\n"
        "      - name: bad\n"
        "        deps: [events]\n"
        "        sql: \"" +
        body + "\"\n");
    Outcome o = run_interloper({"materialize", file});
    EXPECT_EQ(o.code, 2) << body << o.out << o.err;
    ASSERT_EQ(lines_of(o.err).size(), 1u) << o.err;
    EXPECT_NE(o.err.find("pipeline.yaml:8:14: asset 'bad': sql must be a query (SELECT, WITH ... "
                         "SELECT or VALUES); " +
                         refusal),
              std::string::npos)
        << o.err;
  }
  EXPECT_FALSE(fs::exists(attached));
}

// The window-scoped CTEs (NAME for the run's partitions, NAME__all for every row) read only
// the dependency's own table, so they pass the authorizer; another table still does not.
TEST_F(Hostile, WindowedSqlDependenciesPassTheAuthorizerAndNothingElseDoes) {
  std::string file = pipeline(
      "sources:\n"
      "  - name: web\n"
      "    assets:\n"
      "      - name: hits\n"
      "        deps: [other]\n"  // so that the table exists when peek runs
      "        partitioning: {kind: time, column: day, granularity: day}\n"
      "        command: [/bin/echo, '{{\"day\":\"{window.start}\",\"n\":1}}']\n"
      "      - name: other\n"
      "        partitioning: {kind: time, column: day, granularity: day}\n"
      "        command: [/bin/echo, '{{\"day\":\"{window.start}\",\"n\":7}}']\n"
      "      - name: daily\n"
      "        deps: [hits]\n"
      "        partitioning: {kind: time, column: day, granularity: day}\n"
      "        sql: SELECT :partition_key AS day, SUM(n) AS n,\n"
      "          (SELECT COUNT(*) FROM hits__all) AS stored FROM hits\n"
      "      - name: peek\n"
      "        deps: [hits]\n"
      "        partitioning: {kind: time, column: day, granularity: day}\n"
      "        sql: SELECT :partition_key AS day, (SELECT SUM(n) FROM web__other) AS n FROM "
      "hits\n");
  Outcome o = run_interloper({"backfill", file, "--window", "2026-11-01..2026-11-02"});
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("reading table 'web__other', which is not a declared dependency"),
            std::string::npos)
      << o.out;
  EXPECT_EQ(query(data_db(), "SELECT day, n, stored > 0 FROM web__daily ORDER BY day"),
            (std::vector<std::string>{"2026-11-01|1|1", "2026-11-02|1|1"}));
}

TEST_F(Hostile, SqlWithASecondStatementIsRejectedAtLoad) {
  std::string file = pipeline(
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: x\n"
      "        sql: SELECT 1 AS x; DROP TABLE shop__x\n");
  Outcome o = run_interloper({"check", file});
  EXPECT_EQ(o.code, 2);
  ASSERT_EQ(lines_of(o.err).size(), 1u) << o.err;
  EXPECT_NE(o.err.find("pipeline.yaml:5:14: asset 'x': sql must be exactly one statement, but "
                       "'DROP TABLE shop__x' follows it"),
            std::string::npos)
      << o.err;
}

// A pipeline of `n` command assets, each depending on the next one (i + 1) modulo `n` when
// `cycle`, else on the previous one.
std::string chain_yaml(int n, bool cycle) {
  std::string text = "destination: memory://\nsources:\n  - name: s\n    assets:\n";
  for (int i = 0; i < n; ++i) {
    text += "      - name: a" + std::to_string(i) + "\n        command: [/bin/true]\n";
    if (cycle) {
      text += "        deps: [a" + std::to_string((i + 1) % n) + "]\n";
    } else if (i > 0) {
      text += "        deps: [a" + std::to_string(i - 1) + "]\n";
    }
  }
  return text;
}

TEST_F(Hostile, CheckOfAHundredThousandAssetChain) {
  Outcome o = run_interloper({"-q", "check", pipeline(chain_yaml(100000, false))});
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err, "");
}

TEST_F(Hostile, CycleOfFiftyThousandAssetsIsReportedAtItsClosingDependency) {
  Outcome o = run_interloper({"check", pipeline(chain_yaml(50000, true))});
  EXPECT_EQ(o.code, 2) << o.err;
  ASSERT_EQ(lines_of(o.err).size(), 1u) << o.err.substr(0, 2000);
  // a0 depends on a1 ... a49999 on a0: the cycle closes at the dependency of a0 (line 7).
  EXPECT_NE(o.err.find("pipeline.yaml:7:16: dependency cycle: 50000 assets: a0 -> a49999 -> "),
            std::string::npos)
      << o.err;
  EXPECT_LT(o.err.size(), 1000u);
}

TEST_F(Hostile, NumericOptionsAreCheckedWithReadableMessages) {
  std::string file = pipeline(chain_yaml(1, false));
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"backfill", file, "--window", "2026-01-01", "--concurrency", "0"},
       "--concurrency: must be a whole number of at least 1, not '0'"},
      {{"backfill", file, "--window", "2026-01-01", "--concurrency", "-3"},
       "--concurrency: must be a whole number of at least 1, not '-3'"},
      {{"backfill", file, "--window", "2026-01-01", "--claim-lease", "5m"},
       "--claim-lease: must be a whole number of at least 1, not '5m'"},
      {{"runs", file, "--last", "99999999999999999999"},
       "--last: '99999999999999999999' is too "
       "large"},
      {{"materialize", file, "--lookback", "2", "--offset=-1"},
       "--offset: must be a whole number of at least 0, not '-1'"},
  };
  for (const Case& c : cases) {
    Outcome o = run_interloper(c.args);
    EXPECT_EQ(o.code, 2) << o.err;
    ASSERT_EQ(lines_of(o.err).size(), 1u) << o.err;
    EXPECT_EQ(o.err, "interloper: error: " + c.message + "\n");
  }
}

TEST_F(Hostile, HugeErrorsAreCutAndSayHowMuch) {
  std::string file = pipeline(
      "destination: memory://\n"
      "sources:\n"
      "  - name: s\n"
      "    assets:\n"
      "      - name: loud\n"
      "        command: [/bin/sh, -c, 'head -c 900000 /dev/zero | tr \"\\0\" x >&2; exit 3']\n");
  Outcome o = run_interloper({"materialize", file});
  EXPECT_EQ(o.code, 1);
  ASSERT_EQ(lines_of(o.err).size(), 1u) << o.err.substr(0, 300);
  EXPECT_LT(o.err.size(), 4200u);
  EXPECT_NE(o.err.find(" more bytes cut)"), std::string::npos) << o.err.substr(o.err.size() - 100);
  EXPECT_LT(o.out.size(), 4300u);
}

// Runs the binary as the unprivileged user `nobody` (root ignores file permissions), or
// returns nullopt when this process cannot switch users.
std::optional<Outcome> run_as_nobody(const std::vector<std::string>& args) {
  if (::geteuid() != 0 || !fs::exists("/usr/bin/setpriv")) {
    std::vector<std::string> plain = args;
    return ::geteuid() == 0 ? std::nullopt : std::optional<Outcome>(run_interloper(plain));
  }
  std::vector<std::string> argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                   "--clear-groups", interloper::testing::interloper_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return interloper::testing::run_command(std::move(argv));
}

// A store the process may read but not write (its directory read-only, the WAL files gone
// after the writer closed): the reading commands still answer.
TEST_F(Hostile, ReadingCommandsWorkOnAStoreInAReadOnlyDirectory) {
  std::string file = pipeline(
      "store: state/state.db\n"
      "destination: memory://\n"
      "sources:\n"
      "  - name: s\n"
      "    assets:\n"
      "      - name: once\n"
      "        command: [/bin/echo, '{{\"n\":1}}']\n");
  ASSERT_EQ(run_interloper({"materialize", file}).code, 0);
  fs::path state = dir_ / "state";
  const auto readable = fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;
  const auto searchable = fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
  fs::permissions(dir_, readable | searchable);
  fs::permissions(dir_ / "pipeline.yaml", readable);
  fs::permissions(state, readable | searchable);
  fs::permissions(state / "state.db", readable);
  std::optional<Outcome> status = run_as_nobody({"status", file});
  std::optional<Outcome> runs = run_as_nobody({"runs", file});
  fs::permissions(state, fs::perms::owner_all);
  fs::permissions(dir_, fs::perms::owner_all);
  if (!status) GTEST_SKIP() << "cannot run as another user";
  EXPECT_EQ(status->code, 0) << status->err;
  EXPECT_NE(status->out.find("once  (unpartitioned)  materialized"), std::string::npos)
      << status->out;
  EXPECT_EQ(runs->code, 0) << runs->err;
  EXPECT_NE(runs->out.find("succeeded"), std::string::npos) << runs->out;
}

}  // namespace
