// Private to the parquet layer: what a Writer holds, shared by writer.cpp (setup, staging,
// COPY), fill.cpp (values into DuckDB chunks) and stream.cpp (the streamed COPY).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "interloper/duckdb/duckdb.hpp"
#include "interloper/parquet/parquet.hpp"

namespace interloper::parquet {

inline duckdb_hugeint to_hugeint(__int128 v) noexcept {
  const auto u = static_cast<unsigned __int128>(v);
  return {static_cast<std::uint64_t>(u), static_cast<std::int64_t>(u >> 64)};
}

// A directory that is removed with the writer when the writer made it.
struct TempDirectory {
  std::string path;
  bool owned = false;
  TempDirectory() = default;
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  ~TempDirectory() {
    if (!owned) return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

struct Writer::State {
  std::string path;
  Schema schema;
  TempDirectory temp;
  std::optional<duckdb::Database> db;
  std::optional<duckdb::Connection> con;
  std::uint64_t rows = 0;
  bool finished = false;
  bool broken = false;  // an append failed
  // The chunk being filled: the staging chunk, or DuckDB's output chunk when streamed.
  duckdb::Chunk* chunk = nullptr;

  // Staged (a schema with an undeclared decimal column, whose Parquet scale is known only at
  // the end): an appender into a temporary table, copied out at finish().
  std::optional<duckdb::Appender> appender;
  std::optional<duckdb::Chunk> staging_chunk;
  // Per undeclared decimal column: the largest scale and the most digits before the point.
  std::vector<int> max_scale;
  std::vector<int> max_whole;

  // Streamed (every other schema): COPY runs on `copier` from the table function
  // interloper_rows(), which hands DuckDB the chunks append() fills, through `filled`.
  static constexpr std::size_t kQueued = 4;  // filled chunks waiting for DuckDB, at most
  bool streamed = false;
  std::thread copier;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<duckdb::Chunk> filled;
  bool done = false;         // finish(): no more chunks
  bool abandoned = false;    // the writer goes away without finish()
  bool copy_ended = false;   // COPY returned, or failed
  std::exception_ptr error;  // why COPY failed

  // Per declared decimal column: 10^precision, the bound of its unscaled values.
  std::vector<__int128> bounds;
  std::uint64_t row_base = 0;  // the rows before the chunk being filled

  void fill(const Table& batch, const std::vector<std::size_t>& from, std::size_t begin,
            std::size_t count);
  void fill_column(std::size_t c, const Value* cells, std::size_t count);
  template <typename T, typename Get>
  void fill_fixed(std::size_t c, const Value* cells, std::size_t count, DataType type, Get get);
  void put_converted(std::size_t c, std::size_t row, const Value& v);
  void put_decimal(std::size_t c, std::size_t row, const Decimal& d);
  void put_string(std::size_t c, std::size_t row, const std::string& text);
  [[noreturn]] void fail(std::size_t row, std::string_view what) const;
  // COPY (SELECT the columns, cast to their Parquet types, FROM `source`) TO path.
  std::string copy_sql(std::string_view source) const;

  // stream.cpp
  std::vector<duckdb::LogicalType> types;  // of the source's columns c0, c1, ...
  ~State() { abandon_stream(); }
  void start_stream();
  void hand_over(const Table& batch, const std::vector<std::size_t>& from);
  void end_stream();
  void abandon_stream() noexcept;
  // Hands DuckDB the next filled chunk, or the end (the table function).
  void next_rows(duckdb_function_info info, duckdb_data_chunk output);
  static void bind_rows(duckdb_bind_info info);
  static void init_rows(duckdb_init_info info);
  static void rows_function(duckdb_function_info info, duckdb_data_chunk output);
};

}  // namespace interloper::parquet
