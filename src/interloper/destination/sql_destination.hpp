// Internal to the destination layer: what the SQL destinations (SqliteDestination,
// PostgresDestination) do alike, over any SqlSession — reading a window's rows in window order,
// counting, the stored schema, the retired columns — and the engine class (SqlEngine) that says
// what differs: where the tables are, how a session is had, how a filter is written, and how
// rows are read in the order they were stored.
//
// Adding an engine is one SqlSession (sqlsession/) and one SqlEngine here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/destination.hpp"
#include "interloper/sqlsession/session.hpp"

namespace interloper::detail {

// A dataset's table as stored: its columns as recorded (empty when the dataset has no table),
// each column's name in the table, and the table quoted (and qualified).
struct StoredTable {
  Schema schema;
  std::vector<std::string> names;
  std::string table;
};

// A WHERE condition (without the keyword) and the values of its placeholders 1..n.
struct SqlWhere {
  std::string sql;
  std::vector<Value> params;
};

// What a SQL destination does differently per engine.
class SqlEngine {
 public:
  virtual ~SqlEngine() = default;
  // Runs `work` on a session of the engine (the destination's connection under its lock, or
  // one borrowed from a pool), in the calling thread.
  virtual void with_session(const std::function<void(sql::SqlSession&)>& work) = 0;
  // The catalog table `name` ("_interloper_columns", ...), quoted and qualified.
  virtual std::string catalog(std::string_view name) const = 0;
  // The table of the dataset recorded as `record` ("SOURCE__ASSET"), quoted and qualified.
  virtual std::string table_of(sql::SqlSession& s, const std::string& record) = 0;
  // The expression of _interloper_columns giving a column's name in its table.
  virtual std::string_view stored_as_column() const = 0;
  // The recorded columns of `record` (a cache may answer), with their names in the table.
  virtual Schema recorded(sql::SqlSession& s, const std::string& record,
                          std::vector<std::string>* names);
  // `filter` over a column of type `type` named `stored_as` in its table.
  virtual SqlWhere where_of(const Filter& filter, DataType type,
                            const std::string& stored_as) const = 0;
  // The rows of `select` (a SELECT of `columns`, in that order, without ORDER BY), in the
  // order they were stored.
  virtual Table read_stored_order(sql::SqlSession& s, const std::string& select,
                                  std::span<const Value> params, const Schema& columns) = 0;
  // Whether the partitions on record for `record` lost their table (and so hold nothing).
  virtual bool table_gone(sql::SqlSession& s, const std::string& record);

  // In a write transaction: takes what changes of `record`'s table take turns on.
  virtual void lock_table(sql::SqlSession& s, const std::string& record);
  // In a write transaction: drops `record`'s table and every record of it but its partitions.
  virtual void drop_table(sql::SqlSession& s, const std::string& record) = 0;
  // In a write transaction: forgets the partitions `keys` of `record`.
  virtual void forget_partitions(sql::SqlSession& s, const std::string& record,
                                 const std::vector<std::string>& keys);
  // A change failed and was rolled back: what was remembered of it goes.
  virtual void rolled_back() {}
};

// The text a time bound is compared with in a column that stores times as ISO text. Stored
// dates are "YYYY-MM-DD" and timestamps "YYYY-MM-DDTHH:MM:SS" (then ".ffffff" for a fraction,
// which sorts after the whole second and before the next); as text, a date sorts before every
// timestamp of its own day, so a midnight bound is written as the bare date: then
// "2026-01-05" and every "2026-01-05T..." compare >= it, and both compare < "2026-01-06". A
// bound inside a day (hour partitions) is written in full, which also places a bare date (its
// midnight) right.
std::string bound_text(TimePoint t);

// The key of `dataset`'s records and (when it fits the engine) its table's name.
std::string record_name(const DatasetRef& dataset);

// The recorded columns of `record` from _interloper_columns (see SqlEngine::recorded).
Schema read_recorded(sql::SqlSession& s, const SqlEngine& engine, const std::string& record,
                     std::vector<std::string>* names);
// The recorded columns the latest write of `record` did not produce, in column order.
std::vector<std::string> read_retired(sql::SqlSession& s, const SqlEngine& engine,
                                      const std::string& record);

// Replaces the list of `record`'s retired columns.
void write_retired(sql::SqlSession& s, const SqlEngine& engine, const std::string& record,
                   const std::vector<std::string>& columns);
// Drops `table` (quoted and qualified), the table of `record`, and its recorded columns.
void drop_recorded_table(sql::SqlSession& s, const SqlEngine& engine, const std::string& record,
                         const std::string& table);

// Deletes the rows of `window`'s partitions over `column` from `t` (nothing when `t` lacks the
// column): one DELETE for the window's own filter when `by_union`, otherwise one per partition.
void delete_window(sql::SqlSession& s, const SqlEngine& engine, const StoredTable& t,
                   const PartitionWindow& window, const std::string& column, bool by_union);

// The operations of Destination every SQL engine runs alike (the writers are the engines' own).
class SqlDestination {
 public:
  explicit SqlDestination(SqlEngine& engine) : engine_(engine) {}
  Table read(const DatasetRef& dataset, const PartitionWindow* window);
  std::int64_t row_count(const DatasetRef& dataset, const Partition* partition);
  std::vector<PartitionCount> partition_counts(const DatasetRef& dataset,
                                               const PartitionWindow& window);
  std::optional<Schema> schema(const DatasetRef& dataset);
  std::vector<std::string> retired_columns(const DatasetRef& dataset);
  void drop(const DatasetRef& dataset, const PartitionWindow* window);

 private:
  StoredTable stored(sql::SqlSession& s, const std::string& record);
  // Rows of `record` in one partition column's values `where`, with the stored table.
  SqlWhere where(const StoredTable& t, std::size_t column, const Filter& filter) const;
  SqlEngine& engine_;
};

}  // namespace interloper::detail
