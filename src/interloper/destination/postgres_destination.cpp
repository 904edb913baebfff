// PostgresDestination: one table per asset in a schema, a window write in one transaction with
// rows streamed through binary COPY, reads through a binary cursor.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "interloper/destination.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/destination/postgres_rows.hpp"
#include "interloper/destination/postgres_schema.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/postgres_sql.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper {

namespace {

using detail::pg::qualified;
constexpr auto quote = sql::quote_identifier;

// Bytes of COPY data gathered before they are handed to libpq.
constexpr std::size_t kCopyChunk = std::size_t{1} << 20;
// Rows fetched from a cursor at a time: memory per round trip, not per read.
constexpr int kFetchRows = 20000;

}  // namespace

namespace detail {

// What every operation of one destination shares: the URL, the schema and the connections.
struct PostgresState {
  explicit PostgresState(std::string_view text)
      : url(postgres::parse_url(text, {"schema"})),
        schema(url.get("schema", "public")),
        pool(url) {
    if (schema.empty()) {
      throw DestinationError(fmt::format("postgresql URL '{}': schema is empty", url.redacted));
    }
    auto conn = pool.acquire();
    detail::pg::ensure_catalog(*conn, schema);
  }

  postgres::Url url;
  std::string schema;
  postgres::Pool pool;

  std::string table(const DatasetRef& dataset) const {
    return qualified(schema, SqliteDestination::table_name(dataset));
  }
  std::string catalog(const char* name) const { return qualified(schema, name); }

  [[noreturn]] void fail_table(const std::string& table, const std::string& why) const {
    throw DestinationError(fmt::format("postgresql '{}': table '{}': {}", url.redacted, table, why));
  }
};

}  // namespace detail

struct PostgresDestination::State : detail::PostgresState {
  using PostgresState::PostgresState;
};

namespace {

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
        name_(SqliteDestination::table_name(dataset)),
        table_(state.table(dataset)),
        conn_(state.pool.acquire()),
        tx_(*conn_) {
    if (partitioned_) {
      index_.emplace(*window, column_);
      counts_.assign(window->size(), 0);
    }
    lock_partitions();
    stored_ = detail::pg::stored_schema(*conn_, state_.schema, name_);
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
    if (!cleared_) clear_window();
    if (copying_) end_copy();
    record_partitions();
    if (dataset_.partitioning != nullptr) record_retired();
    tx_.commit();
    return rows_;
  }

 private:
  // Same-partition writers serialize on these locks; taken in key order so that two windows
  // overlapping in several partitions never wait on each other in a cycle.
  void lock_partitions() {
    std::vector<std::string> keys = partitioned_ ? window_->keys() : std::vector<std::string>{""};
    std::sort(keys.begin(), keys.end());
    postgres::Params params;
    params.text(name_);
    params.text(detail::pg::text_array(keys));
    conn_->exec(
        "SELECT pg_advisory_xact_lock(hashtext($1), hashtext(k)) "
        "FROM unnest($2::text[]) WITH ORDINALITY AS u(k, n) ORDER BY n",
        params);
  }

  void append_batch(const Table& batch) {
    std::vector<std::vector<std::size_t>> parts;
    if (partitioned_) parts = index_->split(dataset_, batch);  // before anything is sent
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
    auto put = [&](std::size_t r) {
      detail::pg::CopyEncoder::row(buffer_, cells, copy_types_, r);
      if (buffer_.size() >= kCopyChunk) flush();
    };
    if (partitioned_) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        for (std::size_t r : parts[i]) put(r);
        counts_[i] += static_cast<std::int64_t>(parts[i].size());
      }
    } else {
      for (std::size_t r = 0; r < batch.num_rows(); ++r) put(r);
    }
    rows_ += static_cast<std::int64_t>(batch.num_rows());
  }

  // A table of the dataset's name that this destination did not create is refused, or, when
  // the dataset adopts it, recorded with its columns as they are (and indexed like ours).
  void take_over() {
    std::optional<Schema> existing;
    try {
      existing = detail::pg::foreign_schema(*conn_, state_.schema, name_);
      if (!existing) return;
    } catch (const DestinationError& e) {
      if (dataset_.adopt) {
        state_.fail_table(
            name_, fmt::format("cannot be taken over by asset '{}': {}", dataset_.asset, e.what()));
      }
    }
    if (!dataset_.adopt) {
      state_.fail_table(name_, fmt::format("exists but was not created by interloper; it is left "
                                           "as it is. Rename it, or let asset '{}' take it over "
                                           "(adopt: true)",
                                           dataset_.asset));
    }
    postgres::Params lock;
    lock.text("interloper ddl " + state_.schema + "." + name_);
    conn_->exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
    // From an empty record to the table's own columns: CREATE TABLE IF NOT EXISTS leaves the
    // table as it is; the columns are recorded and the partition column indexed.
    detail::pg::change_schema(*conn_, state_.schema, name_, Schema(), *existing, column_);
    stored_ = std::move(*existing);
  }

  void drop_table() {
    postgres::Params lock;
    lock.text("interloper ddl " + state_.schema + "." + name_);
    conn_->exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
    conn_->exec("DROP TABLE IF EXISTS " + table_);
    postgres::Params params;
    params.text(name_);
    conn_->exec("DELETE FROM " + state_.catalog("_interloper_columns") + " WHERE dataset = $1",
                params);
    stored_ = Schema();
  }

  // The stored and incoming types cannot be unified: says why, and how to go on for a
  // partitioned dataset.
  [[noreturn]] void incompatible(const Schema& incoming, const DataError& e) const {
    try {
      if (dataset_.partitioning != nullptr) detail::evolve_schema(dataset_, stored_, incoming);
    } catch (const DestinationError& explained) {
      state_.fail_table(name_, explained.what());
    }
    state_.fail_table(name_, e.what());
  }

  // Creates the table, adds columns or widens types when `incoming` needs it.
  void evolve(const Schema& incoming) {
    Schema merged;
    try {
      merged = Schema::unify(stored_, incoming);
    } catch (const DataError& e) {
      incompatible(incoming, e);
    }
    if (merged == stored_) return;
    if (copying_) end_copy();
    // Table changes by concurrent writers of one dataset take turns; re-read once in line.
    postgres::Params lock;
    lock.text("interloper ddl " + state_.schema + "." + name_);
    conn_->exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
    stored_ = detail::pg::stored_schema(*conn_, state_.schema, name_);
    try {
      merged = Schema::unify(stored_, incoming);
    } catch (const DataError& e) {
      incompatible(incoming, e);
    }
    if (merged == stored_) return;
    detail::pg::change_schema(*conn_, state_.schema, name_, stored_, merged, column_);
    stored_ = merged;
  }

  // Deletes what the write replaces: the window's ranges or keys, or everything.
  void clear_window() {
    cleared_ = true;
    if (stored_.empty()) return;  // no table yet
    if (!partitioned_) {
      conn_->exec("DELETE FROM " + table_);
      return;
    }
    auto c = stored_.find(column_);
    if (!c) return;
    DataType type = stored_.field(*c).type;
    std::vector<Filter> filters;
    if (index_->is_time() || index_->is_list()) {
      filters.push_back(window_->filter(column_));  // the union of the partitions
    } else {
      for (std::size_t i = 0; i < window_->size(); ++i) {
        filters.push_back(window_->partition_at(i)->filter(column_));
      }
    }
    for (const Filter& filter : filters) {
      detail::pg::Where where = detail::pg::where_of(filter, type);
      conn_->exec("DELETE FROM " + table_ + " WHERE " + where.sql, where.params);
    }
  }

  void start_copy(const Schema& columns) {
    if (copying_) end_copy();
    std::string sql = "COPY " + table_ + " (";
    copy_types_.clear();
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const Field& f = columns.field(c);
      sql += (c ? ", " : "") + quote(f.name);
      copy_types_.push_back(stored_.field(*stored_.find(f.name)).type);
    }
    sql += ") FROM STDIN (FORMAT binary)";
    conn_->copy_start(sql);
    copying_ = true;
    copy_columns_ = columns.fields();
    detail::pg::CopyEncoder::header(buffer_);
  }

  void flush() {
    conn_->copy_put(buffer_.data(), buffer_.size());
    buffer_.clear();
  }

  void end_copy() {
    detail::pg::CopyEncoder::trailer(buffer_);
    flush();
    copying_ = false;
    conn_->copy_end();
  }

  // Which stored columns this write did not produce; writers of the dataset take turns.
  void record_retired() {
    postgres::Params lock;
    lock.text("interloper ddl " + state_.schema + "." + name_);
    conn_->exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
    const Schema stored = detail::pg::stored_schema(*conn_, state_.schema, name_);
    const std::vector<std::string> before =
        detail::pg::retired_columns(*conn_, state_.schema, name_);
    const std::vector<std::string> after =
        detail::retired_columns(dataset_, stored, written_, before);
    if (after != before) detail::pg::record_retired(*conn_, state_.schema, name_, after);
  }

  // The registry tells an empty written partition from a missing one.
  void record_partitions() {
    postgres::Params params;
    params.text(name_);
    if (!partitioned_) {
      conn_->exec("DELETE FROM " + state_.catalog("_interloper_partitions") + " WHERE dataset = $1",
                  params);
      if (dataset_.partitioning) return;
    }
    std::vector<std::string> keys = partitioned_ ? window_->keys() : std::vector<std::string>{""};
    std::vector<std::string> rows;
    if (partitioned_) {
      for (std::int64_t n : counts_) rows.push_back(std::to_string(n));
    } else {
      rows.push_back(std::to_string(rows_));
    }
    params.text(detail::pg::text_array(keys));
    params.text(detail::pg::text_array(rows));
    conn_->exec("INSERT INTO " + state_.catalog("_interloper_partitions") +
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
  std::string name_;   // unqualified
  std::string table_;  // qualified and quoted
  postgres::Pool::Lease conn_;
  postgres::Transaction tx_;
  std::optional<detail::WindowIndex> index_;
  std::vector<std::int64_t> counts_;
  Schema stored_;
  Schema written_;  // the columns of every batch appended
  bool cleared_ = false;
  bool copying_ = false;
  bool broken_ = false;
  std::vector<Field> copy_columns_;
  std::vector<DataType> copy_types_;
  std::string buffer_;
  std::int64_t rows_ = 0;
};

// Rows of `select` (a SELECT of `schema`'s columns, in that order) through a binary cursor,
// decoded straight into the table a chunk at a time.
Table fetch(postgres::Connection& conn, const Schema& schema, const std::string& select,
            const postgres::Params& params) {
  Table out(schema);
  postgres::Transaction tx(conn, "READ ONLY");
  conn.exec("DECLARE il_read BINARY NO SCROLL CURSOR FOR " + select, params);
  std::vector<DataType> types;
  for (const Field& f : schema.fields()) types.push_back(f.type);
  const std::string fetch_sql = fmt::format("FETCH FORWARD {} FROM il_read", kFetchRows);
  for (;;) {
    postgres::Result chunk = conn.exec(fetch_sql);
    const int rows = chunk.rows();
    for (int r = 0; r < rows; ++r) {
      std::vector<Value> row;
      row.reserve(types.size());
      for (std::size_t c = 0; c < types.size(); ++c) {
        int ic = static_cast<int>(c);
        row.push_back(chunk.is_null(r, ic) ? Value()
                                            : detail::pg::decode_binary(chunk.value(r, ic),
                                                                        types[c],
                                                                        schema.field(c).name));
      }
      out.append_row(std::move(row));
    }
    if (rows < kFetchRows) break;
  }
  tx.commit();
  return out;
}

// The rows of a window in window order: partition by partition, storage order inside each.
Table in_window_order(Table rows, const PartitionWindow& window, const std::string& column) {
  detail::WindowIndex index(window, column);
  std::vector<std::vector<std::size_t>> parts(index.size());
  const auto& cells = rows.column(column);
  bool ordered = true;
  std::size_t last = 0;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    std::size_t i = cells[r].is_null() ? detail::WindowIndex::npos : index.locate(cells[r]);
    if (i == detail::WindowIndex::npos) continue;
    ordered = ordered && i >= last;
    last = i;
    parts[i].push_back(r);
  }
  std::vector<std::size_t> order;
  order.reserve(rows.num_rows());
  for (const auto& part : parts) order.insert(order.end(), part.begin(), part.end());
  if (ordered && order.size() == rows.num_rows()) return rows;
  return rows.select_rows(order);
}

// The rows of the open cursor il_query, typed by the result's column types.
Table fetch_query(postgres::Connection& conn) {
  const std::string fetch_sql = fmt::format("FETCH FORWARD {} FROM il_query", kFetchRows);
  Table out;
  std::vector<Oid> types;
  for (bool first = true;; first = false) {
    postgres::Result chunk = conn.exec(fetch_sql);
    try {
      if (first) {
        std::vector<Field> fields;
        for (int c = 0; c < chunk.columns(); ++c) {
          types.push_back(PQftype(chunk.get(), c));
          fields.push_back({PQfname(chunk.get(), c), detail::pg::result_type(types.back())});
        }
        out = Table(Schema(std::move(fields)));
      }
      for (int r = 0; r < chunk.rows(); ++r) {
        std::vector<Value> row;
        row.reserve(types.size());
        for (int c = 0; c < static_cast<int>(types.size()); ++c) {
          row.push_back(chunk.is_null(r, c)
                            ? Value()
                            : detail::pg::text_value(chunk.value(r, c), types[static_cast<std::size_t>(c)]));
        }
        out.append_row(std::move(row));
      }
    } catch (const DataError& e) {
      conn.fail(fmt::format("query result: {}", e.what()));
    }
    if (chunk.rows() < kFetchRows) break;
  }
  return out;
}

}  // namespace

PostgresDestination::PostgresDestination(std::string_view url)
    : state_(std::make_unique<State>(url)) {}

PostgresDestination::~PostgresDestination() = default;

std::string PostgresDestination::url() const { return state_->url.redacted; }

const std::string& PostgresDestination::schema_name() const { return state_->schema; }

std::unique_ptr<WindowWriter> PostgresDestination::open_writer(const DatasetRef& dataset,
                                                               const PartitionWindow* window) {
  return std::make_unique<PostgresWindowWriter>(*state_, dataset, window);
}

Table PostgresDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  auto conn = state_->pool.acquire();
  Schema schema = detail::pg::stored_schema(*conn, state_->schema,
                                            SqliteDestination::table_name(dataset));
  if (schema.empty()) return Table();
  std::string select = "SELECT ";
  for (std::size_t i = 0; i < schema.size(); ++i) {
    select += (i ? ", " : "") + quote(schema.field(i).name);
  }
  select += " FROM " + state_->table(dataset);
  if (!window || !dataset.partitioning) {
    return fetch(*conn, schema, select + " ORDER BY ctid", {});
  }
  const std::string& column = dataset.partitioning->column();
  auto c = schema.find(column);
  if (!c) return Table(schema);
  detail::pg::Where where = detail::pg::where_of(window->filter(column), schema.field(*c).type);
  Table rows = fetch(*conn, schema, select + " WHERE " + where.sql + " ORDER BY ctid", where.params);
  return in_window_order(std::move(rows), *window, column);
}

std::int64_t PostgresDestination::row_count(const DatasetRef& dataset,
                                            const Partition* partition) {
  auto conn = state_->pool.acquire();
  Schema schema = detail::pg::stored_schema(*conn, state_->schema,
                                            SqliteDestination::table_name(dataset));
  if (schema.empty()) return 0;
  std::string sql = "SELECT count(*) FROM " + state_->table(dataset);
  detail::pg::Where where;
  if (partition && dataset.partitioning) {
    auto c = schema.find(dataset.partitioning->column());
    if (!c) return 0;
    where = detail::pg::where_of(partition->filter(dataset.partitioning->column()),
                                 schema.field(*c).type);
    sql += " WHERE " + where.sql;
  }
  return conn->exec(sql, where.params).int_value(0, 0);
}

std::vector<PartitionCount> PostgresDestination::partition_counts(const DatasetRef& dataset,
                                                                  const PartitionWindow& window) {
  const std::string name = SqliteDestination::table_name(dataset);
  std::vector<std::string> keys = window.keys();
  std::vector<PartitionCount> counts(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) counts[i].key = keys[i];
  auto conn = state_->pool.acquire();
  {
    postgres::Params params;
    params.text(name);
    postgres::Result rows = conn->exec(
        "SELECT key FROM " + state_->catalog("_interloper_partitions") + " WHERE dataset = $1",
        params);
    std::unordered_set<std::string_view> written;
    for (int r = 0; r < rows.rows(); ++r) written.insert(rows.value(r, 0));
    for (auto& count : counts) count.written = written.count(count.key) > 0;
  }
  Schema schema = detail::pg::stored_schema(*conn, state_->schema, name);
  if (!dataset.partitioning) return counts;
  const std::string& column = dataset.partitioning->column();
  auto c = schema.find(column);
  if (!c) return counts;
  DataType type = schema.field(*c).type;
  // One row per distinct value, placed in its partition here.
  detail::pg::Where where = detail::pg::where_of(window.filter(column), type);
  postgres::Result rows =
      conn->exec("SELECT " + quote(column) + ", count(*) FROM " + state_->table(dataset) +
                     " WHERE " + where.sql + " GROUP BY 1",
                 where.params, true);
  detail::WindowIndex index(window, column);
  for (int r = 0; r < rows.rows(); ++r) {
    if (rows.is_null(r, 0)) continue;
    Value v = detail::pg::decode_binary(rows.value(r, 0), type, column);
    std::size_t i = index.locate(v);
    if (i == detail::WindowIndex::npos) continue;
    counts[i].rows += static_cast<std::int64_t>(postgres::get_u64(rows.value(r, 1).data()));
    counts[i].written = true;
  }
  return counts;
}

std::optional<Schema> PostgresDestination::schema(const DatasetRef& dataset) {
  const std::string name = SqliteDestination::table_name(dataset);
  auto conn = state_->pool.acquire();
  Schema schema = detail::pg::stored_schema(*conn, state_->schema, name);
  if (!schema.empty()) return schema;
  postgres::Params params;
  params.text(name);
  postgres::Result rows = conn->exec("SELECT 1 FROM " + state_->catalog("_interloper_partitions") +
                                         " WHERE dataset = $1 LIMIT 1",
                                     params);
  if (rows.rows() > 0) return schema;
  return std::nullopt;
}

std::vector<std::string> PostgresDestination::retired_columns(const DatasetRef& dataset) {
  auto conn = state_->pool.acquire();
  return detail::pg::retired_columns(*conn, state_->schema, SqliteDestination::table_name(dataset));
}

void PostgresDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  const std::string name = SqliteDestination::table_name(dataset);
  auto conn = state_->pool.acquire();
  postgres::Transaction tx(*conn);
  // Table changes take turns with the writers of the same dataset (see the writer).
  postgres::Params lock;
  lock.text("interloper ddl " + state_->schema + "." + name);
  conn->exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
  postgres::Params params;
  params.text(name);
  if (window == nullptr || dataset.partitioning == nullptr) {
    conn->exec("DROP TABLE IF EXISTS " + state_->table(dataset));
    conn->exec("DELETE FROM " + state_->catalog("_interloper_columns") + " WHERE dataset = $1",
               params);
    conn->exec("DELETE FROM " + state_->catalog("_interloper_partitions") + " WHERE dataset = $1",
               params);
    detail::pg::record_retired(*conn, state_->schema, name, {});
    tx.commit();
    return;
  }
  const Schema schema = detail::pg::stored_schema(*conn, state_->schema, name);
  const std::string& column = dataset.partitioning->column();
  if (auto c = schema.find(column)) {
    const DataType type = schema.field(*c).type;
    std::vector<Filter> filters;
    if (window->as_time_window()) {
      filters.push_back(window->filter(column));
    } else {
      for (std::size_t i = 0; i < window->size(); ++i) {
        filters.push_back(window->partition_at(i)->filter(column));
      }
    }
    for (const Filter& filter : filters) {
      detail::pg::Where where = detail::pg::where_of(filter, type);
      conn->exec("DELETE FROM " + state_->table(dataset) + " WHERE " + where.sql, where.params);
    }
  }
  params.text(detail::pg::text_array(window->keys()));
  conn->exec("DELETE FROM " + state_->catalog("_interloper_partitions") +
                 " WHERE dataset = $1 AND key = ANY($2::text[])",
             params);
  tx.commit();
}

Table PostgresDestination::query(std::string_view sql, const Params& params,
                                 const QueryScope& scope) {
  try {
    return query(sql, params);
  } catch (const DestinationError& e) {
    if (scope.asset.empty()) throw;
    throw DestinationError(fmt::format("asset '{}': {}", scope.asset, e.what()));
  }
}

Table PostgresDestination::query(std::string_view sql, const Params& params) {
  detail::pg::NumberedQuery numbered = detail::pg::number_parameters(sql);
  postgres::Params bound;
  for (const std::string& name : numbered.names) {
    auto given = std::find_if(params.begin(), params.end(), [&](const auto& p) {
      return p.first == name || p.first == ":" + name;
    });
    if (given == params.end()) {
      bound.null();  // as SQLite leaves an unbound parameter null
    } else {
      detail::pg::bind_value(bound, given->second);
    }
  }
  for (const auto& [name, value] : params) {
    std::string bare = !name.empty() && name[0] == ':' ? name.substr(1) : name;
    if (std::find(numbered.names.begin(), numbered.names.end(), bare) == numbered.names.end()) {
      throw DestinationError(
          fmt::format("postgresql '{}': query has no parameter ':{}': {}", url(), bare, sql));
    }
  }
  auto conn = state_->pool.acquire();
  postgres::Transaction tx(*conn, "READ ONLY");
  conn->exec("SET LOCAL search_path TO " + quote(state_->schema) + ", public");
  conn->exec("DECLARE il_query NO SCROLL CURSOR FOR " + numbered.sql, bound);
  Table out = fetch_query(*conn);
  tx.commit();
  return out;
}

}  // namespace interloper
