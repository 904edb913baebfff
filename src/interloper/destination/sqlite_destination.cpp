// SqliteDestination: one table per asset, typed columns, a window write in one transaction.
//
// Dates and timestamps are stored as ISO text so that they sort and compare as text in the
// order of time; _interloper_columns remembers each column's declared type so that reads give
// back exactly the Value types that were written.
#include <fmt/format.h>

#include <algorithm>
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
  return detail::record_name(dataset);
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

void SqliteDestination::State::Engine::with_session(const std::function<void(sql::SqlSession&)>& work) {
  std::lock_guard lock(state_.mutex);
  work(state_.session);
}

Schema SqliteDestination::State::Engine::recorded(sql::SqlSession&, const std::string& record,
                              std::vector<std::string>* names) {
  Schema schema = state_.columns(record);
  if (names) {
    names->clear();
    for (const Field& f : schema.fields()) names->push_back(f.name);
  }
  return schema;
}

detail::SqlWhere SqliteDestination::State::Engine::where_of(const Filter& filter, DataType,
                                                           const std::string&) const {
  Where where = detail::sqlite_store::where_of(filter);
  return {std::move(where.sql), std::vector<Value>(where.params.begin(), where.params.end())};
}

// Counted first (on the partition column's index), so that the columns are allocated once at
// their size: growing them as rows come cost more than the read itself.
Table SqliteDestination::State::Engine::read_stored_order(sql::SqlSession& s,
                                                          const std::string& select,
                                                          std::span<const Value> params,
                                                          const Schema& columns) {
  const Table count =
      s.query("SELECT count(*) FROM (" + select + ")", params, Schema({{"n", DataType::int64}}));
  const auto rows = static_cast<std::size_t>(std::max<std::int64_t>(1, count.column(0)[0].as_int()));
  Table out;
  bool first = true;
  s.query(
      select + " ORDER BY rowid", params, columns,
      [&](Table&& t) {
        if (first) {
          out = std::move(t);
        } else {
          out.append_table(std::move(t));  // rows another process added since the count
        }
        first = false;
      },
      rows);
  return out;
}

Table SqliteDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  return state_->reads.read(dataset, window);
}

std::int64_t SqliteDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  return state_->reads.row_count(dataset, partition);
}

std::vector<PartitionCount> SqliteDestination::partition_counts(const DatasetRef& dataset,
                                                                const PartitionWindow& window) {
  return state_->reads.partition_counts(dataset, window);
}

std::optional<Schema> SqliteDestination::schema(const DatasetRef& dataset) {
  return state_->reads.schema(dataset);
}

std::vector<std::string> SqliteDestination::retired_columns(const DatasetRef& dataset) {
  return state_->reads.retired_columns(dataset);
}

void SqliteDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  state_->reads.drop(dataset, window);
}

}  // namespace interloper
