// What every operation of one PostgreSQL destination shares, private to the destination layer:
// the URL, the schema, the connections, and the window writer.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "interloper/destination.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/sqlsession/postgres_rows.hpp"
#include "interloper/destination/postgres_schema.hpp"
#include "interloper/sqlsession/postgres_session.hpp"
#include "interloper/sqlsession/postgres_sql.hpp"
#include "interloper/destination/sql_destination.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper::detail {

// What PostgreSQL does differently for the reads every SQL destination shares: a connection
// borrowed from the pool per operation, tables in one schema (a long dataset name's table
// shortened, see pg::table_of), columns of long names stored under short ones, rows in the
// order of the heap scan.
class PostgresEngine final : public SqlEngine {
 public:
  PostgresEngine(postgres::Pool& pool, std::string schema)
      : pool_(pool), schema_(std::move(schema)) {}
  void with_session(const std::function<void(sql::SqlSession&)>& work) override;
  std::string catalog(std::string_view name) const override {
    return pg::qualified(schema_, std::string(name));
  }
  std::string table_of(sql::SqlSession& s, const std::string& record) override {
    return pg::qualified(schema_, pg::table_of(s, schema_, record));
  }
  std::string_view stored_as_column() const override { return "coalesce(stored_as, \"column\")"; }
  SqlWhere where_of(const Filter& filter, DataType type,
                    const std::string& stored_as) const override {
    return pg::where_of(filter, type, stored_as);
  }
  Table read_stored_order(sql::SqlSession& s, const std::string& select,
                          std::span<const Value> params, const Schema& columns) override;
  bool table_gone(sql::SqlSession& s, const std::string& record) override {
    return !pg::table_exists(s, schema_, pg::table_of(s, schema_, record));
  }
  // Table changes take turns with the writers of the same dataset (see the writer).
  void lock_table(sql::SqlSession& s, const std::string& record) override {
    pg::lock_table_changes(s, schema_, pg::table_of(s, schema_, record));
  }
  void drop_table(sql::SqlSession& s, const std::string& record) override;
  void forget_partitions(sql::SqlSession& s, const std::string& record,
                         const std::vector<std::string>& keys) override;

 private:
  postgres::Pool& pool_;
  std::string schema_;
};

// What every operation of one destination shares: the URL, the schema and the connections.
struct PostgresState {
  explicit PostgresState(std::string_view text)
      : url(postgres::parse_url(text, {"schema"})),
        schema(url.get("schema", "public")),
        pool(url),
        engine(pool, schema),
        reads(engine) {
    if (schema.empty()) {
      throw DestinationError(fmt::format("postgresql URL '{}': schema is empty", url.redacted));
    }
    sql::PostgresSession session(pool.acquire());
    detail::pg::ensure_catalog(session, schema);
  }

  postgres::Url url;
  std::string schema;
  postgres::Pool pool;
  PostgresEngine engine;
  SqlDestination reads;

  // The key of `dataset`'s records: "SOURCE__ASSET" (or "ASSET"), whatever its length.
  static std::string record_name(const DatasetRef& dataset) { return detail::record_name(dataset); }
  // The table of `dataset`, unquoted (see pg::table_of), and qualified and quoted.
  std::string table_name(sql::SqlSession& s, const DatasetRef& dataset) const {
    return pg::table_of(s, schema, record_name(dataset));
  }
  std::string catalog(const char* name) const { return pg::qualified(schema, name); }

  [[noreturn]] void fail_table(const std::string& table, const std::string& why) const {
    throw DestinationError(
        fmt::format("postgresql '{}': table '{}': {}", url.redacted, table, why));
  }
};

// A writer replacing `window` (nullptr: the whole dataset) of `dataset` (postgres_writer.cpp).
std::unique_ptr<WindowWriter> open_postgres_writer(PostgresState& state, const DatasetRef& dataset,
                                                   const PartitionWindow* window);

}  // namespace interloper::detail

namespace interloper {

struct PostgresDestination::State : detail::PostgresState {
  using PostgresState::PostgresState;
};

}  // namespace interloper
