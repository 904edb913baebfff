// Internal to the SQLite destination: its connection state, shared by the writer and the reads.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "interloper/destination.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/sql_destination.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/sqlsession/sqlite_codec.hpp"
#include "interloper/sqlsession/sqlite_guard.hpp"
#include "interloper/sqlsession/sqlite_session.hpp"

namespace interloper::detail::sqlite_store {

using sqlite::Statement;
// Identifiers are quoted by the same rule as Filter::to_sql's.
inline constexpr auto quote = sql::quote_identifier;

// A WHERE clause (without the keyword) and its text parameters: the Filter's own SQL, with
// time bounds as the text they are compared with.
struct Where {
  std::string sql;
  std::vector<std::string> params;
};

Where where_of(const Filter& filter, Filter::Placeholder style = Filter::Placeholder::question,
               std::string_view prefix = "p");

}  // namespace interloper::detail::sqlite_store

namespace interloper {

// The SQLite destination's files see these helpers unqualified.
using namespace detail::sqlite_store;

struct SqliteDestination::State {
  // What SQLite does differently for the reads every SQL destination shares: one connection
  // under the destination's lock, tables named after their datasets, rows in rowid order, and
  // the recorded columns remembered between reads (see State::columns).
  class Engine final : public detail::SqlEngine {
   public:
    explicit Engine(State& state) : state_(state) {}
    void with_session(const std::function<void(sql::SqlSession&)>& work) override;
    std::string catalog(std::string_view name) const override { return quote(name); }
    std::string table_of(sql::SqlSession&, const std::string& record) override {
      return quote(record);
    }
    std::string_view stored_as_column() const override { return "\"column\""; }
    Schema recorded(sql::SqlSession& s, const std::string& record,
                    std::vector<std::string>* names) override;
    detail::SqlWhere where_of(const Filter& filter, DataType type,
                              const std::string& stored_as) const override;
    Table read_stored_order(sql::SqlSession& s, const std::string& select,
                            std::span<const Value> params, const Schema& columns) override;
    void drop_table(sql::SqlSession&, const std::string& record) override {
      state_.drop_table(record);
    }
    void rolled_back() override { state_.forget(); }

   private:
    State& state_;
  };

  explicit State(std::string p)
      : path(std::move(p)), session(path), db(session.database()), engine(*this), reads(engine) {
    db.exec(
        "CREATE TABLE IF NOT EXISTS _interloper_columns (dataset TEXT NOT NULL, "
        "\"column\" TEXT NOT NULL, type TEXT NOT NULL, position INTEGER NOT NULL, "
        "PRIMARY KEY (dataset, \"column\"));"
        "CREATE TABLE IF NOT EXISTS _interloper_partitions (dataset TEXT NOT NULL, "
        "key TEXT NOT NULL, rows INTEGER NOT NULL, written_at TEXT NOT NULL, "
        "PRIMARY KEY (dataset, key));"
        "CREATE TABLE IF NOT EXISTS _interloper_retired (dataset TEXT NOT NULL, "
        "\"column\" TEXT NOT NULL, PRIMARY KEY (dataset, \"column\"));");
  }

  std::string path;
  sql::SqliteSession session;
  sqlite::Database& db;  // the session's connection
  Engine engine;
  detail::SqlDestination reads;
  std::mutex mutex;
  // What this connection knows of the stored schemas and partition-column indexes, valid while
  // no other connection has committed (PRAGMA data_version unchanged). Own writes keep it up to
  // date; a failed write forgets it, since its rollback undoes what it recorded.
  std::unordered_map<std::string, Schema> known_schemas;
  std::unordered_set<std::string> known_indexes;
  std::int64_t data_version = -1;
  // Which of the connection's staging tables (_interloper_stage_N) a writer holds.
  std::vector<bool> stage_slots;
  void forget() {
    known_schemas.clear();
    known_indexes.clear();
  }

  void sync() {
    auto stmt = db.cached("PRAGMA data_version");
    stmt->step();
    std::int64_t version = stmt->column_int(0);
    if (version != data_version) forget();
    data_version = version;
  }

  // The stored schema of `table` (empty when the dataset was never written with columns).
  Schema columns(const std::string& table) {
    sync();
    if (auto it = known_schemas.find(table); it != known_schemas.end()) return it->second;
    Schema schema = detail::read_recorded(session, engine, table, nullptr);
    known_schemas.emplace(table, schema);
    return schema;
  }

  // The stored columns the latest write did not produce (see Destination::retired_columns).
  std::vector<std::string> retired(const std::string& table) {
    return detail::read_retired(session, engine, table);
  }

  void record_retired(const std::string& table, const std::vector<std::string>& columns) {
    detail::write_retired(session, engine, table, columns);
  }


  // Creates the table or adds the columns `incoming` brings (a partitioned dataset's table has
  // at least its partition column, see with_partition_column); widens remembered types; records
  // which stored columns `incoming` lacks.
  Schema ensure_table(sql::SqlSession& s, const DatasetRef& dataset, const std::string& table,
                      const Schema& incoming, const std::string& partition_column) {
    Schema stored = columns(table);
    const Schema written = detail::with_partition_column(dataset, incoming);
    if (written.empty() && stored.empty()) return stored;
    Schema merged;
    try {
      merged = detail::evolve_schema(dataset, stored, written);
    } catch (const DestinationError& e) {
      throw DestinationError(fmt::format("sqlite '{}': {}", path, e.what()));
    }
    if (stored.empty()) {
      std::string sql = "CREATE TABLE IF NOT EXISTS " + quote(table) + " (";
      for (std::size_t i = 0; i < merged.size(); ++i) {
        const Field& f = merged.field(i);
        sql += fmt::format("{}{} {}", i ? ", " : "", quote(f.name), sql_type(f.type));
      }
      sql += ")";
      s.execute(sql);
    } else {
      for (std::size_t i = stored.size(); i < merged.size(); ++i) {
        const Field& f = merged.field(i);
        s.execute(fmt::format("ALTER TABLE {} ADD COLUMN {} {}", quote(table), quote(f.name),
                              sql_type(f.type)));
      }
    }
    std::string index_key = table + '\0' + partition_column;
    if (!partition_column.empty() && merged.find(partition_column) &&
        known_indexes.count(index_key) == 0) {
      std::string sql = fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} ({})",
                                    quote(table + "__" + partition_column), quote(table),
                                    quote(partition_column));
      s.execute(sql);
      known_indexes.insert(std::move(index_key));
    }
    if (!(merged == stored)) {
      const std::string upsert =
          s.dialect().upsert("_interloper_columns", {"dataset", "column", "type", "position"}, 2);
      for (std::size_t i = 0; i < merged.size(); ++i) {
        const std::vector<Value> row{Value(table), Value(merged.field(i).name),
                                     Value(type_text(merged.field(i))),
                                     Value(static_cast<long long>(i))};
        s.run(upsert, row);
      }
    }
    known_schemas[table] = merged;
    if (dataset.partitioning != nullptr) {
      const std::vector<std::string> before = retired(table);
      const std::vector<std::string> after =
          detail::retired_columns(dataset, merged, incoming, before);
      if (after != before) record_retired(table, after);
    }
    return merged;
  }

  // Reads every row matching `where` (all rows when empty) in storage order.
  Table select(const std::string& table, const Schema& schema, const Where* where) {
    if (schema.empty()) return Table(schema);
    std::string sql = "SELECT ";
    for (std::size_t i = 0; i < schema.size(); ++i) {
      sql += (i ? ", " : "") + quote(schema.field(i).name);
    }
    sql += " FROM " + quote(table);
    std::vector<Value> params;
    if (where) {
      sql += " WHERE " + where->sql;
      params.assign(where->params.begin(), where->params.end());
    }
    return session.query(sql + " ORDER BY rowid", params, schema);
  }

  // Drops the table and what is remembered of it: an unpartitioned dataset is replaced whole,
  // so its next write may bring any columns and types.
  void drop_table(const std::string& table) {
    if (columns(table).empty()) return;
    detail::drop_recorded_table(session, engine, table, quote(table));
    record_retired(table, {});
    known_schemas.erase(table);
    for (auto it = known_indexes.begin(); it != known_indexes.end();) {
      it = it->rfind(table + '\0', 0) == 0 ? known_indexes.erase(it) : std::next(it);
    }
  }

  // Deletes the rows a replace of `window` removes (all of them when null).
  void clear(sql::SqlSession& s, const std::string& name, const Schema& schema,
             const PartitionWindow* window, const std::string& column, bool by_union);
  // Records each partition of `window` (or the whole dataset) as written with `rows`.
  void register_partitions(sql::SqlSession& s, const std::string& name, const DatasetRef& dataset,
                           const PartitionWindow* window, const std::vector<std::int64_t>& rows);

  // Whether `table` exists in the database but this destination did not create it: it has no
  // columns on record (a dataset written without columns has no table).
  bool foreign(const std::string& table) { return columns(table).empty() && table_exists(table); }
  // Throws DestinationError naming a foreign `table` unless `dataset` adopts it.
  void refuse_foreign(const DatasetRef& dataset, const std::string& table);
  // Takes a foreign `table` over (refusing it unless `dataset` adopts it): records its columns
  // and their types as the dataset's stored schema. Runs inside the caller's transaction.
  void adopt_foreign(const DatasetRef& dataset, const std::string& table);

  bool table_exists(const std::string& table) {
    Statement stmt(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    stmt.bind_text(1, table, false);
    return stmt.step();
  }
};

}  // namespace interloper
