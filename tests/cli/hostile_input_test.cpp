// End-to-end tests of the binary given hostile or careless input: sql bodies that try to leave
// their query, values and URLs that would be misread, limits that must not crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/cli_process.hpp"

namespace fs = std::filesystem;

namespace {

using interloper::testing::lines_of;
using interloper::testing::Outcome;
using interloper::testing::query;
using interloper::testing::run_interloper;

class Hostile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "il_hostile_XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_ / ".interloper", fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  std::string pipeline(const std::string& text) {
    fs::path file = dir_ / "pipeline.yaml";
    std::ofstream(file) << text;
    return file.string();
  }
  fs::path data_db() const { return dir_ / ".interloper" / "data.db"; }
  fs::path dir_;
};

TEST_F(Hostile, SqlAssetsReadOnlyTheirDependenciesAndLeaveWritesWorking) {
  std::string attached = (dir_ / "elsewhere.db").string();
  std::string file = pipeline(
      "sources:\n"
      "  - name: shop\n"
      "    assets:\n"
      "      - name: events\n"
      "        command: [/bin/echo, '{{\"n\":1}}']\n"
      "      - name: secret\n"
      "        command: [/bin/echo, '{{\"pin\":1234}}']\n"
      "      - name: sneaky\n"
      "        deps: [events]\n"
      "        sql: SELECT * FROM shop__secret\n"
      "      - name: opener\n"
      "        sql: BEGIN\n"
      "      - name: attacher\n"
      "        sql: ATTACH DATABASE '" + attached + "' AS z\n"
      "      - name: pragma\n"
      "        sql: PRAGMA writable_schema=1\n"
      "      - name: total\n"
      "        deps: [events, opener, attacher, pragma]\n"
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
  EXPECT_NE(o.out.find("asset 'opener': "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("transaction control (BEGIN)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("ATTACH of '" + attached + "'"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("PRAGMA writable_schema=1"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(attached));
  // The writes after the refused queries went through.
  EXPECT_EQ(query(data_db(), "SELECT n FROM shop__later"), (std::vector<std::string>{"2"}));
  EXPECT_EQ(query(data_db(), "SELECT COUNT(*) FROM sqlite_master WHERE name = 'shop__sneaky'"),
            (std::vector<std::string>{"0"}));
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

}  // namespace
