// Helpers shared by the end-to-end tests of the `interloper` binary: run it, split its output,
// read files and query the SQLite files it leaves.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "interloper/pipeline/process.hpp"

namespace interloper::testing {

struct Outcome {
  int code = -1;  // exit code, or 128 + signal
  std::string out;
  std::string err;
};

inline std::string interloper_binary() {
  return (std::filesystem::path(IL_TEST_BINARY_DIR) / "interloper").string();
}

// Runs `argv` (in `working_directory` and with `env` added to the environment, when given),
// bounded to 120 s.
inline Outcome run_command(std::vector<std::string> argv, const std::string& working_directory = {},
                           std::vector<std::pair<std::string, std::string>> env = {}) {
  interloper::pipeline::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.working_directory = working_directory;
  spec.env = std::move(env);
  spec.timeout_seconds = 120;
  Outcome outcome;
  spec.on_stderr_line = [&](std::string_view line) {
    outcome.err += line;
    outcome.err += '\n';
  };
  auto result = interloper::pipeline::run_process(spec);
  outcome.code = result.signal != 0 ? 128 + result.signal : result.exit_code;
  outcome.out = result.out;
  return outcome;
}

// Runs the built binary with `args`, as run_command does.
inline Outcome run_interloper(std::vector<std::string> args,
                              const std::string& working_directory = {},
                              std::vector<std::pair<std::string, std::string>> env = {}) {
  std::vector<std::string> argv = {interloper_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_command(std::move(argv), working_directory, std::move(env));
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Rows of a query against an SQLite file, each row's columns joined by '|'.
inline std::vector<std::string> query(const std::filesystem::path& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  std::vector<std::string> rows;
  if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(handle);
    ADD_FAILURE() << "cannot open " << db;
    return rows;
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(handle, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    ADD_FAILURE() << sqlite3_errmsg(handle) << " in " << sql;
    sqlite3_close(handle);
    return rows;
  }
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    std::string row;
    for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
      if (i > 0) row += '|';
      const unsigned char* text = sqlite3_column_text(stmt, i);
      row += text != nullptr ? reinterpret_cast<const char*>(text) : "NULL";
    }
    rows.push_back(row);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(handle);
  return rows;
}

}  // namespace interloper::testing
