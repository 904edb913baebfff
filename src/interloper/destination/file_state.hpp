// Internal: the state a FileDestination shares with its writers (file_destination.cpp defines
// it, file_writer.cpp writes through it).
#pragma once

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/window_index.hpp"

namespace interloper {

namespace detail {
inline constexpr const char* file_key_name = "_key";  // a hashed key's own text, beside its data
inline constexpr const char* file_schema_name = "_schema.json";
// The stored columns the latest write did not produce (Destination::retired_columns), as a
// schema; absent when there are none.
inline constexpr const char* file_retired_name = "_retired.json";
// What a partition's data file was when this destination wrote it ("SIZE fnv1a64:HEX"), beside
// it, so that status --verify finds a file someone else overwrote or truncated.
inline constexpr const char* file_written_name = "_written";
}  // namespace detail

struct FileDestination::State {
  std::filesystem::path root;
  Format format;
  std::mutex mutex;

  const char* data_name() const { return format == Format::csv ? "data.csv" : "data.jsonl"; }

  // ROOT/SOURCE/ASSET, each escaped.
  std::filesystem::path dataset_dir(const DatasetRef& dataset) const;
  // The schema recorded in `dir`'s _schema.json, or nullopt when there is none.
  std::optional<Schema> stored_schema(const std::filesystem::path& dir) const;
  // The columns recorded in `dir`'s _retired.json (none when it is absent).
  std::vector<std::string> retired(const std::filesystem::path& dir) const;
  // Records which columns of `merged` the write of `incoming` did not produce.
  void record_retired(const std::filesystem::path& dir, const DatasetRef& dataset,
                      const Schema& merged, const Schema& incoming) const;
  // Rows as this destination's format; an empty table is an empty file.
  std::string encode(const Table& table) const;
  Table decode(const std::filesystem::path& file, const std::string& text,
               const Schema* schema) const;
  // Adds the rows of `text` to `table` (a table of `schema`'s columns when it is given).
  void decode_into(Table& table, const std::filesystem::path& file, const std::string& text,
                   const Schema* schema) const;

  // Every partition directory of `dir` for `column`: (key, path).
  std::vector<std::pair<std::string, std::filesystem::path>> partition_dirs(
      const std::filesystem::path& dir, const std::string& column) const;
  // DIR/COLUMN=KEY, each escaped.
  std::filesystem::path partition_dir(const std::filesystem::path& dir, const std::string& column,
                                      const std::string& key) const;

  // The rows of the window, in window order, counted per partition.
  detail::WindowRows collect(const DatasetRef& dataset, const PartitionWindow& window) const;
  // A partition directory that may hold rows of a window: its key, and its start for time keys.
  struct Candidate {
    TimePoint start;
    std::string key;
    std::filesystem::path path;
  };
  // The directories of `dir` that may hold rows of the window `index` stands for, in window
  // order: a list window's own keys; for time, every granularity's directories overlapping it.
  std::vector<Candidate> candidates(const std::filesystem::path& dir, const std::string& column,
                                    const detail::WindowIndex& index) const;
  Table read_unpartitioned(const std::filesystem::path& dir) const;

  // The record of a data file as written: "SIZE fnv1a64:HEX" of its bytes. Throws
  // DestinationError when it cannot be read.
  static std::string written_record(const std::filesystem::path& file);
  // Compares partition `key`'s data file in `dir` with the record written beside it.
  PartitionCheck check_partition(const std::filesystem::path& dir, std::string key) const;
};

}  // namespace interloper
