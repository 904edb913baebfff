// The streamed write: COPY (SELECT ... FROM interloper_rows()) TO the file runs on a thread of
// its own, and interloper_rows(), a table function, hands DuckDB the chunks append() fills from
// its batches. One pass, no staging: append() fills the next chunks while DuckDB encodes the
// earlier ones, and memory is bounded by a few queued chunks and DuckDB's row group.
#include <fmt/format.h>

#include <algorithm>

#include "interloper/parquet/writer_state.hpp"

namespace interloper::parquet {

namespace fs = std::filesystem;

void Writer::State::bind_rows(duckdb_bind_info info) {
  auto* s = static_cast<State*>(duckdb_bind_get_extra_info(info));
  for (std::size_t c = 0; c < s->types.size(); ++c) {
    duckdb_bind_add_result_column(info, fmt::format("c{}", c).c_str(), s->types[c].get());
  }
}

void Writer::State::init_rows(duckdb_init_info info) {
  duckdb_init_set_max_threads(info, 1);  // one source thread keeps the rows in order
}

void Writer::State::rows_function(duckdb_function_info info, duckdb_data_chunk output) {
  static_cast<State*>(duckdb_function_get_extra_info(info))->next_rows(info, output);
}

void Writer::State::next_rows(duckdb_function_info info, duckdb_data_chunk output) {
  std::unique_lock lock(mutex);
  changed.wait(lock, [&] { return !filled.empty() || done || abandoned; });
  if (abandoned) {
    duckdb_function_set_error(info, "the Parquet writer was dropped before finish()");
    return;
  }
  if (filled.empty()) {  // finish(): the end of the rows
    duckdb_data_chunk_set_size(output, 0);
    return;
  }
  duckdb::Chunk next = std::move(filled.front());
  filled.pop_front();
  changed.notify_all();
  lock.unlock();
  // The output shares the filled vectors' buffers, which outlive `next`.
  for (std::size_t c = 0; c < next.column_count(); ++c) {
    duckdb_vector_reference_vector(duckdb_data_chunk_get_vector(output, c), next.vector(c));
  }
  duckdb_data_chunk_set_size(output, next.size());
}

void Writer::State::start_stream() {
  duckdb_table_function function = duckdb_create_table_function();
  duckdb_table_function_set_name(function, "interloper_rows");
  duckdb_table_function_set_extra_info(function, this, nullptr);
  duckdb_table_function_set_bind(function, &State::bind_rows);
  duckdb_table_function_set_init(function, &State::init_rows);
  duckdb_table_function_set_function(function, &State::rows_function);
  const duckdb_state registered = duckdb_register_table_function(con->get(), function);
  duckdb_destroy_table_function(&function);
  if (registered != DuckDBSuccess) {
    throw DestinationError(fmt::format("parquet '{}': cannot register the row source", path));
  }
  copier = std::thread([this, copy = copy_sql("interloper_rows()")] {
    std::exception_ptr failure;
    try {
      con->execute(copy);
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(mutex);
    if (failure && !error) error = failure;
    copy_ended = true;
    changed.notify_all();
  });
}

void Writer::State::hand_over(const Table& rows_in, const std::vector<std::size_t>& columns) {
  const std::size_t capacity = duckdb::Chunk::capacity();
  for (std::size_t begin = 0; begin < rows_in.num_rows(); begin += capacity) {
    const std::size_t count = std::min(capacity, rows_in.num_rows() - begin);
    duckdb::Chunk next(types);
    chunk = &next;
    fill(rows_in, columns, begin, count);  // on this thread, while DuckDB writes earlier rows
    chunk = nullptr;
    next.set_size(count);
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return filled.size() < kQueued || copy_ended; });
    if (error) std::rethrow_exception(error);
    if (copy_ended) {
      throw DestinationError(fmt::format("parquet '{}': the file was closed early", path));
    }
    filled.push_back(std::move(next));
    changed.notify_all();
  }
}

void Writer::State::end_stream() {
  {
    std::lock_guard lock(mutex);
    done = true;
    changed.notify_all();
  }
  copier.join();
  if (error) {
    std::error_code ec;
    fs::remove(path, ec);  // no half-written file stays behind
    std::rethrow_exception(error);
  }
}

void Writer::State::abandon_stream() noexcept {
  if (!copier.joinable()) return;
  {
    std::lock_guard lock(mutex);
    abandoned = true;
    changed.notify_all();
  }
  copier.join();
  std::error_code ec;
  fs::remove(path, ec);
}

}  // namespace interloper::parquet
