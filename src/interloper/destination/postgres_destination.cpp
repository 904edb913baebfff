// PostgresDestination: one table per asset in a schema, a window write in one transaction with
// rows streamed through binary COPY, reads of binary results decoded straight into columns.
#include "interloper/destination/postgres_state.hpp"

namespace interloper {

namespace detail {

void PostgresEngine::with_session(const std::function<void(sql::SqlSession&)>& work) {
  sql::PostgresSession session(pool_.acquire());
  work(session);
}

// One binary result, decoded straight into the table, in storage order. The order comes from
// the plan rather than from ORDER BY ctid, whose sort cost as much as the read itself: a
// sequential or bitmap heap scan returns rows in ctid order, so the read runs with index scans,
// parallel workers and synchronized sequential scans (which start mid-table) turned off.
Table PostgresEngine::read_stored_order(sql::SqlSession& s, const std::string& select,
                                        std::span<const Value> params, const Schema& columns) {
  sql::Transaction tx(s, sql::SqlSession::Access::read);
  s.execute(
      "SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off; "
      "SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL synchronize_seqscans = off");
  Table out = s.query(select, params, columns);
  tx.commit();
  return out;
}

void PostgresEngine::drop_table(sql::SqlSession& s, const std::string& record) {
  drop_recorded_table(s, *this, record, table_of(s, record));
  write_retired(s, *this, record, {});
  pg::forget_table(s, schema_, record);
}

void PostgresEngine::forget_partitions(sql::SqlSession& s, const std::string& record,
                                       const std::vector<std::string>& keys) {
  s.run("DELETE FROM " + catalog("_interloper_partitions") +
            " WHERE dataset = $1 AND key = ANY($2::text[])",
        {{Value(record), Value(pg::text_array(keys))}});
}

}  // namespace detail

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
  return state_->reads.read(dataset, window);
}

std::int64_t PostgresDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  return state_->reads.row_count(dataset, partition);
}

std::vector<PartitionCount> PostgresDestination::partition_counts(const DatasetRef& dataset,
                                                                  const PartitionWindow& window) {
  return state_->reads.partition_counts(dataset, window);
}

std::optional<Schema> PostgresDestination::schema(const DatasetRef& dataset) {
  return state_->reads.schema(dataset);
}

std::vector<std::string> PostgresDestination::retired_columns(const DatasetRef& dataset) {
  return state_->reads.retired_columns(dataset);
}

void PostgresDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  state_->reads.drop(dataset, window);
}

}  // namespace interloper
