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
void SqliteDestination::State::register_partitions(sql::SqlSession& s, const std::string& name,
                                                   const DatasetRef& dataset,
                                                   const PartitionWindow* window,
                                                   const std::vector<std::int64_t>& rows) {
  if (window == nullptr) {
    s.run("DELETE FROM _interloper_partitions WHERE dataset = ?", {{Value(name)}});
  }
  const std::string upsert =
      "INSERT OR REPLACE INTO _interloper_partitions (dataset, key, rows, written_at) "
      "VALUES (?, ?, ?, strftime('%Y-%m-%dT%H:%M:%S', 'now'))";
  auto put = [&](const std::string& key, std::int64_t count) {
    s.run(upsert, {{Value(name), Value(key), Value(static_cast<long long>(count))}});
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
  return detail::in_window_order(state_->select(name, schema, &where), *window, column);
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
  const std::vector<Value> params(where.params.begin(), where.params.end());
  const Table n = state_->session.query(sql, params, Schema({{"n", DataType::int64}}));
  return n.at(0, "n").as_int();
}

std::vector<PartitionCount> SqliteDestination::partition_counts(const DatasetRef& dataset,
                                                                const PartitionWindow& window) {
  const std::string name = table_name(dataset);
  std::vector<std::string> keys = window.keys();
  std::vector<PartitionCount> counts(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) counts[i].key = keys[i];
  std::lock_guard lock(state_->mutex);
  {
    const Value dataset_name(name);
    const Table keys_written =
        state_->session.query("SELECT key FROM _interloper_partitions WHERE dataset = ?",
                              {&dataset_name, 1}, Schema({{"key", DataType::string}}));
    std::unordered_set<std::string> written;
    for (const Value& key : keys_written.column(0)) written.insert(key.as_string());
    for (auto& count : counts) count.written = written.count(count.key) > 0;
  }
  Schema schema = state_->columns(name);
  if (!dataset.partitioning) return counts;
  const std::string& column = dataset.partitioning->column();
  auto c = schema.find(column);
  if (!c) return counts;
  Where where = where_of(window.filter(column));
  const std::vector<Value> params(where.params.begin(), where.params.end());
  const Table cells = state_->session.query(
      "SELECT " + quote(column) + " FROM " + quote(name) + " WHERE " + where.sql, params,
      Schema({{column, schema.field(*c).type}}));
  detail::WindowIndex index(window, column);
  for (const Value& v : cells.column(0)) {
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
  const Value dataset_name(name);
  if (state_->session
          .query("SELECT 1 FROM _interloper_partitions WHERE dataset = ? LIMIT 1",
                 {&dataset_name, 1})
          .num_rows() > 0) {
    return schema;
  }
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
        state_->clear(state_->session, name, schema, window, dataset.partitioning->column(),
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

}  // namespace interloper
