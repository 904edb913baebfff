// What the SQL destinations do alike over any SqlSession (see sql_destination.hpp).
#include "interloper/destination/sql_destination.hpp"

#include <unordered_set>

#include "interloper/destination/window_index.hpp"
#include "interloper/time/civil.hpp"

namespace interloper::detail {

namespace {

// One value for a statement's single placeholder.
std::span<const Value> one(const Value& value) { return {&value, 1}; }

}  // namespace

std::string bound_text(TimePoint t) {
  char buffer[kMaxIsoChars];
  char* end = t.is_midnight() ? put_date(buffer, floor_div(t.epoch_seconds(), kSecondsPerDay))
                              : put_timestamp(buffer, t.epoch_seconds());
  return std::string(buffer, end);
}

std::string record_name(const DatasetRef& dataset) {
  return dataset.source.empty() ? dataset.asset : dataset.source + "__" + dataset.asset;
}

Schema SqlEngine::recorded(sql::SqlSession& s, const std::string& record,
                           std::vector<std::string>* names) {
  return read_recorded(s, *this, record, names);
}

bool SqlEngine::table_gone(sql::SqlSession&, const std::string&) { return false; }

void SqlEngine::lock_table(sql::SqlSession&, const std::string&) {}

void SqlEngine::forget_partitions(sql::SqlSession& s, const std::string& record,
                                  const std::vector<std::string>& keys) {
  const std::string sql = "DELETE FROM " + catalog("_interloper_partitions") + " WHERE dataset = " +
                          s.dialect().placeholder(1) + " AND key = " + s.dialect().placeholder(2);
  for (const std::string& key : keys) s.run(sql, {{Value(record), Value(key)}});
}

Schema read_recorded(sql::SqlSession& s, const SqlEngine& engine, const std::string& record,
                     std::vector<std::string>* names) {
  const Value key(record);
  const Table rows = s.query(
      "SELECT \"column\", type, " + std::string(engine.stored_as_column()) + " FROM " +
          engine.catalog("_interloper_columns") + " WHERE dataset = " +
          s.dialect().placeholder(1) + " ORDER BY position",
      one(key),
      Schema({{"column", DataType::string},
              {"type", DataType::string},
              {"stored_as", DataType::string}}));
  std::vector<Field> fields;
  if (names) names->clear();
  for (std::size_t r = 0; r < rows.num_rows(); ++r) {
    fields.push_back(field_of_type(rows.column(0)[r].as_string(), rows.column(1)[r].as_string()));
    if (names) names->push_back(rows.column(2)[r].as_string());
  }
  return Schema(std::move(fields));
}

std::vector<std::string> read_retired(sql::SqlSession& s, const SqlEngine& engine,
                                      const std::string& record) {
  const Value key(record);
  const Table rows = s.query(
      "SELECT r.\"column\" FROM " + engine.catalog("_interloper_retired") + " r JOIN " +
          engine.catalog("_interloper_columns") +
          " c ON c.dataset = r.dataset AND c.\"column\" = r.\"column\" WHERE r.dataset = " +
          s.dialect().placeholder(1) + " ORDER BY c.position",
      one(key), Schema({{"column", DataType::string}}));
  std::vector<std::string> out;
  for (const Value& v : rows.column(0)) out.push_back(v.as_string());
  return out;
}

void write_retired(sql::SqlSession& s, const SqlEngine& engine, const std::string& record,
                   const std::vector<std::string>& columns) {
  const Value key(record);
  const std::string table = engine.catalog("_interloper_retired");
  const std::string p1 = s.dialect().placeholder(1);
  s.run("DELETE FROM " + table + " WHERE dataset = " + p1, one(key));
  const std::string insert = "INSERT INTO " + table + " (dataset, \"column\") VALUES (" + p1 +
                             ", " + s.dialect().placeholder(2) + ")";
  for (const std::string& column : columns) s.run(insert, {{key, Value(column)}});
}

void drop_recorded_table(sql::SqlSession& s, const SqlEngine& engine, const std::string& record,
                         const std::string& table) {
  s.execute("DROP TABLE IF EXISTS " + table);
  s.run("DELETE FROM " + engine.catalog("_interloper_columns") + " WHERE dataset = " +
            s.dialect().placeholder(1),
        {{Value(record)}});
}

void delete_window(sql::SqlSession& s, const SqlEngine& engine, const StoredTable& t,
                   const PartitionWindow& window, const std::string& column, bool by_union) {
  const auto c = t.schema.find(column);
  if (!c) return;
  for (const Filter& filter : window_filters(window, column, by_union)) {
    const SqlWhere w = engine.where_of(filter, t.schema.field(*c).type, t.names[*c]);
    s.run("DELETE FROM " + t.table + " WHERE " + w.sql, w.params);
  }
}

StoredTable SqlDestination::stored(sql::SqlSession& s, const std::string& record) {
  StoredTable t;
  t.schema = engine_.recorded(s, record, &t.names);
  if (!t.schema.empty()) t.table = engine_.table_of(s, record);
  return t;
}

SqlWhere SqlDestination::where(const StoredTable& t, std::size_t column, const Filter& filter) const {
  return engine_.where_of(filter, t.schema.field(column).type, t.names[column]);
}

Table SqlDestination::read(const DatasetRef& dataset, const PartitionWindow* window) {
  Table rows;
  bool ordered = true;  // whether the rows are in window order already
  engine_.with_session([&](sql::SqlSession& s) {
    const StoredTable t = stored(s, record_name(dataset));
    if (t.schema.empty()) return;
    std::string select = "SELECT ";
    for (std::size_t i = 0; i < t.names.size(); ++i) {
      select += (i ? ", " : "") + s.dialect().quote(t.names[i]);
    }
    select += " FROM " + t.table;
    if (!window || !dataset.partitioning) {
      rows = engine_.read_stored_order(s, select, {}, t.schema);
      return;
    }
    const auto c = t.schema.find(dataset.partitioning->column());
    if (!c) {
      rows = Table(t.schema);
      return;
    }
    const SqlWhere w = where(t, *c, window->filter(dataset.partitioning->column()));
    rows = engine_.read_stored_order(s, select + " WHERE " + w.sql, w.params, t.schema);
    ordered = false;
  });
  if (ordered) return rows;
  return in_window_order(std::move(rows), *window, dataset.partitioning->column());
}

std::int64_t SqlDestination::row_count(const DatasetRef& dataset, const Partition* partition) {
  std::int64_t n = 0;
  engine_.with_session([&](sql::SqlSession& s) {
    const StoredTable t = stored(s, record_name(dataset));
    if (t.schema.empty()) return;
    std::string sql = "SELECT count(*) FROM " + t.table;
    SqlWhere w;
    if (partition && dataset.partitioning) {
      const auto c = t.schema.find(dataset.partitioning->column());
      if (!c) return;
      w = where(t, *c, partition->filter(dataset.partitioning->column()));
      sql += " WHERE " + w.sql;
    }
    n = s.query(sql, w.params, Schema({{"n", DataType::int64}})).column(0).at(0).as_int();
  });
  return n;
}

std::vector<PartitionCount> SqlDestination::partition_counts(const DatasetRef& dataset,
                                                       const PartitionWindow& window) {
  const std::string record = record_name(dataset);
  std::vector<std::string> keys = window.keys();
  std::vector<PartitionCount> counts(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) counts[i].key = std::move(keys[i]);
  engine_.with_session([&](sql::SqlSession& s) {
    const Value key(record);
    const Table on_record =
        s.query("SELECT key FROM " + engine_.catalog("_interloper_partitions") +
                    " WHERE dataset = " + s.dialect().placeholder(1),
                one(key), Schema({{"key", DataType::string}}));
    std::unordered_set<std::string> written;
    for (const Value& v : on_record.column(0)) written.insert(v.as_string());
    // Records whose table is gone hold nothing: their partitions read as never written, and
    // `status --verify` says so.
    if (!written.empty() && engine_.table_gone(s, record)) return;
    for (auto& count : counts) count.written = written.count(count.key) > 0;
    if (!dataset.partitioning) return;
    const std::string& column = dataset.partitioning->column();
    const StoredTable t = stored(s, record);
    const auto c = t.schema.find(column);
    if (!c) return;
    // One row per distinct value, placed in its partition here.
    const SqlWhere w = where(t, *c, window.filter(column));
    const Table values = s.query(
        "SELECT " + s.dialect().quote(t.names[*c]) + ", count(*) FROM " + t.table + " WHERE " +
            w.sql + " GROUP BY 1",
        w.params, Schema({{column, t.schema.field(*c).type}, {"n", DataType::int64}}));
    WindowIndex index(window, column);
    for (std::size_t r = 0; r < values.num_rows(); ++r) {
      const Value& v = values.column(0)[r];
      const std::size_t i = v.is_null() ? WindowIndex::npos : index.locate(v);
      if (i == WindowIndex::npos) continue;
      counts[i].rows += values.column(1)[r].as_int();
      counts[i].written = true;
    }
  });
  return counts;
}

std::optional<Schema> SqlDestination::schema(const DatasetRef& dataset) {
  std::optional<Schema> out;
  engine_.with_session([&](sql::SqlSession& s) {
    const std::string record = record_name(dataset);
    Schema schema = engine_.recorded(s, record, nullptr);
    const Value key(record);
    if (!schema.empty() ||
        s.query("SELECT 1 FROM " + engine_.catalog("_interloper_partitions") +
                    " WHERE dataset = " + s.dialect().placeholder(1) + " LIMIT 1",
                one(key))
                .num_rows() > 0) {
      out = std::move(schema);
    }
  });
  return out;
}

std::vector<std::string> SqlDestination::retired_columns(const DatasetRef& dataset) {
  std::vector<std::string> out;
  engine_.with_session(
      [&](sql::SqlSession& s) { out = read_retired(s, engine_, record_name(dataset)); });
  return out;
}

}  // namespace interloper::detail

namespace interloper::detail {

void SqlDestination::drop(const DatasetRef& dataset, const PartitionWindow* window) {
  const std::string record = record_name(dataset);
  engine_.with_session([&](sql::SqlSession& s) {
    try {
      sql::Transaction tx(s);
      engine_.lock_table(s, record);
      if (window == nullptr || dataset.partitioning == nullptr) {
        engine_.drop_table(s, record);
        s.run("DELETE FROM " + engine_.catalog("_interloper_partitions") +
                  " WHERE dataset = " + s.dialect().placeholder(1),
              {{Value(record)}});
      } else {
        const StoredTable t = stored(s, record);
        if (!t.schema.empty()) {
          delete_window(s, engine_, t, *window, dataset.partitioning->column(),
                        window->as_time_window().has_value());
        }
        engine_.forget_partitions(s, record, window->keys());
      }
      tx.commit();
    } catch (...) {
      engine_.rolled_back();
      throw;
    }
  });
}

}  // namespace interloper::detail
