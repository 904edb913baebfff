// Private to the parquet layer: how its DuckDB databases are set up.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace interloper::parquet {

// DuckDB settings for a database that only reads and writes local files: the memory budget, the
// spill directory ("": never spill, rather than DuckDB's default of `.tmp` in the working
// directory), the threads (0: one per core), and no extension ever installed or loaded (Parquet
// and JSON are built into libduckdb; nothing is fetched).
inline std::vector<std::pair<std::string, std::string>> duckdb_settings(std::string memory_limit,
                                                                        std::string temp_directory,
                                                                        unsigned threads) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"memory_limit", std::move(memory_limit)},
      {"autoinstall_known_extensions", "false"},
      {"autoload_known_extensions", "false"},
      {"preserve_insertion_order", "true"},
  };
  out.emplace_back("temp_directory", std::move(temp_directory));
  if (threads > 0) out.emplace_back("threads", std::to_string(threads));
  return out;
}

// `text` as a SQL string literal: in single quotes, each quote doubled. For file names where
// DuckDB takes no parameter (COPY ... TO).
inline std::string quote_literal(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  out += '\'';
  return out;
}

}  // namespace interloper::parquet
