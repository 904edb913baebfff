#include "interloper/sqlsession/sqlite_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <unordered_set>

#include "interloper/data/format.hpp"
#include "interloper/data/table_columns.hpp"
#include "interloper/sqlsession/internal.hpp"
#include "interloper/sqlsession/sqlite_codec.hpp"
#include "interloper/sqlsession/sqlite_guard.hpp"
#include "interloper/time/civil.hpp"

namespace interloper::sql {

namespace {

using detail::sqlite_store::bind_value;
using detail::sqlite_store::read_stored;
using detail::sqlite_store::stored_value;
using IsoBuffer = std::array<char, detail::kMaxIsoChars>;

SqlError::Kind kind_of(int code) {
  switch (code & 0xff) {
    case SQLITE_CONSTRAINT:
      return SqlError::Kind::constraint;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return SqlError::Kind::conflict;
    case SQLITE_INTERRUPT:
      return SqlError::Kind::timeout;
    default:
      return SqlError::Kind::other;
  }
}

// A value of `type` read from column `c` of the current row (DataType::null: by its storage
// class). Throws DataError when a stored text is not a value of `type`.
Value read_cell(sqlite3_stmt* stmt, int c, DataType type, const Field& field) {
  const int storage = sqlite3_column_type(stmt, c);
  if (storage == SQLITE_NULL) return Value();
  switch (type) {
    case DataType::null:
      return read_stored(stmt, c);
    case DataType::boolean:
      return Value(sqlite3_column_int64(stmt, c) != 0);
    case DataType::int64:
      return Value(static_cast<long long>(sqlite3_column_int64(stmt, c)));
    case DataType::float64:
      return Value(sqlite3_column_double(stmt, c));
    case DataType::string:
      break;
    case DataType::date:
    case DataType::timestamp:
    case DataType::decimal:
    case DataType::json: {
      std::string_view text(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                            static_cast<std::size_t>(sqlite3_column_bytes(stmt, c)));
      if (type == DataType::date) {
        if (const std::optional<Value::Date> d = parse_date(text)) return Value(*d);
      } else if (std::optional<Value> v = stored_value(text, type)) {
        return std::move(*v);
      }
      throw DataError(
          fmt::format("column '{}': '{}' is not a {}", field.name, text, type_name(type)));
    }
  }
  return Value(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                           static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
}

// Binds `value` as parameter `i`; a date into a timestamp column is bound as its midnight.
int bind_stored(sqlite3_stmt* stmt, int i, const Value& value, DataType stored, char* iso) {
  if (stored == DataType::timestamp && value.type() == DataType::date) {
    const char* end = detail::put_timestamp_micros(
        iso, Value::Timestamp(value.as_date()).time_since_epoch().count());
    return sqlite3_bind_text(stmt, i, iso, static_cast<int>(end - iso), SQLITE_STATIC);
  }
  return bind_value(stmt, i, value, iso);
}

// Reads the rows of a prepared statement as `columns` says into tables of `batch_rows`.
void read_rows(sqlite::Statement& stmt, const Schema& columns,
               const std::function<void(Table&&)>& sink, std::size_t batch_rows) {
  const int n = sqlite3_column_count(stmt.get());
  Schema schema = columns;
  if (schema.empty()) {
    std::vector<Field> fields;
    for (int c = 0; c < n; ++c) fields.push_back({sqlite3_column_name(stmt.get(), c)});
    schema = Schema(std::move(fields));
  }
  std::vector<DataType> types;
  for (const Field& f : schema.fields()) types.push_back(f.type);
  const std::vector<Field>& fields = schema.fields();
  // Every column typed: each cell is of its column's type or null, and goes straight into its
  // column. An untyped column takes whatever the engine stored, so its rows go through
  // append_row, which widens the column's type.
  const bool typed = std::none_of(types.begin(), types.end(),
                                  [](DataType type) { return type == DataType::null; });
  Table out(schema);
  detail::TableColumns cells(out);
  if (batch_rows != 0) cells.reserve(batch_rows);
  bool handed = false;
  while (stmt.step()) {
    if (batch_rows != 0 && out.num_rows() >= batch_rows) {  // a new table once a row needs it
      sink(std::move(out));
      handed = true;
      out = Table(schema);
      cells = detail::TableColumns(out);
      cells.reserve(batch_rows);
    }
    if (typed) {
      try {
        for (std::size_t c = 0; c < types.size(); ++c) {
          cells.set(c, read_cell(stmt.get(), static_cast<int>(c), types[c], fields[c]));
        }
      } catch (...) {
        cells.abandon_row();
        throw;
      }
      cells.end_row();
    } else {
      std::vector<Value> row;
      row.reserve(types.size());
      for (std::size_t c = 0; c < types.size(); ++c) {
        row.push_back(read_cell(stmt.get(), static_cast<int>(c), types[c], fields[c]));
      }
      out.append_row(std::move(row));
    }
  }
  if (!handed || out.num_rows() > 0) sink(std::move(out));
}

void bind_params(sqlite::Database& db, sqlite::Statement& stmt, std::span<const Value> params,
                 std::vector<IsoBuffer>& iso) {
  iso.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (bind_value(stmt.get(), static_cast<int>(i) + 1, params[i], iso[i].data()) != SQLITE_OK) {
      db.fail("cannot bind a value");
    }
  }
}

using Clock = std::chrono::steady_clock;

// Stops the statements of a connection once a time limit has passed: SQLite asks the progress
// handler every few thousand virtual-machine steps, and a step it answers "stop" fails with
// SQLITE_INTERRUPT. The handler is removed when this goes.
class Deadline {
 public:
  Deadline(sqlite3* db, double seconds) : db_(db) {
    if (seconds <= 0) return;
    deadline_ = Clock::now() +
                std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    sqlite3_progress_handler(db_, 1000, &Deadline::check, this);
  }
  ~Deadline() {
    if (deadline_) sqlite3_progress_handler(db_, 0, nullptr, nullptr);
  }
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;
  bool passed() const { return passed_; }

 private:
  static int check(void* self) {
    auto* deadline = static_cast<Deadline*>(self);
    if (Clock::now() < *deadline->deadline_) return 0;
    deadline->passed_ = true;
    return 1;
  }
  sqlite3* db_;
  std::optional<Clock::time_point> deadline_;
  bool passed_ = false;
};

}  // namespace

std::string SqliteDialect::type_name(DataType type) const {
  return detail::sqlite_store::sql_type(type);
}

struct SqliteSession::Guard {
  explicit Guard(const std::string& path)
      : db(path, sqlite::Database::Mode::read_only), guard(db) {}
  sqlite::Database db;
  detail::QueryGuard guard;
};

SqliteSession::SqliteSession(std::string path, sqlite::Database::Mode mode)
    : db_(std::move(path), mode) {}

SqliteSession::~SqliteSession() = default;

void SqliteSession::rethrow() const {
  rethrow_as_sql_error(kind_of(sqlite3_extended_errcode(db_.get())));
}

void SqliteSession::execute(std::string_view sql) {
  try {
    db_.exec(std::string(sql).c_str());
  } catch (const DestinationError&) {
    rethrow();
  }
}

std::int64_t SqliteSession::run(std::string_view sql, std::span<const Value> params) {
  try {
    auto stmt = db_.cached(sql);
    std::vector<IsoBuffer> iso;
    bind_params(db_, *stmt, params, iso);
    while (stmt->step()) {
    }
    return sqlite3_changes64(db_.get());
  } catch (const DestinationError&) {
    rethrow();
  }
}

void SqliteSession::query(std::string_view sql, std::span<const Value> params,
                          const Schema& columns, const std::function<void(Table&&)>& sink,
                          std::size_t batch_rows) {
  try {
    // Prepared once per connection: the store and the destination ask the same questions again.
    auto stmt = db_.cached(sql);
    std::vector<IsoBuffer> iso;
    bind_params(db_, *stmt, params, iso);
    read_rows(*stmt, columns, sink, batch_rows);
  } catch (const DataError& e) {
    throw SqlError(fmt::format("sqlite '{}': {}", db_.path(), e.what()));
  } catch (const DestinationError&) {
    rethrow();
  }
}

void SqliteSession::begin(Access access) {
  execute(access == Access::write ? "BEGIN IMMEDIATE" : "BEGIN");
}

void SqliteSession::commit() { execute("COMMIT"); }

void SqliteSession::rollback() noexcept {
  if (in_transaction()) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
}

bool SqliteSession::in_transaction() const { return sqlite3_get_autocommit(db_.get()) == 0; }

// Rows inserted through one prepared INSERT; outside a transaction, each add() is one.
class SqliteSession::Inserter final : public Appender {
 public:
  Inserter(SqliteSession& session, std::string sql, std::vector<DataType> types)
      : session_(session),
        insert_(session.db_.cached(sql)),
        types_(std::move(types)),
        iso_(types_.size()) {}

  void add(const Columns& cells, std::size_t begin, std::size_t end) override {
    put(cells, end - begin, [&](std::size_t i) { return begin + i; });
  }
  void add(const Columns& cells, std::span<const std::size_t> rows) override {
    put(cells, rows.size(), [&](std::size_t i) { return rows[i]; });
  }
  void finish() override {}

 private:
  template <typename RowAt>
  void put(const Columns& cells, std::size_t n, const RowAt& row_at) {
    auto& db = session_.db_;
    const bool own = !session_.in_transaction();
    try {
      if (own) db.run("BEGIN");
      sqlite3_stmt* stmt = insert_->get();
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t r = row_at(i);
        for (std::size_t c = 0; c < cells.size(); ++c) {
          if (bind_stored(stmt, static_cast<int>(c) + 1, (*cells[c])[r], types_[c],
                          iso_[c].data()) != SQLITE_OK) {
            db.fail("cannot bind a value");
          }
        }
        if (sqlite3_step(stmt) != SQLITE_DONE) db.fail("cannot append rows");
        sqlite3_reset(stmt);
      }
      if (own) db.run("COMMIT");
    } catch (const DestinationError&) {
      sqlite3_reset(insert_->get());
      if (own) session_.rollback();
      session_.rethrow();
    }
  }

  SqliteSession& session_;
  sqlite::CachedStatement insert_;
  std::vector<DataType> types_;
  std::vector<IsoBuffer> iso_;
};

std::unique_ptr<Appender> SqliteSession::append(std::string_view schema, std::string_view table,
                                                const std::vector<std::string>& columns,
                                                const std::vector<DataType>& types) {
  std::string values;
  for (std::size_t c = 0; c < columns.size(); ++c) values += c ? ", ?" : "?";
  std::string sql =
      "INSERT INTO " + append_target(dialect_, schema, table, columns) + " VALUES (" + values + ")";
  try {
    return std::make_unique<Inserter>(*this, std::move(sql), types);
  } catch (const DestinationError&) {
    rethrow();
  }
}

Table SqliteSession::guarded_query(const GuardedQuery& query, const DeclaredType& declared) {
  if (!guard_) guard_ = std::make_unique<Guard>(db_.path());
  std::optional<std::unordered_set<std::string>> readable;
  if (query.readable) readable.emplace(query.readable->begin(), query.readable->end());
  const std::string who = query.asset.empty() ? "" : fmt::format("asset '{}': ", query.asset);
  sqlite3* db = guard_->db.get();
  std::unique_ptr<sqlite::Statement> stmt =
      guard_->guard.prepare(query.sql, std::move(readable), query.asset);
  // Named parameters: ":name", "@name", "$name", or a bare name taken as ":name".
  std::vector<IsoBuffer> iso(query.params.size());
  for (std::size_t n = 0; n < query.params.size(); ++n) {
    const auto& [name, value] = query.params[n];
    const bool prefixed = !name.empty() && (name[0] == ':' || name[0] == '@' || name[0] == '$');
    const std::string key = prefixed ? name : ":" + name;
    const int i = sqlite3_bind_parameter_index(stmt->get(), key.c_str());
    if (i == 0) {
      throw SqlError(
          fmt::format("sqlite '{}': query has no parameter '{}': {}", db_.path(), key, query.sql));
    }
    if (bind_value(stmt->get(), i, value, iso[n].data()) != SQLITE_OK) {
      throw SqlError(fmt::format("sqlite '{}': cannot bind parameter '{}'", db_.path(), key));
    }
  }
  // Columns straight from a table are typed as declared.
  const int n = sqlite3_column_count(stmt->get());
  std::vector<Field> fields;
  for (int c = 0; c < n; ++c) {
    std::optional<DataType> type;
    const char* table = sqlite3_column_table_name(stmt->get(), c);
    const char* origin = sqlite3_column_origin_name(stmt->get(), c);
    if (table != nullptr && origin != nullptr && declared) type = declared(table, origin);
    fields.push_back({sqlite3_column_name(stmt->get(), c), type.value_or(DataType::null)});
  }
  Deadline deadline(db, query.timeout_seconds);
  Table out;
  try {
    read_rows(
        *stmt, Schema(std::move(fields)), [&](Table&& t) { out = std::move(t); }, 0);
  } catch (const DataError& e) {
    throw SqlError(fmt::format("{}sqlite '{}': query result: {}", who, db_.path(), e.what()));
  } catch (const DestinationError&) {
    if (deadline.passed()) {
      throw SqlError(fmt::format("{}sqlite '{}': the query timed out after {}s", who, db_.path(),
                                 query.timeout_seconds),
                     SqlError::Kind::timeout);
    }
    const int code = sqlite3_errcode(db);
    if (query.asset.empty() || code == SQLITE_ROW || code == SQLITE_DONE) throw;
    // SQLite's own message, without the statement sent (the user's query with its dependencies).
    throw SqlError(fmt::format("{}sqlite '{}': {}", who, db_.path(), sqlite3_errmsg(db)),
                   kind_of(code));
  }
  return out;
}

}  // namespace interloper::sql
