// SqliteDestination: one table per asset, typed columns, a window write in one transaction.
//
// Dates and timestamps are stored as ISO text so that they sort and compare as text in the
// order of time; _interloper_columns remembers each column's declared type so that reads give
// back exactly the Value types that were written.
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "interloper/destination.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/partitioning/sql.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {

namespace {

using sqlite::Statement;
// Identifiers are quoted by the same rule as Filter::to_sql's.
constexpr auto quote = detail::quote_identifier;

const char* sql_type(DataType type) {
  switch (type) {
    case DataType::boolean:
    case DataType::int64:
      return "INTEGER";
    case DataType::float64:
      return "REAL";
    case DataType::string:
    case DataType::date:
    case DataType::timestamp:
      return "TEXT";
    case DataType::null:
      break;
  }
  return "";
}

// The text a time bound is compared with. Stored dates are "YYYY-MM-DD" and timestamps
// "YYYY-MM-DDTHH:MM:SS"; as text, a date sorts before every timestamp of its own day, so a
// midnight bound must be written as the bare date: then "2026-01-05" and every
// "2026-01-05T..." compare >= it, and both compare < "2026-01-06". A bound inside a day
// (hour partitions) is written in full, which also places a bare date (its midnight) right.
std::string bound_text(TimePoint t) {
  char buffer[detail::kMaxIsoChars];
  char* end =
      t.is_midnight()
          ? detail::put_date(buffer, detail::floor_div(t.epoch_seconds(), detail::kSecondsPerDay))
          : detail::put_timestamp(buffer, t.epoch_seconds());
  return std::string(buffer, end);
}

// A WHERE clause (without the keyword) and its text parameters: the Filter's own SQL, with
// time bounds as the text they are compared with.
struct Where {
  std::string sql;
  std::vector<std::string> params;
};

Where where_of(const Filter& filter,
               Filter::Placeholder style = Filter::Placeholder::question,
               std::string_view prefix = "p") {
  Filter::Sql sql = filter.to_sql(style, 1, prefix);
  Where where{std::move(sql.text), {}};
  where.params.reserve(sql.params.size());
  for (auto& param : sql.params) {
    if (const auto* t = std::get_if<TimePoint>(&param)) {
      where.params.push_back(bound_text(*t));
    } else {
      where.params.push_back(std::move(std::get<std::string>(param)));
    }
  }
  return where;
}

void bind_all(Statement& stmt, const std::vector<std::string>& params, int first = 1) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    stmt.bind_text(first + static_cast<int>(i), params[i], false);
  }
}

}  // namespace

struct SqliteDestination::State {
  explicit State(std::string p) : path(std::move(p)), db(path) {
    db.exec(
        "CREATE TABLE IF NOT EXISTS _interloper_columns (dataset TEXT NOT NULL, "
        "\"column\" TEXT NOT NULL, type TEXT NOT NULL, position INTEGER NOT NULL, "
        "PRIMARY KEY (dataset, \"column\"));"
        "CREATE TABLE IF NOT EXISTS _interloper_partitions (dataset TEXT NOT NULL, "
        "key TEXT NOT NULL, rows INTEGER NOT NULL, written_at TEXT NOT NULL, "
        "PRIMARY KEY (dataset, key));");
  }

  std::string path;
  sqlite::Database db;
  std::mutex mutex;
  // What this connection knows of the stored schemas and partition-column indexes, valid while
  // no other connection has committed (PRAGMA data_version unchanged). Own writes keep it up to
  // date; a failed write forgets it, since its rollback undoes what it recorded.
  std::unordered_map<std::string, Schema> known_schemas;
  std::unordered_set<std::string> known_indexes;
  std::int64_t data_version = -1;

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
    auto stmt = db.cached(
        "SELECT \"column\", type FROM _interloper_columns WHERE dataset = ? ORDER BY position");
    stmt->bind_text(1, table, false);
    std::vector<Field> fields;
    while (stmt->step()) {
      fields.push_back({stmt->column_text(0), type_from_name(stmt->column_text(1))});
    }
    Schema schema(std::move(fields));
    known_schemas.emplace(table, schema);
    return schema;
  }

  // Creates the table or adds the columns `incoming` brings; widens remembered types.
  Schema ensure_table(const DatasetRef& dataset, const std::string& table,
                      const Schema& incoming, const std::string& partition_column) {
    Schema stored = columns(table);
    if (incoming.empty() && stored.empty()) return stored;
    Schema merged;
    try {
      merged = detail::evolve_schema(dataset, stored, incoming);
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
      db.exec(sql.c_str());
    } else {
      for (std::size_t i = stored.size(); i < merged.size(); ++i) {
        const Field& f = merged.field(i);
        std::string sql = fmt::format("ALTER TABLE {} ADD COLUMN {} {}", quote(table),
                                      quote(f.name), sql_type(f.type));
        db.exec(sql.c_str());
      }
    }
    std::string index_key = table + '\0' + partition_column;
    if (!partition_column.empty() && merged.find(partition_column) &&
        known_indexes.count(index_key) == 0) {
      std::string sql = fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} ({})",
                                    quote(table + "__" + partition_column), quote(table),
                                    quote(partition_column));
      db.exec(sql.c_str());
      known_indexes.insert(std::move(index_key));
    }
    if (!(merged == stored)) {
      auto upsert = db.cached(
          "INSERT OR REPLACE INTO _interloper_columns (dataset, \"column\", type, position) "
          "VALUES (?, ?, ?, ?)");
      for (std::size_t i = 0; i < merged.size(); ++i) {
        upsert->reset();
        upsert->bind_text(1, table, false);
        upsert->bind_text(2, merged.field(i).name, false);
        upsert->bind_text(3, type_name(merged.field(i).type), false);
        upsert->bind_int(4, static_cast<std::int64_t>(i));
        upsert->step();
      }
    }
    known_schemas[table] = merged;
    return merged;
  }

  // Reads every row matching `where` (all rows when empty) in storage order.
  Table select(const std::string& table, const Schema& schema, const Where* where) {
    Table out(schema);
    if (schema.empty()) return out;
    std::string sql = "SELECT ";
    for (std::size_t i = 0; i < schema.size(); ++i) {
      sql += (i ? ", " : "") + quote(schema.field(i).name);
    }
    sql += " FROM " + quote(table);
    if (where) sql += " WHERE " + where->sql;
    sql += " ORDER BY rowid";
    Statement stmt(db, sql);
    if (where) bind_all(stmt, where->params);
    std::vector<DataType> types;
    for (const Field& f : schema.fields()) types.push_back(f.type);
    while (stmt.step()) {
      std::vector<Value> row;
      row.reserve(types.size());
      for (std::size_t c = 0; c < types.size(); ++c) {
        row.push_back(
            read_cell(stmt.get(), static_cast<int>(c), types[c], table, schema.field(c).name));
      }
      out.append_row(std::move(row));
    }
    return out;
  }

  Value read_cell(sqlite3_stmt* stmt, int c, DataType type, const std::string& table,
                  const std::string& column) {
    int storage = sqlite3_column_type(stmt, c);
    if (storage == SQLITE_NULL) return Value();
    switch (type) {
      case DataType::null:
        return Value();
      case DataType::boolean:
        return Value(sqlite3_column_int64(stmt, c) != 0);
      case DataType::int64:
        return Value(static_cast<long long>(sqlite3_column_int64(stmt, c)));
      case DataType::float64:
        return Value(sqlite3_column_double(stmt, c));
      case DataType::string:
        break;
      case DataType::date:
      case DataType::timestamp: {
        std::string_view text(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                              static_cast<std::size_t>(sqlite3_column_bytes(stmt, c)));
        if (type == DataType::date) {
          if (auto d = parse_date(text)) return Value(*d);
        } else if (auto t = parse_timestamp(text)) {
          return Value(*t);
        } else if (auto d = parse_date(text)) {
          return Value(Value::Timestamp(*d));
        }
        throw DestinationError(fmt::format("sqlite '{}': table '{}' column '{}': '{}' is not a {}",
                                           path, table, column, text, type_name(type)));
      }
    }
    return Value(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                             static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
  }

  // Drops the table and what is remembered of it: an unpartitioned dataset is replaced whole,
  // so its next write may bring any columns and types.
  void drop_table(const std::string& table) {
    if (columns(table).empty()) return;
    db.run("DROP TABLE IF EXISTS " + quote(table));
    auto clear = db.cached("DELETE FROM _interloper_columns WHERE dataset = ?");
    clear->bind_text(1, table, false);
    clear->step();
    known_schemas.erase(table);
    for (auto it = known_indexes.begin(); it != known_indexes.end();) {
      it = it->rfind(table + '\0', 0) == 0 ? known_indexes.erase(it) : std::next(it);
    }
  }

  // Deletes the rows a replace of `window` removes (all of them when null).
  void clear(const std::string& name, const Schema& schema, const PartitionWindow* window,
             const std::string& column, bool by_union);
  // Records each partition of `window` (or the whole dataset) as written with `rows`.
  void register_partitions(const std::string& name, const DatasetRef& dataset,
                           const PartitionWindow* window, const std::vector<std::int64_t>& rows);

  bool table_exists(const std::string& table) {
    Statement stmt(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    stmt.bind_text(1, table, false);
    return stmt.step();
  }
};

SqliteDestination::SqliteDestination(std::string path)
    : state_(std::make_unique<State>(std::move(path))) {}

SqliteDestination::~SqliteDestination() = default;

std::string SqliteDestination::url() const {
  return (!state_->path.empty() && state_->path.front() == '/') ? "sqlite://" + state_->path
                                                                : "sqlite:" + state_->path;
}

const std::string& SqliteDestination::path() const { return state_->path; }

std::string SqliteDestination::table_name(const DatasetRef& dataset) {
  return dataset.source.empty() ? dataset.asset : dataset.source + "__" + dataset.asset;
}

namespace {

// Binds row `r` of `cells` to `stmt` (one parameter per column, in order). Dates and
// timestamps are bound as their ISO text from `buffers`, which outlive the step that reads them.
void bind_row(sqlite::Database& db, sqlite3_stmt* stmt,
              const std::vector<const std::vector<Value>*>& cells, std::size_t r,
              std::vector<std::array<char, detail::kMaxIsoChars>>& buffers) {
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const Value& v = (*cells[c])[r];
    const int i = static_cast<int>(c) + 1;
    int rc = SQLITE_OK;
    switch (v.type()) {
      case DataType::null:
        rc = sqlite3_bind_null(stmt, i);
        break;
      case DataType::boolean:
        rc = sqlite3_bind_int(stmt, i, v.as_bool() ? 1 : 0);
        break;
      case DataType::int64:
        rc = sqlite3_bind_int64(stmt, i, v.as_int());
        break;
      case DataType::float64:
        rc = sqlite3_bind_double(stmt, i, v.as_double());
        break;
      case DataType::string: {
        const std::string& text = v.as_string();
        rc = sqlite3_bind_text(stmt, i, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
        break;
      }
      case DataType::date:
      case DataType::timestamp: {
        char* out = buffers[c].data();
        char* end = v.type() == DataType::date
                        ? detail::put_date(out, v.as_date().time_since_epoch().count())
                        : detail::put_timestamp(out, v.as_timestamp().time_since_epoch().count());
        rc = sqlite3_bind_text(stmt, i, out, static_cast<int>(end - out), SQLITE_STATIC);
        break;
      }
    }
    if (rc != SQLITE_OK) db.fail("cannot bind a value");
  }
}

// BEGIN (deferred) ... COMMIT for statements that touch only the connection's temporary tables:
// unlike BEGIN IMMEDIATE it takes no lock on the database file.
class TempTransaction {
 public:
  explicit TempTransaction(sqlite::Database& db) : db_(db) { db_.run("BEGIN"); }
  ~TempTransaction() {
    if (!done_) sqlite3_exec(db_.get(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
  TempTransaction(const TempTransaction&) = delete;
  TempTransaction& operator=(const TempTransaction&) = delete;
  void commit() {
    db_.run("COMMIT");
    done_ = true;
  }

 private:
  sqlite::Database& db_;
  bool done_ = false;
};

std::atomic<std::uint64_t> stage_counter{0};

}  // namespace

// Batches are validated as they arrive and staged in a temporary table of the connection (the
// temporary database spills to a file, so memory stays bounded and the database file is not
// locked while the rows are produced). commit() swaps them in with one short transaction:
// delete the window, copy the staged rows, record the partitions.
class SqliteDestination::Writer final : public WindowWriter {
 public:
  Writer(State& state, DatasetRef dataset, const PartitionWindow* window)
      : state_(state),
        dataset_(std::move(dataset)),
        window_(window),
        name_(table_name(dataset_)),
        column_(dataset_.partitioning ? dataset_.partitioning->column() : ""),
        stage_(fmt::format("_interloper_stage_{}", ++stage_counter)) {
    if (window_ != nullptr && dataset_.partitioning != nullptr) {
      index_.emplace(*window_, column_);
      rows_.assign(index_->size(), 0);
    } else {
      rows_.assign(1, 0);
    }
  }

  ~Writer() override {
    if (staged_columns_ == 0) return;
    std::lock_guard lock(state_.mutex);
    const std::string sql = "DROP TABLE IF EXISTS temp." + quote(stage_);
    sqlite3_exec(state_.db.get(), sql.c_str(), nullptr, nullptr, nullptr);
  }

  void append(const Table& batch) override {
    usable();
    unusable_ = true;  // until this batch is in
    std::vector<std::vector<std::size_t>> parts;
    if (index_) parts = index_->split(dataset_, batch);  // throws before anything is staged
    Schema next;
    try {
      next = started_ ? Schema::unify(schema_, batch.schema()) : batch.schema();
    } catch (const DataError& e) {
      throw DestinationError(
          fmt::format("sqlite '{}': table '{}': {}", state_.path, name_, e.what()));
    }
    if (batch.num_rows() > 0) stage(batch, next);
    if (index_) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        rows_[i] += static_cast<std::int64_t>(parts[i].size());
      }
    } else {
      rows_[0] += static_cast<std::int64_t>(batch.num_rows());
    }
    schema_ = std::move(next);
    started_ = true;
    unusable_ = false;
  }

  std::int64_t commit() override {
    usable();
    unusable_ = true;
    std::lock_guard lock(state_.mutex);
    try {
      swap_in();
    } catch (...) {
      state_.forget();  // the rollback undid what the write recorded
      throw;
    }
    std::int64_t total = 0;
    for (std::int64_t rows : rows_) total += rows;
    return total;
  }

 private:
  void usable() const {
    if (unusable_) {
      throw DestinationError(
          fmt::format("sqlite '{}': table '{}': the writer failed or was "
                      "committed",
                      state_.path, name_));
    }
  }

  // Inserts the batch into the staging table, adding the columns it is missing.
  void stage(const Table& batch, const Schema& unified) {
    std::lock_guard lock(state_.mutex);
    auto& db = state_.db;
    const std::string stage = "temp." + quote(stage_);
    if (staged_columns_ == 0) {
      // Untyped columns keep every value as it was bound until the copy at commit.
      std::string sql = "CREATE TEMP TABLE " + quote(stage_) + " (";
      for (std::size_t i = 0; i < unified.size(); ++i) {
        sql += (i ? ", " : "") + quote(unified.field(i).name);
      }
      db.exec((sql + ")").c_str());
    } else {
      for (std::size_t i = staged_columns_; i < unified.size(); ++i) {
        const std::string sql =
            "ALTER TABLE " + stage + " ADD COLUMN " + quote(unified.field(i).name);
        db.exec(sql.c_str());
      }
    }
    staged_columns_ = unified.size();

    const std::size_t n = batch.num_columns();
    std::string sql = "INSERT INTO " + stage + " (";
    std::string values;
    std::vector<const std::vector<Value>*> cells(n);
    for (std::size_t c = 0; c < n; ++c) {
      sql += (c ? ", " : "") + quote(batch.schema().field(c).name);
      values += c ? ", ?" : "?";
      cells[c] = &batch.column(c);
    }
    auto insert = db.cached(sql + ") VALUES (" + values + ")");
    sqlite3_stmt* stmt = insert->get();
    std::vector<std::array<char, detail::kMaxIsoChars>> buffers(n);
    TempTransaction transaction(db);
    for (std::size_t r = 0; r < batch.num_rows(); ++r) {
      bind_row(db, stmt, cells, r, buffers);
      if (sqlite3_step(stmt) != SQLITE_DONE) {
        db.fail(fmt::format("cannot stage rows of table '{}'", name_));
      }
      sqlite3_reset(stmt);
    }
    transaction.commit();
  }

  void swap_in() {
    auto& db = state_.db;
    sqlite::Transaction transaction(db);
    // Replaced whole, an unpartitioned dataset's table goes (inside this transaction) and is
    // built anew from the write's columns and types.
    if (dataset_.partitioning == nullptr) state_.drop_table(name_);
    const Schema schema = state_.ensure_table(dataset_, name_, schema_, column_);
    if (!schema.empty()) {
      const bool by_union = !index_ || index_->is_time() || index_->is_list();
      state_.clear(name_, schema, index_ ? window_ : nullptr, column_, by_union);
    }
    if (staged_columns_ > 0) {
      // A column that widened from date to timestamp holds bare dates from earlier batches:
      // they are stored as their midnight, as a timestamp column's values always are.
      std::string columns, select;
      for (std::size_t i = 0; i < schema_.size(); ++i) {
        const Field& f = schema_.field(i);
        const std::string q = quote(f.name);
        columns += (i ? ", " : "") + q;
        select += i ? ", " : "";
        select +=
            f.type == DataType::timestamp
                ? fmt::format("CASE WHEN length({0}) = 10 THEN {0} || 'T00:00:00' ELSE {0} END", q)
                : q;
      }
      db.exec(fmt::format("INSERT INTO main.{} ({}) SELECT {} FROM temp.{} ORDER BY rowid",
                          quote(name_), columns, select, quote(stage_))
                  .c_str());
    }
    state_.register_partitions(name_, dataset_, index_ ? window_ : nullptr, rows_);
    transaction.commit();
  }

  State& state_;
  DatasetRef dataset_;
  const PartitionWindow* window_;
  const std::string name_;
  const std::string column_;
  const std::string stage_;
  std::optional<detail::WindowIndex> index_;
  std::vector<std::int64_t> rows_;  // per partition of the window, or one for the whole
  Schema schema_;
  std::size_t staged_columns_ = 0;
  bool started_ = false;
  bool unusable_ = false;
};

std::unique_ptr<WindowWriter> SqliteDestination::open_writer(const DatasetRef& dataset,
                                                             const PartitionWindow* window) {
  return std::make_unique<Writer>(*state_, dataset, window);
}

void SqliteDestination::State::clear(const std::string& name, const Schema& schema,
                                     const PartitionWindow* window, const std::string& column,
                                     bool by_union) {
  if (window == nullptr) {
    db.run("DELETE FROM " + quote(name));
    return;
  }
  if (!schema.find(column)) return;
  std::vector<Filter> filters;
  if (by_union) {
    filters.push_back(window->filter(column));  // the union of the partitions
  } else {
    for (std::size_t i = 0; i < window->size(); ++i) {
      filters.push_back(window->partition_at(i)->filter(column));
    }
  }
  for (const Filter& filter : filters) {
    Where where = where_of(filter);
    auto del = db.cached("DELETE FROM " + quote(name) + " WHERE " + where.sql);
    bind_all(*del, where.params);
    del->step();
  }
}

// The registry tells an empty written partition from a missing one.
void SqliteDestination::State::register_partitions(const std::string& name,
                                                   const DatasetRef& dataset,
                                                   const PartitionWindow* window,
                                                   const std::vector<std::int64_t>& rows) {
  if (window == nullptr) {
    auto clear = db.cached("DELETE FROM _interloper_partitions WHERE dataset = ?");
    clear->bind_text(1, name, false);
    clear->step();
  }
  auto upsert = db.cached(
      "INSERT OR REPLACE INTO _interloper_partitions (dataset, key, rows, written_at) "
      "VALUES (?, ?, ?, strftime('%Y-%m-%dT%H:%M:%S', 'now'))");
  auto put = [&](const std::string& key, std::int64_t count) {
    upsert->reset();
    upsert->bind_text(1, name, false);
    upsert->bind_text(2, key, false);
    upsert->bind_int(3, count);
    upsert->step();
  };
  if (window != nullptr) {
    std::vector<std::string> keys = window->keys();
    for (std::size_t i = 0; i < keys.size(); ++i) put(keys[i], rows[i]);
  } else if (!dataset.partitioning) {
    put("", rows[0]);
  }
}

Table SqliteDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  const std::string name = table_name(dataset);
  std::lock_guard lock(state_->mutex);
  Schema schema = state_->columns(name);
  if (schema.empty()) return Table();
  if (!window || !dataset.partitioning) return state_->select(name, schema, nullptr);
  const std::string& column = dataset.partitioning->column();
  if (!schema.find(column)) return Table(schema);
  Where where = where_of(window->filter(column));
  Table rows = state_->select(name, schema, &where);
  // Window order: partition by partition, storage order inside each.
  detail::WindowIndex index(*window, column);
  std::vector<std::vector<std::size_t>> parts(index.size());
  const auto& cells = rows.column(column);
  bool ordered = true;
  std::size_t last = 0;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    std::size_t i = cells[r].is_null() ? detail::WindowIndex::npos : index.locate(cells[r]);
    if (i == detail::WindowIndex::npos) continue;
    ordered = ordered && i >= last;
    last = i;
    parts[i].push_back(r);
  }
  std::vector<std::size_t> order;
  order.reserve(rows.num_rows());
  for (const auto& part : parts) order.insert(order.end(), part.begin(), part.end());
  if (ordered && order.size() == rows.num_rows()) return rows;
  return rows.select_rows(order);
}

std::int64_t SqliteDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  const std::string name = table_name(dataset);
  std::lock_guard lock(state_->mutex);
  Schema schema = state_->columns(name);
  if (schema.empty()) return 0;
  std::string sql = "SELECT COUNT(*) FROM " + quote(name);
  Where where;
  if (partition && dataset.partitioning) {
    if (!schema.find(dataset.partitioning->column())) return 0;
    where = where_of(partition->filter(dataset.partitioning->column()));
    sql += " WHERE " + where.sql;
  }
  Statement stmt(state_->db, sql);
  bind_all(stmt, where.params);
  stmt.step();
  return stmt.column_int(0);
}

std::vector<PartitionCount> SqliteDestination::partition_counts(const DatasetRef& dataset,
                                                                const PartitionWindow& window) {
  const std::string name = table_name(dataset);
  std::vector<std::string> keys = window.keys();
  std::vector<PartitionCount> counts(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) counts[i].key = keys[i];
  std::lock_guard lock(state_->mutex);
  {
    Statement stmt(state_->db, "SELECT key FROM _interloper_partitions WHERE dataset = ?");
    stmt.bind_text(1, name, false);
    std::unordered_set<std::string> written;
    while (stmt.step()) written.insert(stmt.column_text(0));
    for (auto& count : counts) count.written = written.count(count.key) > 0;
  }
  Schema schema = state_->columns(name);
  if (!dataset.partitioning) return counts;
  const std::string& column = dataset.partitioning->column();
  auto c = schema.find(column);
  if (!c) return counts;
  Where where = where_of(window.filter(column));
  Statement stmt(state_->db,
                 "SELECT " + quote(column) + " FROM " + quote(name) + " WHERE " + where.sql);
  bind_all(stmt, where.params);
  detail::WindowIndex index(window, column);
  DataType type = schema.field(*c).type;
  while (stmt.step()) {
    Value v = state_->read_cell(stmt.get(), 0, type, name, column);
    if (v.is_null()) continue;
    std::size_t i = index.locate(v);
    if (i == detail::WindowIndex::npos) continue;
    ++counts[i].rows;
    counts[i].written = true;
  }
  return counts;
}

std::optional<Schema> SqliteDestination::schema(const DatasetRef& dataset) {
  const std::string name = table_name(dataset);
  std::lock_guard lock(state_->mutex);
  Schema schema = state_->columns(name);
  if (!schema.empty()) return schema;
  Statement stmt(state_->db, "SELECT 1 FROM _interloper_partitions WHERE dataset = ? LIMIT 1");
  stmt.bind_text(1, name, false);
  if (stmt.step()) return schema;
  return std::nullopt;
}

QueryableDestination::Relation SqliteDestination::relation_of(const DatasetRef& dataset,
                                                              const PartitionWindow* window,
                                                              std::string_view prefix) const {
  Relation relation{"SELECT * FROM " + quote(table_name(dataset)), {}};
  if (window == nullptr || dataset.partitioning == nullptr) return relation;
  Where where = where_of(window->filter(dataset.partitioning->column()),
                         Filter::Placeholder::named, prefix);
  relation.sql += " WHERE " + where.sql;
  for (std::size_t i = 0; i < where.params.size(); ++i) {
    relation.params.emplace_back(":" + std::string(prefix) + std::to_string(i + 1),
                                 Value(std::move(where.params[i])));
  }
  return relation;
}

Table SqliteDestination::query(std::string_view sql,
                               const std::vector<std::pair<std::string, Value>>& params) {
  std::lock_guard lock(state_->mutex);
  auto& db = state_->db;
  auto cached = db.cached(sql);
  Statement& stmt = *cached;
  if (!sqlite3_stmt_readonly(stmt.get())) {
    throw DestinationError(
        fmt::format("sqlite '{}': query is not read-only: {}", state_->path, sql));
  }
  for (const auto& [name, value] : params) {
    std::string key =
        (!name.empty() && (name[0] == ':' || name[0] == '@' || name[0] == '$')) ? name : ":" + name;
    int i = sqlite3_bind_parameter_index(stmt.get(), key.c_str());
    if (i == 0) {
      throw DestinationError(
          fmt::format("sqlite '{}': query has no parameter '{}': {}", state_->path, key, sql));
    }
    switch (value.type()) {
      case DataType::null:
        stmt.bind_null(i);
        break;
      case DataType::boolean:
        stmt.bind_int(i, value.as_bool() ? 1 : 0);
        break;
      case DataType::int64:
        stmt.bind_int(i, value.as_int());
        break;
      case DataType::float64:
        stmt.bind_double(i, value.as_double());
        break;
      case DataType::string:
        stmt.bind_text(i, value.as_string());
        break;
      case DataType::date:
      case DataType::timestamp:
        stmt.bind_text(i, value.to_string());
        break;
    }
  }
  const int n = sqlite3_column_count(stmt.get());
  // Declared types for result columns that come straight from a dataset's column.
  std::vector<std::optional<DataType>> declared(static_cast<std::size_t>(n));
  std::vector<Field> fields;
  std::unordered_map<std::string, Schema> schemas;
  for (int c = 0; c < n; ++c) {
    const char* table = sqlite3_column_table_name(stmt.get(), c);
    const char* origin = sqlite3_column_origin_name(stmt.get(), c);
    if (table && origin) {
      auto it = schemas.find(table);
      if (it == schemas.end()) it = schemas.emplace(table, state_->columns(table)).first;
      if (auto f = it->second.find(origin))
        declared[static_cast<std::size_t>(c)] = it->second.field(*f).type;
    }
    fields.push_back({sqlite3_column_name(stmt.get(), c),
                      declared[static_cast<std::size_t>(c)].value_or(DataType::null)});
  }
  Table out;
  try {
    out = Table(Schema(fields));
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("sqlite '{}': query result: {}", state_->path, e.what()));
  }
  while (stmt.step()) {
    std::vector<Value> row;
    row.reserve(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) {
      auto uc = static_cast<std::size_t>(c);
      if (declared[uc]) {
        row.push_back(state_->read_cell(stmt.get(), c, *declared[uc], "query", fields[uc].name));
        continue;
      }
      switch (sqlite3_column_type(stmt.get(), c)) {
        case SQLITE_INTEGER:
          row.emplace_back(static_cast<long long>(sqlite3_column_int64(stmt.get(), c)));
          break;
        case SQLITE_FLOAT:
          row.emplace_back(sqlite3_column_double(stmt.get(), c));
          break;
        case SQLITE_NULL:
          row.emplace_back();
          break;
        default:
          row.emplace_back(stmt.column_text(c));
          break;
      }
    }
    try {
      out.append_row(std::move(row));
    } catch (const DataError& e) {
      throw DestinationError(fmt::format("sqlite '{}': query result: {}", state_->path, e.what()));
    }
  }
  return out;
}

}  // namespace interloper
