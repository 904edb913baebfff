// Internal: what the PostgreSQL destination keeps beside each asset's table — the columns'
// declared types and the written partitions — and the SQL that reads and changes them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/destination/sql_destination.hpp"
#include "interloper/sqlsession/postgres_rows.hpp"
#include "interloper/sqlsession/session.hpp"

namespace interloper::detail::pg {

// "SCHEMA"."name".
std::string qualified(const std::string& schema, const std::string& name);

// PostgreSQL keeps the first 63 bytes of a name and drops the rest in silence.
constexpr std::size_t kMaxName = sql::kMaxIdentifier;
// sql::short_identifier with the fingerprint of the whole name: `name` itself when it fits in
// kMaxName bytes, otherwise a readable prefix, '~' and the fingerprint, 63 bytes in all.
std::string short_name(std::string_view name);

// The table that holds the dataset recorded as `dataset` ("SOURCE__ASSET", the key of every
// record): the name itself when it fits; otherwise the table recorded for it in
// _interloper_tables (a table PostgreSQL truncated before names were shortened keeps its
// name), or short_name(dataset) when none is recorded yet.
std::string table_of(sql::SqlSession& s, const std::string& schema, const std::string& dataset);
// Records `table` as the table of a long `dataset` (nothing for a name that fits) inside the
// caller's transaction. Throws DestinationError when another dataset holds that table.
void record_table(postgres::Connection& conn, const std::string& schema, const std::string& dataset,
                  const std::string& table);
// Forgets the table recorded for `dataset` (a dataset dropped whole).
void forget_table(sql::SqlSession& s, const std::string& schema, const std::string& dataset);

// Creates the schema and the catalog tables unless they exist (safe against other processes
// doing the same at once).
void ensure_catalog(sql::SqlSession& s, const std::string& schema);

// Whether a table of that name exists in `schema` (ours or not).
bool table_exists(sql::SqlSession& s, const std::string& schema, const std::string& table);

// Takes, until the transaction ends, the lock under which the table of a dataset and its record
// change: writers, takers-over and drops of one dataset take turns.
void lock_table_changes(sql::SqlSession& s, const std::string& schema, const std::string& table);

// The columns of `table` when it exists but no columns of it are on record: a table this
// destination did not create, as it would record them. nullopt when there is no such table.
// Throws DestinationError naming a column whose type is not one this destination writes
// (binary COPY sends each value in exactly the recorded type).
std::optional<Schema> foreign_schema(sql::SqlSession& s, const std::string& schema,
                                     const std::string& table);

// Brings `table` (the table of dataset `dataset`) from `stored` to `merged` (create, add
// columns, widen types), records the columns and indexes the partition column. `stored_as`
// holds the table's names of the stored columns and is brought to those of `merged` (a new
// column of a long name is stored under short_name). A partition column of type null (no row
// typed it yet) is created as `untyped_partition`. Runs inside the caller's transaction.
void change_schema(postgres::Connection& conn, const std::string& schema,
                   const std::string& dataset, const std::string& table, const Schema& stored,
                   std::vector<std::string>& stored_as, const Schema& merged,
                   const std::string& partition_column, DataType untyped_partition);

// `filter` over a column stored as `type`: time bounds bound as timestamps (as ISO text for a
// text column, in the order text sorts), list membership compared as text.
// `stored_as`, when given, is the table's name of the filter's column.
SqlWhere where_of(const Filter& filter, DataType type, const std::string& stored_as = "");

}  // namespace interloper::detail::pg
