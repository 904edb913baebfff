// Internal: what the PostgreSQL destination keeps beside each asset's table — the columns'
// declared types and the written partitions — and the SQL that reads and changes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/postgres/postgres.hpp"

namespace interloper::detail::pg {

// The PostgreSQL type a column of `type` is stored as (a column that has seen only nulls is
// text until a value decides its type).
const char* sql_type(DataType type);
Oid type_oid(DataType type);

// "SCHEMA"."name".
std::string qualified(const std::string& schema, const std::string& name);

// Creates the schema and the catalog tables unless they exist (safe against other processes
// doing the same at once).
void ensure_catalog(postgres::Connection& conn, const std::string& schema);

// Whether a table of that name exists in `schema` (ours or not).
bool table_exists(postgres::Connection& conn, const std::string& schema, const std::string& table);

// Takes, until the transaction ends, the lock under which the table of a dataset and its record
// change: writers, takers-over and drops of one dataset take turns.
void lock_table_changes(postgres::Connection& conn, const std::string& schema,
                        const std::string& table);

// The stored schema of `table` (empty when never written with columns).
Schema stored_schema(postgres::Connection& conn, const std::string& schema,
                     const std::string& table);

// The columns of `table` when it exists but no columns of it are on record: a table this
// destination did not create, as it would record them. nullopt when there is no such table.
// Throws DestinationError naming a column whose type is not one this destination writes
// (binary COPY sends each value in exactly the recorded type).
std::optional<Schema> foreign_schema(postgres::Connection& conn, const std::string& schema,
                                     const std::string& table);

// The stored columns of `table` the latest write did not produce, in column order
// (Destination::retired_columns).
std::vector<std::string> retired_columns(postgres::Connection& conn, const std::string& schema,
                                         const std::string& table);
// Replaces that list.
void record_retired(postgres::Connection& conn, const std::string& schema, const std::string& table,
                    const std::vector<std::string>& columns);

// Brings `table` from `stored` to `merged` (create, add columns, widen types), records the
// columns and indexes the partition column. Runs inside the caller's transaction.
void change_schema(postgres::Connection& conn, const std::string& schema, const std::string& table,
                   const Schema& stored, const Schema& merged, const std::string& partition_column);

// A WHERE condition (without the keyword) and its parameters, numbered from `first`.
struct Where {
  std::string sql;
  postgres::Params params;
};
// `filter` over a column stored as `type`: time bounds bound as timestamps (as ISO text for a
// text column, in the order text sorts), list membership compared as text.
Where where_of(const Filter& filter, DataType type);

// A text[] literal of `items` for a parameter ({"a","b\"c"}).
std::string text_array(const std::vector<std::string>& items);

}  // namespace interloper::detail::pg
