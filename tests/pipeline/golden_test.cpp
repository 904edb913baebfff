// Data-driven pipeline tests: each tests/pipelines/NAME.yaml is loaded and the outcome compared
// with NAME.expected — the error line for a file that must be rejected, the store path and
// catalog (without schemas) for a file that loads. IL_UPDATE_GOLDEN=1 rewrites the expected
// files from the current behaviour.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "interloper/pipeline.hpp"

namespace fs = std::filesystem;

namespace {

fs::path golden_dir() { return fs::path(IL_TEST_SOURCE_DIR) / "tests" / "pipelines"; }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size()) {
    text.replace(at, from.size(), to);
  }
}

// What loading the file gives, with the machine-specific directory replaced by <dir>.
std::string outcome(const fs::path& file) {
  std::string dir = file.parent_path().string();
  std::string text;
  try {
    interloper::Pipeline pipeline = interloper::Pipeline::load(file.string());
    text = "store: " + pipeline.store_path() + "\n" + pipeline.catalog(false) + "\n";
  } catch (const interloper::PipelineError& e) {
    text = std::string("error: ") + e.what() + "\n";
  }
  replace_all(text, dir, "<dir>");
  return text;
}

class GoldenPipeline : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenPipeline, MatchesExpected) {
  ::setenv("IL_GOLDEN_WAREHOUSE", "warehouse", 1);
  ::unsetenv("IL_GOLDEN_SURELY_UNSET");
  ::setenv("IL_GOLDEN_EMPTY", "", 1);
  fs::path yaml = golden_dir() / (GetParam() + ".yaml");
  fs::path expected_path = golden_dir() / (GetParam() + ".expected");
  std::string actual = outcome(yaml);
  const char* update = std::getenv("IL_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(expected_path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << expected_path;
  }
  ASSERT_TRUE(fs::exists(expected_path))
      << expected_path << " is missing; run with IL_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(read_file(expected_path), actual) << "for " << yaml;
}

std::vector<std::string> golden_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(golden_dir())) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Files, GoldenPipeline, ::testing::ValuesIn(golden_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenPipelines, EveryRejectedFileNamesItsLocation) {
  // Every error line starts with "path:line:col: ".
  for (const auto& name : golden_names()) {
    std::string text = outcome(golden_dir() / (name + ".yaml"));
    if (text.rfind("error: ", 0) != 0) continue;
    std::string prefix = "error: <dir>/" + name + ".yaml:";
    ASSERT_EQ(text.rfind(prefix, 0), 0u) << text;
    std::string rest = text.substr(prefix.size());
    std::size_t line_end = rest.find(':');
    std::size_t col_end = rest.find(": ", line_end + 1);
    ASSERT_NE(col_end, std::string::npos) << text;
    EXPECT_GT(std::stoi(rest.substr(0, line_end)), 0) << text;
    EXPECT_GT(std::stoi(rest.substr(line_end + 1, col_end - line_end - 1)), 0) << text;
    EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line: " << text;
  }
}

}  // namespace
