// PostgresDestination: one table per asset in a schema, a window write in one transaction with
// rows streamed through binary COPY, reads through a binary cursor.
#include "interloper/destination/postgres_state.hpp"

namespace interloper {

namespace {

using detail::pg::qualified;
constexpr auto quote = sql::quote_identifier;

}  // namespace

namespace {

// Rows of `select` (a SELECT of `schema`'s columns, in that order) as one binary result,
// decoded straight into the table, in storage order. The order comes from the
// plan rather than from ORDER BY ctid, whose sort cost as much as the read itself: a
// sequential or bitmap heap scan returns rows in ctid order, so the read runs with index scans,
// parallel workers and synchronized sequential scans (which start mid-table) turned off.
Table fetch(postgres::Connection& conn, const Schema& schema, const std::string& select,
            const postgres::Params& params) {
  Table out(schema);
  postgres::Transaction tx(conn, "READ ONLY");
  conn.exec(
      "SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off; "
      "SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL synchronize_seqscans = off");
  // One binary result: a cursor's FETCHes cost more round trips than the rows take.
  postgres::Result result = conn.exec(select, params, true);
  std::vector<DataType> types;
  for (const Field& f : schema.fields()) types.push_back(f.type);
  const int rows = result.rows();
  out.reserve(static_cast<std::size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    std::vector<Value> row;
    row.reserve(types.size());
    for (std::size_t c = 0; c < types.size(); ++c) {
      int ic = static_cast<int>(c);
      row.push_back(result.is_null(r, ic) ? Value()
                                          : detail::pg::decode_binary(result.value(r, ic), types[c],
                                                                      schema.field(c).name));
    }
    out.append_row(std::move(row));
  }
  tx.commit();
  return out;
}

// Deletes the rows of `window`'s partitions from the table of `dataset`.
void drop_window(detail::PostgresState& state, postgres::Connection& conn,
                 const DatasetRef& dataset, const PartitionWindow& window) {
  std::vector<std::string> stored_as;
  const Schema schema = detail::pg::stored_schema(
      conn, state.schema, detail::PostgresState::record_name(dataset), &stored_as);
  const std::string& column = dataset.partitioning->column();
  auto c = schema.find(column);
  if (!c) return;
  const DataType type = schema.field(*c).type;
  for (const Filter& filter :
       detail::window_filters(window, column, window.as_time_window().has_value())) {
    detail::pg::Where where = detail::pg::where_of(filter, type, stored_as[*c]);
    conn.exec("DELETE FROM " + state.table(conn, dataset) + " WHERE " + where.sql, where.params);
  }
}

}  // namespace

PostgresDestination::PostgresDestination(std::string_view url)
    : state_(std::make_unique<State>(url)) {}

PostgresDestination::~PostgresDestination() = default;

std::string PostgresDestination::url() const { return state_->url.redacted; }

const std::string& PostgresDestination::schema_name() const { return state_->schema; }

std::unique_ptr<WindowWriter> PostgresDestination::open_writer(const DatasetRef& dataset,
                                                               const PartitionWindow* window) {
  return detail::open_postgres_writer(*state_, dataset, window);
}

Table PostgresDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  auto conn = state_->pool.acquire();
  std::vector<std::string> stored_as;
  Schema schema =
      detail::pg::stored_schema(*conn, state_->schema, State::record_name(dataset), &stored_as);
  if (schema.empty()) return Table();
  std::string select = "SELECT ";
  for (std::size_t i = 0; i < schema.size(); ++i) select += (i ? ", " : "") + quote(stored_as[i]);
  select += " FROM " + state_->table(*conn, dataset);
  if (!window || !dataset.partitioning) {
    return fetch(*conn, schema, select, {});
  }
  const std::string& column = dataset.partitioning->column();
  auto c = schema.find(column);
  if (!c) return Table(schema);
  detail::pg::Where where =
      detail::pg::where_of(window->filter(column), schema.field(*c).type, stored_as[*c]);
  Table rows = fetch(*conn, schema, select + " WHERE " + where.sql, where.params);
  return detail::in_window_order(std::move(rows), *window, column);
}

std::int64_t PostgresDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  auto conn = state_->pool.acquire();
  std::vector<std::string> stored_as;
  Schema schema =
      detail::pg::stored_schema(*conn, state_->schema, State::record_name(dataset), &stored_as);
  if (schema.empty()) return 0;
  std::string sql = "SELECT count(*) FROM " + state_->table(*conn, dataset);
  detail::pg::Where where;
  if (partition && dataset.partitioning) {
    auto c = schema.find(dataset.partitioning->column());
    if (!c) return 0;
    where = detail::pg::where_of(partition->filter(dataset.partitioning->column()),
                                 schema.field(*c).type, stored_as[*c]);
    sql += " WHERE " + where.sql;
  }
  return conn->exec(sql, where.params).int_value(0, 0);
}

std::vector<PartitionCount> PostgresDestination::partition_counts(const DatasetRef& dataset,
                                                                  const PartitionWindow& window) {
  const std::string name = State::record_name(dataset);
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
    // Records whose table is gone (another dataset kept a table both were truncated to) hold
    // nothing: their partitions read as never written, and `status --verify` says so.
    if (!written.empty() &&
        !detail::pg::table_exists(*conn, state_->schema, state_->table_name(*conn, dataset))) {
      return counts;
    }
    for (auto& count : counts) count.written = written.count(count.key) > 0;
  }
  std::vector<std::string> stored_as;
  Schema schema = detail::pg::stored_schema(*conn, state_->schema, name, &stored_as);
  if (!dataset.partitioning) return counts;
  const std::string& column = dataset.partitioning->column();
  auto c = schema.find(column);
  if (!c) return counts;
  DataType type = schema.field(*c).type;
  // One row per distinct value, placed in its partition here.
  detail::pg::Where where = detail::pg::where_of(window.filter(column), type, stored_as[*c]);
  postgres::Result rows =
      conn->exec("SELECT " + quote(stored_as[*c]) + ", count(*) FROM " +
                     state_->table(*conn, dataset) + " WHERE " + where.sql + " GROUP BY 1",
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
  const std::string name = State::record_name(dataset);
  auto conn = state_->pool.acquire();
  Schema schema = detail::pg::stored_schema(*conn, state_->schema, name);
  if (!schema.empty()) return schema;
  postgres::Params params;
  params.text(name);
  postgres::Result rows = conn->exec(
      "SELECT 1 FROM " + state_->catalog("_interloper_partitions") + " WHERE dataset = $1 LIMIT 1",
      params);
  if (rows.rows() > 0) return schema;
  return std::nullopt;
}

std::vector<std::string> PostgresDestination::retired_columns(const DatasetRef& dataset) {
  auto conn = state_->pool.acquire();
  return detail::pg::retired_columns(*conn, state_->schema, State::record_name(dataset));
}

void PostgresDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  const std::string name = State::record_name(dataset);
  auto conn = state_->pool.acquire();
  postgres::Transaction tx(*conn);
  const std::string table = state_->table_name(*conn, dataset);
  // Table changes take turns with the writers of the same dataset (see the writer).
  detail::pg::lock_table_changes(*conn, state_->schema, table);
  postgres::Params params;
  params.text(name);
  if (window == nullptr || dataset.partitioning == nullptr) {
    conn->exec("DROP TABLE IF EXISTS " + detail::pg::qualified(state_->schema, table));
    conn->exec("DELETE FROM " + state_->catalog("_interloper_columns") + " WHERE dataset = $1",
               params);
    conn->exec("DELETE FROM " + state_->catalog("_interloper_partitions") + " WHERE dataset = $1",
               params);
    detail::pg::record_retired(*conn, state_->schema, name, {});
    detail::pg::forget_table(*conn, state_->schema, name);
    tx.commit();
    return;
  }
  drop_window(*state_, *conn, dataset, *window);
  params.text(detail::pg::text_array(window->keys()));
  conn->exec("DELETE FROM " + state_->catalog("_interloper_partitions") +
                 " WHERE dataset = $1 AND key = ANY($2::text[])",
             params);
  tx.commit();
}

}  // namespace interloper
