// SqliteDestination: one table per asset, typed columns, a window write in one transaction.
//
// Dates and timestamps are stored as ISO text so that they sort and compare as text in the
// order of time; _interloper_columns remembers each column's declared type so that reads give
// back exactly the Value types that were written.
#include <fmt/format.h>

#include <array>
#include <cctype>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "interloper/destination.hpp"
#include "interloper/destination/sqlite_state.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {

namespace detail::sqlite_store {

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

Where where_of(const Filter& filter, Filter::Placeholder style, std::string_view prefix) {
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

void bind_all(Statement& stmt, const std::vector<std::string>& params, int first) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    stmt.bind_text(first + static_cast<int>(i), params[i], false);
  }
}

int bind_value(sqlite3_stmt* stmt, int i, const Value& value, char* iso) {
  switch (value.type()) {
    case DataType::null:
      return sqlite3_bind_null(stmt, i);
    case DataType::boolean:
      return sqlite3_bind_int(stmt, i, value.as_bool() ? 1 : 0);
    case DataType::int64:
      return sqlite3_bind_int64(stmt, i, value.as_int());
    case DataType::float64:
      return sqlite3_bind_double(stmt, i, value.as_double());
    case DataType::string: {
      const std::string& text = value.as_string();
      return sqlite3_bind_text(stmt, i, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
    }
    case DataType::date:
    case DataType::timestamp: {
      const char* end =
          value.type() == DataType::date
              ? detail::put_date(iso, value.as_date().time_since_epoch().count())
              : detail::put_timestamp(iso, value.as_timestamp().time_since_epoch().count());
      return sqlite3_bind_text(stmt, i, iso, static_cast<int>(end - iso), SQLITE_STATIC);
    }
  }
  return SQLITE_MISUSE;
}

Value read_stored(sqlite3_stmt* stmt, int c) {
  switch (sqlite3_column_type(stmt, c)) {
    case SQLITE_INTEGER:
      return Value(static_cast<long long>(sqlite3_column_int64(stmt, c)));
    case SQLITE_FLOAT:
      return Value(sqlite3_column_double(stmt, c));
    case SQLITE_NULL:
      return Value();
    default:
      return Value(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)),
                               static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
  }
}

}  // namespace detail::sqlite_store

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

namespace {

// The type a column declared `declared` by someone else is read back as, by SQLite's own
// affinity rules with names for the types SQLite has no affinity for. A column declared without
// a type takes the type of the first values written into it.
DataType adopted_type(std::string declared) {
  for (char& c : declared) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto has = [&declared](const char* part) { return declared.find(part) != std::string::npos; };
  if (declared.empty() || has("BLOB")) return DataType::null;
  if (has("BOOL")) return DataType::boolean;
  if (has("INT")) return DataType::int64;
  if (has("CHAR") || has("CLOB") || has("TEXT")) return DataType::string;
  if (has("TIMESTAMP") || has("DATETIME")) return DataType::timestamp;
  if (has("DATE")) return DataType::date;
  if (has("REAL") || has("FLOA") || has("DOUB") || has("NUMERIC") || has("DECIMAL")) {
    return DataType::float64;
  }
  return DataType::string;
}

}  // namespace

void SqliteDestination::State::refuse_foreign(const DatasetRef& dataset, const std::string& table) {
  if (dataset.adopt || !foreign(table)) return;
  throw DestinationError(fmt::format(
      "sqlite '{}': table '{}' exists but was not created by interloper; it is left as it is. "
      "Rename it, or let asset '{}' take it over (adopt: true)",
      path, table, dataset.asset));
}

void SqliteDestination::State::adopt_foreign(const DatasetRef& dataset, const std::string& table) {
  refuse_foreign(dataset, table);
  if (!foreign(table)) return;
  std::vector<Field> fields;
  Statement info(db, "SELECT name, type FROM pragma_table_info(?) ORDER BY cid");
  info.bind_text(1, table, false);
  while (info.step()) fields.push_back({info.column_text(0), adopted_type(info.column_text(1))});
  auto record = db.cached(
      "INSERT INTO _interloper_columns (dataset, \"column\", type, position) VALUES (?, ?, ?, ?)");
  for (std::size_t i = 0; i < fields.size(); ++i) {
    record->reset();
    record->bind_text(1, table, false);
    record->bind_text(2, fields[i].name, false);
    record->bind_text(3, type_name(fields[i].type), false);
    record->bind_int(4, static_cast<std::int64_t>(i));
    record->step();
  }
  known_schemas[table] = Schema(std::move(fields));
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

std::vector<std::string> SqliteDestination::retired_columns(const DatasetRef& dataset) {
  const std::string name = table_name(dataset);
  std::lock_guard lock(state_->mutex);
  return state_->retired(name);
}

void SqliteDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  const std::string name = table_name(dataset);
  std::lock_guard lock(state_->mutex);
  try {
    sqlite::Transaction transaction(state_->db);
    auto unregister = state_->db.cached("DELETE FROM _interloper_partitions WHERE dataset = ?");
    if (window == nullptr || dataset.partitioning == nullptr) {
      state_->drop_table(name);
      unregister->bind_text(1, name, false);
      unregister->step();
    } else {
      const Schema schema = state_->columns(name);
      if (!schema.empty()) {
        state_->clear(name, schema, window, dataset.partitioning->column(),
                      window->as_time_window().has_value());
      }
      auto forget =
          state_->db.cached("DELETE FROM _interloper_partitions WHERE dataset = ? AND key = ?");
      for (const std::string& key : window->keys()) {
        forget->reset();
        forget->bind_text(1, name, false);
        forget->bind_text(2, key, false);
        forget->step();
      }
    }
    transaction.commit();
  } catch (...) {
    state_->forget();  // the rollback undid what this connection remembered
    throw;
  }
}

QueryableDestination::Relation SqliteDestination::relation_of(const DatasetRef& dataset,
                                                              const PartitionWindow* window,
                                                              std::string_view prefix) const {
  Relation relation{"SELECT * FROM " + quote(table_name(dataset)), {}};
  if (window == nullptr || dataset.partitioning == nullptr) return relation;
  Where where =
      where_of(window->filter(dataset.partitioning->column()), Filter::Placeholder::named, prefix);
  relation.sql += " WHERE " + where.sql;
  for (std::size_t i = 0; i < where.params.size(); ++i) {
    relation.params.emplace_back(":" + std::string(prefix) + std::to_string(i + 1),
                                 Value(std::move(where.params[i])));
  }
  return relation;
}

Table SqliteDestination::query(std::string_view sql, const Params& params) {
  return query(sql, params, QueryScope{.asset = "", .datasets = {}, .any_dataset = true});
}

namespace {

// Binds each named parameter (":name", "@name", "$name", or a bare name taken as ":name").
// `iso` holds the text of date and timestamp values until the statement has run.
void bind_params(Statement& stmt, const QueryableDestination::Params& params,
                 std::vector<std::array<char, detail::kMaxIsoChars>>& iso, const std::string& path,
                 std::string_view sql) {
  iso.resize(params.size());
  std::size_t n = 0;
  for (const auto& [name, value] : params) {
    const bool prefixed = !name.empty() && (name[0] == ':' || name[0] == '@' || name[0] == '$');
    const std::string key = prefixed ? name : ":" + name;
    const int i = sqlite3_bind_parameter_index(stmt.get(), key.c_str());
    if (i == 0) {
      throw DestinationError(
          fmt::format("sqlite '{}': query has no parameter '{}': {}", path, key, sql));
    }
    if (bind_value(stmt.get(), i, value, iso[n++].data()) != SQLITE_OK) {
      throw DestinationError(fmt::format("sqlite '{}': cannot bind parameter '{}'", path, key));
    }
  }
}

}  // namespace

std::vector<std::optional<DataType>> SqliteDestination::State::declared_types(Statement& stmt) {
  const int n = sqlite3_column_count(stmt.get());
  std::vector<std::optional<DataType>> declared(static_cast<std::size_t>(n));
  std::unordered_map<std::string, Schema> schemas;
  for (int c = 0; c < n; ++c) {
    const char* table = sqlite3_column_table_name(stmt.get(), c);
    const char* origin = sqlite3_column_origin_name(stmt.get(), c);
    if (table == nullptr || origin == nullptr) continue;
    auto it = schemas.find(table);
    if (it == schemas.end()) it = schemas.emplace(table, columns(table)).first;
    if (auto f = it->second.find(origin)) {
      declared[static_cast<std::size_t>(c)] = it->second.field(*f).type;
    }
  }
  return declared;
}

Table SqliteDestination::query(std::string_view sql, const Params& params,
                               const QueryScope& scope) {
  std::optional<std::unordered_set<std::string>> readable;
  if (!scope.any_dataset) {
    readable.emplace();
    for (const DatasetRef& dataset : scope.datasets) readable->insert(table_name(dataset));
  }
  std::lock_guard lock(state_->mutex);
  std::unique_ptr<Statement> prepared =
      state_->guard().prepare(sql, std::move(readable), scope.asset);
  Statement& stmt = *prepared;
  std::vector<std::array<char, detail::kMaxIsoChars>> iso;
  bind_params(stmt, params, iso, state_->path, sql);
  const std::vector<std::optional<DataType>> declared = state_->declared_types(stmt);
  std::vector<Field> fields;
  for (std::size_t c = 0; c < declared.size(); ++c) {
    fields.push_back({sqlite3_column_name(stmt.get(), static_cast<int>(c)),
                      declared[c].value_or(DataType::null)});
  }
  auto failed = [&](const DataError& e) {
    return DestinationError(fmt::format("sqlite '{}': query result: {}", state_->path, e.what()));
  };
  Table out;
  try {
    out = Table(Schema(fields));
  } catch (const DataError& e) {
    throw failed(e);
  }
  while (stmt.step()) {
    std::vector<Value> row;
    row.reserve(fields.size());
    for (std::size_t c = 0; c < fields.size(); ++c) {
      const int i = static_cast<int>(c);
      row.push_back(declared[c]
                        ? state_->read_cell(stmt.get(), i, *declared[c], "query", fields[c].name)
                        : read_stored(stmt.get(), i));
    }
    try {
      out.append_row(std::move(row));
    } catch (const DataError& e) {
      throw failed(e);
    }
  }
  return out;
}

}  // namespace interloper
