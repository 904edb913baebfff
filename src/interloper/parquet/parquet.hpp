// Parquet files of interloper tables, written and read through DuckDB (its Parquet writer and
// reader, in libduckdb). Not tied to any destination: a destination hands a path, batches and
// the asset's schema, and moves the finished file where it belongs.
//
// What is written (docs/parquet.md has the table and the DuckDB query that reads it): one column
// per schema field, typed from the schema:
//
//   bool -> BOOLEAN              int -> INT64                double -> DOUBLE
//   string -> UTF8 text          date -> DATE                timestamp -> TIMESTAMP(UTC, micros)
//   decimal(p,s) -> DECIMAL(p,s) decimal -> DECIMAL(38,s), s the largest scale among the values
//   json -> JSON text (the canonical JSON; one column may hold objects, arrays and scalars)
//   null (a column without values) -> UTF8 text, every cell null
//
// Nulls are Parquet nulls. Writing is streaming: DuckDB runs COPY ... TO ... (FORMAT parquet)
// on a thread of its own over a table function that hands it the chunks append() fills, so a
// file larger than memory is written in bounded memory. A schema with an undeclared decimal
// column (whose scale is known only at the end) is staged in a temporary DuckDB table that
// spills past the memory limit, and copied out at finish().
//
//   parquet::Writer writer("/data/part.parquet.tmp", schema);
//   for (const Table& batch : batches) writer.append(batch);
//   writer.finish();
//
//   parquet::read_file("/data/part.parquet", [&](Table&& batch) { use(batch); }, &schema);
//
// Not thread-safe: one Writer per thread; read_file may run on many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <interloper/data.hpp>
#include <memory>
#include <string>
#include <vector>

namespace interloper::parquet {

// Throws DataError when `schema` cannot be written as Parquet that DuckDB reads back column by
// column: a schema without columns, a column named "" or with '=' or '/' in its name (it would read
// as a Hive directory, `date=2026-11-03`, or a path), or two names that differ only by case
// (DuckDB's names ignore case). The message names the column.
void check_schema(const Schema& schema);

struct WriteOptions {
  // Where DuckDB spills staged rows beyond memory_limit. "" makes a new directory under the
  // system's temporary directory, removed with the writer.
  std::string temp_directory = {};
  // DuckDB's memory budget while staging and writing (its `memory_limit` setting).
  std::string memory_limit = "64MB";
  // Threads DuckDB writes with (0: one per core).
  unsigned threads = 0;
};

// Writes one Parquet file from a stream of batches of one schema.
class Writer {
 public:
  // Throws DataError as check_schema does, and DestinationError when DuckDB cannot start.
  Writer(std::string path, Schema schema, WriteOptions options = {});
  // Without finish(), whatever was begun at `path` is removed.
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Appends the batch's rows. Columns are matched by name; a schema column the batch lacks is
  // null. Throws DataError naming the row and column for a column the schema lacks, a value its
  // column's type cannot hold (converted as Table::conform converts, so an int enters a double
  // column), a decimal that does not fit its declared size, or a string that is not UTF-8. NaN
  // and infinities are doubles like any other and are written as such.
  // After an append that failed on a value, the writer only refuses (finish() too); drop it.
  void append(const Table& batch);
  // Writes the file at `path` (replacing a file there) and returns its number of rows. Throws
  // DataError when an undeclared decimal column needs more than 38 digits, DestinationError when
  // the file cannot be written (whatever the failure left at `path` is removed). Call once.
  std::uint64_t finish();
  std::uint64_t rows() const noexcept;

 private:
  void append_rows(const Table& batch, const std::vector<std::size_t>& from);
  struct State;
  std::unique_ptr<State> state_;
};

// Writes `table` as the Parquet file `path` (a Writer given one batch).
std::uint64_t write_file(const std::string& path, const Table& table,
                         const WriteOptions& options = {});

// The columns of the Parquet file `path` as read_file types them. Throws DataError naming the
// file when it is missing, not Parquet or corrupt.
Schema file_schema(const std::string& path);

// Reads the Parquet file `path`, handing its rows on in batches of at most `batch_rows` rows, in
// the file's order. Parquet types become values as the table at the top says, read back
// exactly; from files written elsewhere, narrower integers become int, FLOAT double,
// UINT64 and 128-bit integers decimal(38,0), timestamps of any unit and without a zone
// timestamps (taken as UTC, nanoseconds truncated to microseconds), nested types (lists,
// structs, maps) json, and other types (blobs, times, intervals, UUIDs) their DuckDB text.
// With `declared`, every batch is conformed to it (Table::conform): declared columns get their
// declared types, a declared column missing from the file is null. A file with no rows gives
// one empty batch with its columns. Throws DataError naming the file when it is missing, not
// Parquet or corrupt, or when a value does not convert to its declared type; `on_batch` may
// throw, and the exception leaves read_file.
void read_file(const std::string& path, const std::function<void(Table&&)>& on_batch,
               const Schema* declared = nullptr, std::size_t batch_rows = 8192);
// The whole file as one table.
Table read_file(const std::string& path, const Schema* declared = nullptr);

}  // namespace interloper::parquet
