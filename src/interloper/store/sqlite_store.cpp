// SqliteStore: the SQL state store in one SQLite file. What is SQLite's own: the file's schema
// version (PRAGMA user_version) and the conversion of files of earlier versions, reading older
// files read-only as they are, and claims held by a process of this host.
#include <fmt/format.h>

#include <functional>

#include "interloper/sqlsession/sqlite_session.hpp"
#include "interloper/store/owner_process.hpp"
#include "interloper/store/sql_store_state.hpp"

namespace interloper {

namespace detail {

namespace {

constexpr std::int64_t kSchemaVersion = 8;

class SqliteEngine final : public StoreEngine {
 public:
  SqliteEngine(std::string path, bool read_only)
      : session_(std::move(path), read_only ? sqlite::Database::Mode::read_only
                                            : sqlite::Database::Mode::read_write),
        read_only_(read_only) {}

  sql::SqlSession& session() override { return session_; }
  const std::string& name() const override { return session_.display(); }
  std::string table(std::string_view name) const override {
    return session_.dialect().quote(name);
  }
  std::string index(std::string_view name) const override {
    // Named after their tables: partition_ranges_failure, claims_owner, ...
    const bool partition = name.rfind("ranges_", 0) == 0 || name.rfind("keys_", 0) == 0;
    return session_.dialect().quote((partition ? "partition_" : "") + std::string(name));
  }
  std::string_view id_column() const override { return "INTEGER PRIMARY KEY"; }
  std::string_view keyed_table() const override { return " WITHOUT ROWID"; }

  void add_column(std::string_view table, std::string_view column,
                  std::string_view definition) override {
    const std::vector<Value> params{std::string(table), std::string(column)};
    const Table found =
        session_.query("SELECT count(*) FROM pragma_table_info(?) WHERE name = ?", params);
    if (int_at(found, 0, 0) != 0) return;
    session_.execute(fmt::format("ALTER TABLE {} ADD COLUMN {} {}", this->table(table),
                                 session_.dialect().quote(column), definition));
  }

  void open(SqlStoreState& state) override;

  std::string_view holder_column() const override { return "process"; }
  std::string holder(std::vector<Value>& params) const override {
    params.emplace_back(this_process());
    return "?";
  }
  void drop_gone_holders(SqlStoreState&) override {}  // found on the way (holding)
  std::optional<std::string> holding(std::string_view token, const Claim& claim) override {
    switch (process_state(token)) {
      case ProcessState::dead:
        return std::nullopt;
      case ProcessState::running:
        return "its " + process_words(token) + " is running";
      case ProcessState::unknown:
        break;
    }
    return fmt::format("its process cannot be checked from here ({}); the claim lapses at {}",
                       token.empty() ? "not recorded" : process_words(token),
                       claim.expires.to_string());
  }
  void claimed(std::string_view) override {}

 private:
  std::int64_t schema_version() { return int_at(session_.query("PRAGMA user_version"), 0, 0); }
  bool holds_nothing() {
    return int_at(session_.query("SELECT count(*) FROM sqlite_master"), 0, 0) == 0;
  }
  // Converts the tables of the first file format (one row per record, every row carrying its
  // record) into states, then drops them. Runs inside the opening transaction.
  void migrate_from_records(SqlStoreState& state);

  sql::SqliteSession session_;
  bool read_only_;
};

void SqliteEngine::open(SqlStoreState& state) {
  const std::int64_t version = schema_version();
  if (version == kSchemaVersion) return;
  if (read_only_ && version >= 5 && version < kSchemaVersion) {
    // Version 5 lacks the last record per dataset, version 6 also the process of each claim,
    // version 7 only the canceled count of each run: readers take them as they are.
    state.has_last_records = version >= 6;
    state.has_run_canceled = false;
    return;
  }
  if (read_only_) {
    if (version == 0 && holds_nothing()) {
      throw NotYetAStore(fmt::format("store '{}' holds no tables yet", name()));
    }
    throw DestinationError(fmt::format(
        "store '{}': written by another version; run a command that writes (materialize, "
        "backfill) to convert it",
        name()));
  }
  sql::Transaction tx(session_);
  state.create_tables();
  migrate_from_records(state);
  session_.execute(fmt::format("PRAGMA user_version = {}", kSchemaVersion));
  tx.commit();
}

void SqliteEngine::migrate_from_records(SqlStoreState& state) {
  // Each table of the first format, with the columns that place a row in its dataset scope
  // (ordinals, or a key) and how its state is set now.
  using Assign = std::function<void(const Table&, std::size_t, const DatasetRef&, const Cell&)>;
  const std::pair<std::string_view, std::pair<std::string_view, Assign>> old_tables[] = {
      {"materialization_ranges",
       {"first, last",
        [&](const Table& rows, std::size_t i, const DatasetRef& dataset, const Cell& cell) {
          state.assign_range(dataset, text_at(rows, i, 2), int_at(rows, i, 3), int_at(rows, i, 4),
                             cell);
        }}},
      {"materialization_keys",
       {"key, NULL AS unused",
        [&](const Table& rows, std::size_t i, const DatasetRef& dataset, const Cell& cell) {
          state.assign_key(dataset, text_at(rows, i, 2), text_at(rows, i, 3), cell);
        }}}};
  for (const auto& [name, how] : old_tables) {
    const std::vector<Value> params{std::string(name)};
    const Table found = session_.query(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", params);
    if (int_at(found, 0, 0) == 0) continue;
    // Every old row carried its record: status, rows, run id, start, finish, error, asset name.
    const Table rows = session_.query(
        fmt::format("SELECT source, asset, scope, {}, status, rows, run_id, started, finished, "
                    "error, asset_name FROM {} ORDER BY source, asset, scope, 4",
                    how.first, table(name)));
    for (std::size_t i = 0; i < rows.num_rows(); ++i) {
      const MaterializationRecord record =
          outcome_at(rows, i, 6, text_at(rows, i, 11), status_from(rows.column(5)[i]));
      how.second(rows, i, DatasetRef{text_at(rows, i, 0), text_at(rows, i, 1), nullptr},
                 state.cell_for(record));
    }
    session_.execute("DROP TABLE " + table(name));
  }
}

}  // namespace

std::unique_ptr<SqlStoreState> open_sqlite_state(std::string path, bool read_only) {
  auto state = std::make_unique<SqlStoreState>(
      std::make_unique<SqliteEngine>(std::move(path), read_only));
  state->engine->open(*state);
  return state;
}

}  // namespace detail

SqliteStore::SqliteStore(std::string path) : SqliteStore(std::move(path), false) {}
SqliteStore::SqliteStore(std::string path, bool read_only)
    : SqlStore(detail::open_sqlite_state(std::move(path), read_only)) {}
SqliteStore::~SqliteStore() = default;

const std::string& SqliteStore::path() const { return state().engine->name(); }

}  // namespace interloper
