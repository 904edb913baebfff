// The SQL state store's state, private to the store layer: one SqlSession, the engine's few
// differences (StoreEngine), and the statements every engine runs alike.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/sqlsession/session.hpp"
#include "interloper/store.hpp"
#include "interloper/store/range_map.hpp"

namespace interloper::detail {

// The state of a stored range or key: its status and, when failed, the id of its failure row
// (0 when materialized).
struct Cell {
  MaterializationStatus status = MaterializationStatus::materialized;
  std::int64_t failure = 0;
  std::string definition;  // of a materialized partition: its asset's definition fingerprint
  friend bool operator==(const Cell&, const Cell&) = default;
};

// One stored range of ordinals.
struct Range {
  std::int64_t first = 0;
  std::int64_t last = 0;
  Cell cell;
};

struct SqlStoreState;

// Thrown when a store opened read-only holds nothing yet: a writer has created the file and
// not yet committed its tables. A reader sees such a store as empty.
struct NotYetAStore : DestinationError {
  using DestinationError::DestinationError;
};

// What the SQL state store does differently per engine: where its tables are, creating and
// upgrading them, and how a claim names who holds it (a process, a session with the server).
class StoreEngine {
 public:
  virtual ~StoreEngine() = default;
  // The store as messages name it: a file's path, a URL with its password redacted.
  virtual const std::string& name() const = 0;
  // The session, opened again first when the engine lost it (a server restart).
  virtual sql::SqlSession& session() = 0;
  // The store's table `name` ("partition_ranges", "claims", ...), quoted and qualified.
  virtual std::string table(std::string_view name) const = 0;
  // The store's index `name` ("ranges_failure", "claims_owner", ...) as this engine names it.
  virtual std::string index(std::string_view name) const = 0;
  // The definition of the id column of the failures and runs tables.
  virtual std::string_view id_column() const = 0;
  // What follows the column list of a table keyed by its primary key.
  virtual std::string_view keyed_table() const = 0;
  // Adds `column` to `table` unless it is there (stores of earlier versions). In a transaction.
  virtual void add_column(std::string_view table, std::string_view column,
                          std::string_view definition) = 0;
  // Creates the tables (create_tables) or brings a store of an earlier version up to them.
  virtual void open(SqlStoreState& state) = 0;

  // The claims column naming who holds a claim ("process", "backend").
  virtual std::string_view holder_column() const = 0;
  // The holder of the claims this store takes, as an SQL expression whose placeholders take
  // the values it appends to `params`.
  virtual std::string holder(std::vector<Value>& params) const = 0;
  // Drops claims whose holders the engine can tell are gone, before claims are taken.
  virtual void drop_gone_holders(SqlStoreState& state) = 0;
  // Why the holder `token` of `claim` counts as running, for messages; nullopt when it is gone
  // (its claims are then taken over at once).
  virtual std::optional<std::string> holding(std::string_view token, const Claim& claim) = 0;
  // `owner` took claims through this store (so that a new session can be stamped on them).
  virtual void claimed(std::string_view owner) = 0;
};

struct SqlStoreState {
  explicit SqlStoreState(std::unique_ptr<StoreEngine> e) : engine(std::move(e)) {}

  std::unique_ptr<StoreEngine> engine;
  std::mutex mutex;
  bool has_last_records = true;  // false in a SQLite file of version 5 opened read-only
  bool has_run_canceled = true;  // false in a SQLite file of version 5 to 7 opened read-only

  // Where the store's statements go: the engine's session, or a session a test put in front
  // of it (a sql::FaultySession).
  sql::SqlSession* interposed = nullptr;

  sql::SqlSession& db() { return interposed != nullptr ? *interposed : engine->session(); }
  std::string t(std::string_view name) const { return engine->table(name); }

  // `sql` with each `?` outside quotes written as the dialect's placeholder, numbered in order;
  // `params` bind to them in that order.
  Table query(std::string_view sql, const std::vector<Value>& params = {});
  std::int64_t run(std::string_view sql, const std::vector<Value>& params = {});
  // Inserts a row into the store's table `table`, or replaces the row with the same first
  // `keys` columns.
  void upsert(std::string_view table, const std::vector<std::string>& columns, std::size_t keys,
              const std::vector<Value>& params);
  void lock(std::string_view table, std::string key);

  void create_tables();

  // Stored ranges overlapping [first, last], ascending.
  std::vector<Range> overlapping(const DatasetRef& dataset, const std::string& scope,
                                 std::int64_t first, std::int64_t last);
  std::int64_t insert_failure(const MaterializationRecord& r);
  void set_last_record(const DatasetRef& dataset, const MaterializationRecord& r);
  Cell cell_for(const MaterializationRecord& r);
  // Deletes the failure rows that no range or key refers to any more.
  void drop_unreferenced(const std::vector<std::int64_t>& failures);
  std::optional<MaterializationRecord> failure(std::int64_t id);
  MaterializationRecord record_of(std::string_view asset, const Cell& cell);
  void insert_range(const DatasetRef& dataset, const std::string& scope, const Range& range);
  // Sets the state of ordinals [first, last] to `cell` (nullopt: no state, as if never
  // recorded): the ranges overlapping it lose their overlapped part, and neighbours in the same
  // state merge with it. In a transaction.
  void assign_range(const DatasetRef& dataset, const std::string& scope, std::int64_t first,
                    std::int64_t last, const std::optional<Cell>& cell);
  // Sets the state of one key; returns the failure it referred to before (0 for none).
  std::int64_t assign_key(const DatasetRef& dataset, const std::string& scope,
                          const std::string& key, const Cell& cell);
  std::optional<Cell> key_cell(const DatasetRef& dataset, const std::string& scope,
                               const std::string& key);

  // The live claim of another owner overlapping `span`, if any; claims of holders found gone
  // are deleted on the way.
  std::optional<Claim> held_by_other(const DatasetRef& dataset, const std::string& scope,
                                     const ClaimSpan& span, std::string_view owner, TimePoint now);
  void drop_own(const DatasetRef& dataset, const std::string& scope, const ClaimSpan& span,
                std::string_view owner);
};

// The state of a SqliteStore (see SqliteStore) and of a PostgresStore, opened.
std::unique_ptr<SqlStoreState> open_sqlite_state(std::string path, bool read_only);
std::unique_ptr<SqlStoreState> open_postgres_state(std::string_view url);

inline const char* status_text(MaterializationStatus s) {
  return s == MaterializationStatus::materialized ? "materialized" : "failed";
}

inline MaterializationStatus status_from(const Value& text) {
  return !text.is_null() && text.as_string() == "failed" ? MaterializationStatus::failed
                                                         : MaterializationStatus::materialized;
}

// Cell of row `row`, whose status, failure and definition are the columns `at` to `at + 2`.
Cell cell_at(const Table& rows, std::size_t row, std::size_t at);
// The record whose rows, run id, start, finish and error are columns `at` to `at + 4`.
MaterializationRecord outcome_at(const Table& rows, std::size_t row, std::size_t at,
                                 std::string asset, MaterializationStatus status);
std::int64_t int_at(const Table& rows, std::size_t row, std::size_t column);
std::string text_at(const Table& rows, std::size_t row, std::size_t column);

}  // namespace interloper::detail
