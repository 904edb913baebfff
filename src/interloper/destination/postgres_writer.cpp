// PostgresDestination's window writer: a transaction holding the window's partition locks and
// rows streamed through binary COPY.
#include "interloper/destination/postgres_state.hpp"
#include "interloper/destination/session_hook.hpp"
#include "interloper/sqlsession/postgres_session.hpp"

namespace interloper {

namespace {

using detail::pg::qualified;
constexpr auto quote = sql::quote_identifier;

// The replace of one window in progress: a transaction holding the window's partition locks,
// and, once rows arrive, a COPY that stays open across batches. A batch that brings new columns
// or wider types closes the COPY, changes the table inside the same transaction and opens a new
// COPY; destroying the writer uncommitted rolls everything back.
class PostgresWindowWriter final : public WindowWriter {
 public:
  PostgresWindowWriter(detail::PostgresState& state, const DatasetRef& dataset,
                       const PartitionWindow* window)
      : state_(state),
        dataset_(dataset),
        window_(window),
        partitioned_(window != nullptr && dataset.partitioning != nullptr),
        column_(dataset.partitioning ? dataset.partitioning->column() : ""),
        name_(detail::PostgresState::record_name(dataset)),
        session_(state.pool.acquire()),
        s_(detail::wrap_session(session_)),
        conn_(&session_.connection()) {
    s_.begin();
    if (partitioned_) {
      index_.emplace(*window, column_);
      counts_.assign(window->size(), 0);
    }
    lock_partitions();
    table_name_ = state_.table_name(session_, dataset_);
    table_ = qualified(state_.schema, table_name_);
    // A long name's table is on record, so that readers find it (and no other dataset takes it).
    detail::pg::record_table(*conn_, state_.schema, name_, table_name_);
    stored_ = state_.engine.recorded(session_, name_, &stored_as_);
    // Columns on record for a table that is gone (another dataset kept the table both were
    // truncated to by an earlier version): the table is made anew.
    if (!stored_.empty() && !detail::pg::table_exists(session_, state_.schema, table_name_)) {
      drop_table();
    }
    if (stored_.empty()) take_over();
    // An unpartitioned dataset is replaced whole, so it may come back with any columns and
    // types: its table goes, inside this transaction, and the batches build it anew.
    if (dataset.partitioning == nullptr && !stored_.empty()) drop_table();
  }

  void append(const Table& batch) override {
    if (broken_) throw DestinationError("postgresql: writer used after a failure");
    try {
      append_batch(batch);
    } catch (...) {
      broken_ = true;
      throw;
    }
  }

  std::int64_t commit() override {
    if (broken_) throw DestinationError("postgresql: writer used after a failure");
    broken_ = true;  // call at most once
    // Without rows a partitioned dataset still gets its table, with the partition column.
    if (dataset_.partitioning != nullptr) {
      evolve(detail::with_partition_column(dataset_, written_));
    }
    if (!cleared_) clear_window();
    if (copying_) end_copy();
    record_partitions();
    // A write without columns changes no list (see retired_columns): it waits for no lock.
    if (dataset_.partitioning != nullptr && !written_.empty()) record_retired();
    s_.commit();
    return rows_;
  }

 private:
  // Same-partition writers serialize on these locks (taken in key order).
  void lock_partitions() {
    const std::vector<std::string> keys =
        partitioned_ ? window_->keys() : std::vector<std::string>{""};
    s_.lock(name_, keys);
  }

  void append_batch(const Table& batch) {
    std::vector<std::vector<std::size_t>> parts;
    if (partitioned_) parts = index_->split(dataset_, batch);  // before anything is sent
    if (!partitioned_ && dataset_.partitioning) detail::check_every_row_held(dataset_, batch);
    if (batch.num_columns() > 0) {
      evolve(batch.schema());
      written_ = written_.empty() ? batch.schema() : Schema::unify(written_, batch.schema());
    }
    if (!cleared_) clear_window();
    if (batch.num_rows() == 0) return;
    if (!copying_ || copy_columns_ != batch.schema().fields()) start_copy(batch.schema());
    const std::size_t n = batch.num_columns();
    std::vector<const std::vector<Value>*> cells(n);
    for (std::size_t c = 0; c < n; ++c) cells[c] = &batch.column(c);
    if (partitioned_) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        appender_->add(cells, parts[i]);
        counts_[i] += static_cast<std::int64_t>(parts[i].size());
      }
    } else {
      appender_->add(cells, 0, batch.num_rows());
    }
    rows_ += static_cast<std::int64_t>(batch.num_rows());
  }

  // A table of the dataset's name that this destination did not create is refused, or, when
  // the dataset adopts it, recorded with its columns as they are (and indexed like ours).
  void take_over() {
    if (!detail::pg::table_exists(session_, state_.schema, table_name_)) return;
    // A concurrent writer of the dataset may have created it since the record was read: the
    // record is read again in line behind it.
    detail::pg::lock_table_changes(session_, state_.schema, table_name_);
    stored_ = state_.engine.recorded(session_, name_, &stored_as_);
    if (!stored_.empty()) return;
    std::optional<Schema> existing;
    try {
      existing = detail::pg::foreign_schema(session_, state_.schema, table_name_);
      if (!existing) return;
    } catch (const DestinationError& e) {
      if (dataset_.adopt) {
        state_.fail_table(table_name_, fmt::format("cannot be taken over by asset '{}': {}",
                                                   dataset_.asset, e.what()));
      }
    }
    if (!dataset_.adopt) {
      state_.fail_table(table_name_,
                        fmt::format("exists but was not created by interloper; it is left "
                                    "as it is. Rename it, or let asset '{}' take it over "
                                    "(adopt: true)",
                                    dataset_.asset));
    }
    // From an empty record to the table's own columns: CREATE TABLE IF NOT EXISTS leaves the
    // table as it is; the columns are recorded and the partition column indexed.
    detail::pg::change_schema(*conn_, state_.schema, name_, table_name_, Schema(), stored_as_,
                              *existing, column_, untyped_column());
    stored_ = std::move(*existing);
  }

  void drop_table() {
    detail::pg::lock_table_changes(session_, state_.schema, table_name_);
    detail::drop_recorded_table(session_, state_.engine, name_, table_);
    stored_ = Schema();
    stored_as_.clear();
  }

  // The stored and incoming types cannot be unified: says why, and how to go on for a
  // partitioned dataset.
  [[noreturn]] void incompatible(const Schema& incoming, const DataError& e) const {
    try {
      if (dataset_.partitioning != nullptr) detail::evolve_schema(dataset_, stored_, incoming);
    } catch (const DestinationError& explained) {
      state_.fail_table(table_name_, explained.what());
    }
    state_.fail_table(table_name_, e.what());
  }

  // Creates the table, adds columns or widens types when `given` needs it.
  void evolve(const Schema& given) {
    // (An unpartitioned dataset's table is gone by now: stored_ is empty.)
    const Schema incoming = detail::keeping_stored_doubles(stored_, given);
    Schema merged;
    try {
      merged = Schema::unify(stored_, incoming);
    } catch (const DataError& e) {
      incompatible(incoming, e);
    }
    if (merged == stored_) return;
    if (copying_) end_copy();
    // Table changes by concurrent writers of one dataset take turns; re-read once in line.
    detail::pg::lock_table_changes(session_, state_.schema, table_name_);
    stored_ = state_.engine.recorded(session_, name_, &stored_as_);
    try {
      merged = Schema::unify(stored_, detail::keeping_stored_doubles(stored_, given));
    } catch (const DataError& e) {
      incompatible(incoming, e);
    }
    if (merged == stored_) return;
    detail::pg::change_schema(*conn_, state_.schema, name_, table_name_, stored_, stored_as_,
                              merged, column_, untyped_column());
    stored_ = merged;
  }

  DataType untyped_column() const {
    return dataset_.partitioning ? detail::untyped_partition_column(*dataset_.partitioning)
                                 : DataType::string;
  }

  // Deletes what the write replaces: the window's ranges or keys, or everything.
  void clear_window() {
    cleared_ = true;
    if (stored_.empty()) return;  // no table yet
    if (!partitioned_) {
      s_.run("DELETE FROM " + table_);
      return;
    }
    detail::delete_window(session_, state_.engine, {stored_, stored_as_, table_}, *window_, column_,
                          index_->is_time() || index_->is_list());
  }

  void start_copy(const Schema& columns) {
    if (copying_) end_copy();
    std::vector<std::string> names;
    std::vector<DataType> types;
    for (const Field& f : columns.fields()) {
      const std::size_t at = *stored_.find(f.name);
      names.push_back(stored_as_[at]);
      types.push_back(stored_.field(at).type);
    }
    appender_ = s_.append(state_.schema, table_name_, names, types);
    copying_ = true;
    copy_columns_ = columns.fields();
  }

  void end_copy() {
    copying_ = false;
    appender_->finish();
    appender_.reset();
  }

  // Which stored columns this write did not produce; writers of the dataset take turns.
  void record_retired() {
    detail::pg::lock_table_changes(session_, state_.schema, table_name_);
    const Schema stored = state_.engine.recorded(session_, name_, nullptr);
    const std::vector<std::string> before = detail::read_retired(session_, state_.engine, name_);
    const std::vector<std::string> after =
        detail::retired_columns(dataset_, stored, written_, before);
    if (after != before) detail::write_retired(session_, state_.engine, name_, after);
  }

  // The registry tells an empty written partition from a missing one.
  void record_partitions() {
    if (!partitioned_) {
      s_.run("DELETE FROM " + state_.catalog("_interloper_partitions") + " WHERE dataset = $1",
             {{Value(name_)}});
      if (dataset_.partitioning) return;
    }
    std::vector<std::string> keys = partitioned_ ? window_->keys() : std::vector<std::string>{""};
    std::vector<std::string> rows;
    if (partitioned_) {
      for (std::int64_t n : counts_) rows.push_back(std::to_string(n));
    } else {
      rows.push_back(std::to_string(rows_));
    }
    const std::vector<Value> params{Value(name_), Value(detail::pg::text_array(keys)),
                                    Value(detail::pg::text_array(rows))};
    s_.run("INSERT INTO " + state_.catalog("_interloper_partitions") +
               " (dataset, key, rows, written_at) "
               "SELECT $1, k, r::bigint, now() AT TIME ZONE 'UTC' "
               "FROM unnest($2::text[], $3::text[]) AS u(k, r) "
               "ON CONFLICT (dataset, key) DO UPDATE SET rows = excluded.rows, "
               "written_at = excluded.written_at",
           params);
  }

  detail::PostgresState& state_;
  DatasetRef dataset_;
  const PartitionWindow* window_;
  bool partitioned_;
  std::string column_;
  std::string name_;        // the key of the dataset's records
  std::string table_name_;  // its table, unqualified
  std::string table_;       // its table, qualified and quoted
  sql::PostgresSession session_;
  sql::SqlSession& s_;          // session_, or what a fault sweep wraps it in
  postgres::Connection* conn_;  // session_'s connection, for the catalog's own statements
  std::optional<detail::WindowIndex> index_;
  std::vector<std::int64_t> counts_;
  Schema stored_;
  std::vector<std::string> stored_as_;  // the table's names of stored_'s columns
  Schema written_;                      // the columns of every batch appended
  bool cleared_ = false;
  bool copying_ = false;
  bool broken_ = false;
  std::vector<Field> copy_columns_;
  std::unique_ptr<sql::Appender> appender_;
  std::int64_t rows_ = 0;
};

}  // namespace

std::unique_ptr<WindowWriter> detail::open_postgres_writer(PostgresState& state,
                                                           const DatasetRef& dataset,
                                                           const PartitionWindow* window) {
  return std::make_unique<PostgresWindowWriter>(state, dataset, window);
}

}  // namespace interloper
