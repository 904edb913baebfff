#include "interloper/destination/postgres_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>

#include "interloper/asset.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/time/civil.hpp"

namespace interloper::detail::pg {

constexpr auto quote = sql::quote_identifier;

std::string qualified(const std::string& schema, const std::string& name) {
  return quote(schema) + "." + quote(name);
}

std::string short_name(std::string_view name) {
  return sql::short_identifier(name, [](std::string_view whole) { return fingerprint(whole); });
}

namespace {

// Tables of long dataset names, recorded once _interloper_tables exists: the tables PostgreSQL
// truncated for datasets already on record keep the name they have (the first dataset in name
// order keeps a table two of them shared; the other gets a table of its own).
void record_truncated_tables(sql::SqlSession& s, const std::string& schema) {
  s.execute(fmt::format(
      "INSERT INTO {0}._interloper_tables (dataset, \"table\") SELECT d, d::name::text FROM "
      "(SELECT dataset FROM {0}._interloper_columns UNION SELECT dataset FROM "
      "{0}._interloper_partitions) AS u(d) WHERE octet_length(d) > {1} ORDER BY 1 "
      "ON CONFLICT DO NOTHING",
      quote(schema), kMaxName));
}

}  // namespace

std::string table_of(sql::SqlSession& s, const std::string& schema, const std::string& dataset) {
  if (dataset.size() <= kMaxName) return dataset;
  const Value key(dataset);
  const Table found = s.query(
      "SELECT \"table\" FROM " + qualified(schema, "_interloper_tables") + " WHERE dataset = $1",
      {&key, 1}, Schema({{"table", DataType::string}}));
  return found.num_rows() > 0 ? found.column(0)[0].as_string() : short_name(dataset);
}

void record_table(postgres::Connection& conn, const std::string& schema, const std::string& dataset,
                  const std::string& table) {
  if (dataset.size() <= kMaxName) return;
  postgres::Params params;
  params.text(dataset);
  params.text(table);
  conn.exec("INSERT INTO " + qualified(schema, "_interloper_tables") +
                " (dataset, \"table\") VALUES ($1, $2) ON CONFLICT DO NOTHING",
            params);
  postgres::Params key;
  key.text(table);
  postgres::Result holder = conn.exec(
      "SELECT dataset FROM " + qualified(schema, "_interloper_tables") + " WHERE \"table\" = $1",
      key);
  if (holder.rows() > 0 && holder.value(0, 0) != dataset) {
    throw DestinationError(fmt::format("table '{}' of dataset '{}' already holds dataset '{}'",
                                       table, dataset, holder.value(0, 0)));
  }
}

void forget_table(sql::SqlSession& s, const std::string& schema, const std::string& dataset) {
  s.run("DELETE FROM " + qualified(schema, "_interloper_tables") + " WHERE dataset = $1",
        {{Value(dataset)}});
}

void ensure_catalog(sql::SqlSession& s, const std::string& schema) {
  sql::Transaction tx(s);
  // CREATE ... IF NOT EXISTS races with itself across sessions; one lock per schema settles it.
  s.run("SELECT pg_advisory_xact_lock(hashtext($1))", {{Value("interloper catalog " + schema)}});
  const bool tables_recorded = table_exists(s, schema, "_interloper_tables");
  s.execute(
      fmt::format("CREATE SCHEMA IF NOT EXISTS {0}; "
                  "CREATE TABLE IF NOT EXISTS {0}._interloper_columns (dataset text NOT NULL, "
                  "\"column\" text NOT NULL, type text NOT NULL, position integer NOT NULL, "
                  "PRIMARY KEY (dataset, \"column\")); "
                  "CREATE TABLE IF NOT EXISTS {0}._interloper_partitions (dataset text NOT NULL, "
                  "key text NOT NULL, rows bigint NOT NULL, written_at timestamp NOT NULL, "
                  "PRIMARY KEY (dataset, key)); "
                  "CREATE TABLE IF NOT EXISTS {0}._interloper_retired (dataset text NOT NULL, "
                  "\"column\" text NOT NULL, PRIMARY KEY (dataset, \"column\")); "
                  "CREATE TABLE IF NOT EXISTS {0}._interloper_tables (dataset text PRIMARY KEY, "
                  "\"table\" text NOT NULL UNIQUE); "
                  // Columns of long names are stored under short_name (NULL: the name itself).
                  "ALTER TABLE {0}._interloper_columns ADD COLUMN IF NOT EXISTS stored_as text",
                  quote(schema)));
  if (!tables_recorded) record_truncated_tables(s, schema);
  tx.commit();
}

bool table_exists(sql::SqlSession& s, const std::string& schema, const std::string& table) {
  const Value name(qualified(schema, table));
  return s.query("SELECT to_regclass($1::text) IS NOT NULL", {&name, 1},
                 Schema({{"exists", DataType::boolean}}))
      .column(0)
      .at(0)
      .as_bool();
}

void lock_table_changes(sql::SqlSession& s, const std::string& schema, const std::string& table) {
  s.run("SELECT pg_advisory_xact_lock(hashtext($1))",
        {{Value("interloper ddl " + schema + "." + table)}});
}

std::optional<Schema> foreign_schema(sql::SqlSession& s, const std::string& schema,
                                     const std::string& table) {
  if (!table_exists(s, schema, table)) return std::nullopt;
  const Value name(qualified(schema, table));
  const Table rows = s.query(
      "SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute "
      "WHERE attrelid = to_regclass($1::text) AND attnum > 0 AND NOT attisdropped "
      "ORDER BY attnum",
      {&name, 1}, Schema({{"name", DataType::string}, {"type", DataType::string}}));
  static constexpr DataType kWritten[] = {DataType::boolean, DataType::int64,     DataType::float64,
                                          DataType::date,    DataType::timestamp, DataType::string,
                                          DataType::decimal, DataType::json};
  std::vector<Field> fields;
  for (std::size_t r = 0; r < rows.num_rows(); ++r) {
    const std::string& name = rows.column(0)[r].as_string();
    const std::string& type = rows.column(1)[r].as_string();
    auto written = std::find_if(std::begin(kWritten), std::end(kWritten),
                                [&type](DataType t) { return type == sql_type(t); });
    if (written == std::end(kWritten)) {
      throw DestinationError(fmt::format(
          "column '{}' is {}; a table taken over must hold only the types interloper writes "
          "(boolean, bigint, double precision, date, timestamp, text, numeric, jsonb)",
          name, type));
    }
    fields.push_back({name, *written});
  }
  return Schema(std::move(fields));
}

namespace {

// ALTER COLUMN ... TYPE for a widening Schema::unify allows (int -> double, date -> timestamp,
// null -> anything); `column` is the table's name of `field`.
std::string retype(const std::string& table, const Field& field, const std::string& column,
                   DataType from) {
  std::string using_clause =
      from == DataType::null ? fmt::format(" USING NULL::{}", sql_type(field.type)) : "";
  return fmt::format("ALTER TABLE {} ALTER COLUMN {} TYPE {}{}", table, quote(column),
                     sql_type(field.type), using_clause);
}

// Records the columns of `merged` (stored under `stored_as`) for `dataset`.
void record_columns(postgres::Connection& conn, const std::string& schema,
                    const std::string& dataset, const Schema& merged,
                    const std::vector<std::string>& stored_as) {
  postgres::Params params;
  std::vector<std::string> names, types, positions, stored;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    names.push_back(merged.field(i).name);
    types.emplace_back(type_text(merged.field(i)));
    positions.push_back(std::to_string(i));
    stored.push_back(stored_as[i]);
  }
  params.text(dataset);
  params.text(text_array(names));
  params.text(text_array(types));
  params.text(text_array(positions));
  params.text(text_array(stored));
  conn.exec("INSERT INTO " + qualified(schema, "_interloper_columns") +
                " (dataset, \"column\", type, position, stored_as) "
                "SELECT $1, c, t, p::integer, nullif(s, c) FROM unnest($2::text[], $3::text[], "
                "$4::text[], $5::text[]) AS u(c, t, p, s) ON CONFLICT (dataset, \"column\") DO "
                "UPDATE SET type = excluded.type, position = excluded.position, "
                "stored_as = excluded.stored_as",
            params);
}

// Whether `column` of `table`, recorded as of no type (null), already has the SQL type of
// `type`, as a partition column created by a write without rows has: typing it is then
// a change of the record alone, and the table is not locked against the writers of its other
// partitions (an ALTER would wait for them while they wait for this change).
bool typed_as(postgres::Connection& conn, const std::string& table, const std::string& column,
              DataType type) {
  postgres::Params params;
  params.text(table);
  params.text(column);
  postgres::Result rows = conn.exec(
      "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
      "to_regclass($1::text) AND attname = $2 AND NOT attisdropped",
      params);
  return rows.rows() == 1 && rows.value(0, 0) == sql_type(type);
}

}  // namespace

void change_schema(postgres::Connection& conn, const std::string& schema,
                   const std::string& dataset, const std::string& table, const Schema& stored,
                   std::vector<std::string>& stored_as, const Schema& merged,
                   const std::string& partition_column, DataType untyped_partition) {
  const std::string name = qualified(schema, table);
  stored_as.resize(stored.size());
  for (std::size_t i = stored.size(); i < merged.size(); ++i) {
    stored_as.push_back(short_name(merged.field(i).name));
  }
  auto column_type = [&](const Field& f) {
    const bool untyped = f.type == DataType::null && f.name == partition_column;
    return sql_type(untyped ? untyped_partition : f.type);
  };
  std::string ddl;
  if (stored.empty()) {
    ddl = "CREATE TABLE IF NOT EXISTS " + name + " (";
    for (std::size_t i = 0; i < merged.size(); ++i) {
      ddl +=
          fmt::format("{}{} {}", i ? ", " : "", quote(stored_as[i]), column_type(merged.field(i)));
    }
    ddl += ")";
  } else {
    for (std::size_t i = 0; i < merged.size(); ++i) {
      const Field& f = merged.field(i);
      if (i >= stored.size()) {
        ddl += fmt::format("ALTER TABLE {} ADD COLUMN {} {}; ", name, quote(stored_as[i]),
                           column_type(f));
      } else if (stored.field(i).type != f.type && !(stored.field(i).type == DataType::null &&
                                                     typed_as(conn, name, stored_as[i], f.type))) {
        ddl += retype(name, f, stored_as[i], stored.field(i).type) + "; ";
      }
    }
  }
  if (!ddl.empty()) conn.exec(ddl);
  auto c = partition_column.empty() ? std::nullopt : merged.find(partition_column);
  if (c && !stored.find(partition_column)) {
    conn.exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} ({})",
                          quote(short_name(table + "__" + partition_column)), name,
                          quote(stored_as[*c])));
  }
  record_columns(conn, schema, dataset, merged, stored_as);
}

SqlWhere where_of(const Filter& filter, DataType type, const std::string& stored_as) {
  SqlWhere where;
  const std::string column = quote(stored_as.empty() ? filter.column() : stored_as);
  if (filter.kind() == Filter::Kind::range) {
    where.sql = column + " >= $1 AND " + column + " < $2";
    for (const TimePoint t : {filter.start(), filter.end()}) {
      // A text column compares with the text it stores; others with a timestamp.
      where.params.push_back(type == DataType::string
                                 ? Value(bound_text(t))
                                 : Value(std::chrono::sys_seconds(
                                       std::chrono::seconds(t.epoch_seconds()))));
    }
    return where;
  }
  if (filter.values().empty()) {
    where.sql = "false";
    return where;
  }
  where.sql = (type == DataType::string ? column : column + "::text") + " = ANY ($1::text[])";
  where.params.emplace_back(text_array(filter.values()));
  return where;
}

}  // namespace interloper::detail::pg
