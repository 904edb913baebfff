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
void record_truncated_tables(postgres::Connection& conn, const std::string& schema) {
  conn.exec(fmt::format(
      "INSERT INTO {0}._interloper_tables (dataset, \"table\") SELECT d, d::name::text FROM "
      "(SELECT dataset FROM {0}._interloper_columns UNION SELECT dataset FROM "
      "{0}._interloper_partitions) AS u(d) WHERE octet_length(d) > {1} ORDER BY 1 "
      "ON CONFLICT DO NOTHING",
      quote(schema), kMaxName));
}

}  // namespace

std::string table_of(postgres::Connection& conn, const std::string& schema,
                     const std::string& dataset) {
  if (dataset.size() <= kMaxName) return dataset;
  postgres::Params params;
  params.text(dataset);
  postgres::Result found = conn.exec(
      "SELECT \"table\" FROM " + qualified(schema, "_interloper_tables") + " WHERE dataset = $1",
      params);
  return found.rows() > 0 ? std::string(found.value(0, 0)) : short_name(dataset);
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

void forget_table(postgres::Connection& conn, const std::string& schema,
                  const std::string& dataset) {
  postgres::Params params;
  params.text(dataset);
  conn.exec("DELETE FROM " + qualified(schema, "_interloper_tables") + " WHERE dataset = $1",
            params);
}

void ensure_catalog(postgres::Connection& conn, const std::string& schema) {
  postgres::Transaction tx(conn);
  // CREATE ... IF NOT EXISTS races with itself across sessions; one lock per schema settles it.
  postgres::Params lock;
  lock.text("interloper catalog " + schema);
  conn.exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
  const bool tables_recorded = table_exists(conn, schema, "_interloper_tables");
  conn.exec(
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
  if (!tables_recorded) record_truncated_tables(conn, schema);
  tx.commit();
}

std::vector<std::string> retired_columns(postgres::Connection& conn, const std::string& schema,
                                         const std::string& table) {
  postgres::Params params;
  params.text(table);
  postgres::Result rows = conn.exec(
      "SELECT r.\"column\" FROM " + qualified(schema, "_interloper_retired") + " r JOIN " +
          qualified(schema, "_interloper_columns") +
          " c ON c.dataset = r.dataset AND c.\"column\" = r.\"column\" WHERE r.dataset = $1 "
          "ORDER BY c.position",
      params);
  std::vector<std::string> out;
  for (int r = 0; r < rows.rows(); ++r) out.emplace_back(rows.value(r, 0));
  return out;
}

void record_retired(postgres::Connection& conn, const std::string& schema, const std::string& table,
                    const std::vector<std::string>& columns) {
  postgres::Params params;
  params.text(table);
  conn.exec("DELETE FROM " + qualified(schema, "_interloper_retired") + " WHERE dataset = $1",
            params);
  if (columns.empty()) return;
  params.text(text_array(columns));
  conn.exec("INSERT INTO " + qualified(schema, "_interloper_retired") +
                " (dataset, \"column\") SELECT $1, c FROM unnest($2::text[]) AS u(c)",
            params);
}

Schema stored_schema(postgres::Connection& conn, const std::string& schema,
                     const std::string& dataset, std::vector<std::string>* stored_as) {
  postgres::Params params;
  params.text(dataset);
  postgres::Result rows = conn.exec(
      "SELECT \"column\", type, coalesce(stored_as, \"column\") FROM " +
          qualified(schema, "_interloper_columns") + " WHERE dataset = $1 ORDER BY position",
      params);
  std::vector<Field> fields;
  if (stored_as) stored_as->clear();
  for (int r = 0; r < rows.rows(); ++r) {
    fields.push_back(field_of_type(std::string(rows.value(r, 0)), rows.value(r, 1)));
    if (stored_as) stored_as->emplace_back(rows.value(r, 2));
  }
  return Schema(std::move(fields));
}

bool table_exists(postgres::Connection& conn, const std::string& schema, const std::string& table) {
  postgres::Params params;
  params.text(qualified(schema, table));
  postgres::Result exists = conn.exec("SELECT to_regclass($1::text) IS NOT NULL", params);
  return exists.rows() > 0 && std::string_view(exists.value(0, 0)) == "t";
}

void lock_table_changes(postgres::Connection& conn, const std::string& schema,
                        const std::string& table) {
  postgres::Params lock;
  lock.text("interloper ddl " + schema + "." + table);
  conn.exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
}

std::optional<Schema> foreign_schema(postgres::Connection& conn, const std::string& schema,
                                     const std::string& table) {
  if (!table_exists(conn, schema, table)) return std::nullopt;
  postgres::Params params;
  params.text(qualified(schema, table));
  postgres::Result rows = conn.exec(
      "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
      "WHERE attrelid = to_regclass($1::text) AND attnum > 0 AND NOT attisdropped "
      "ORDER BY attnum",
      params);
  static constexpr DataType kWritten[] = {DataType::boolean, DataType::int64,     DataType::float64,
                                          DataType::date,    DataType::timestamp, DataType::string,
                                          DataType::decimal, DataType::json};
  std::vector<Field> fields;
  for (int r = 0; r < rows.rows(); ++r) {
    const std::string name(rows.value(r, 0));
    const std::string type(rows.value(r, 1));
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

namespace {

// SQLite-style ISO text for a bound compared with text columns: a midnight as the bare date.
std::string bound_text(TimePoint t) {
  char buffer[kMaxIsoChars];
  char* end = t.is_midnight() ? put_date(buffer, floor_div(t.epoch_seconds(), kSecondsPerDay))
                              : put_timestamp(buffer, t.epoch_seconds());
  return std::string(buffer, end);
}

std::string timestamp_text(TimePoint t) {
  char buffer[kMaxIsoChars];
  return std::string(buffer, put_timestamp(buffer, t.epoch_seconds()));
}

}  // namespace

Where where_of(const Filter& filter, DataType type, const std::string& stored_as) {
  Where where;
  const std::string column = quote(stored_as.empty() ? filter.column() : stored_as);
  if (filter.kind() == Filter::Kind::range) {
    where.sql = column + " >= $1 AND " + column + " < $2";
    if (type == DataType::string) {
      where.params.text(bound_text(filter.start()), postgres::oid::text);
      where.params.text(bound_text(filter.end()), postgres::oid::text);
    } else {
      where.params.text(timestamp_text(filter.start()), postgres::oid::timestamp);
      where.params.text(timestamp_text(filter.end()), postgres::oid::timestamp);
    }
    return where;
  }
  if (filter.values().empty()) {
    where.sql = "false";
    return where;
  }
  where.sql = (type == DataType::string ? column : column + "::text") + " = ANY ($1::text[])";
  where.params.text(text_array(filter.values()));
  return where;
}

}  // namespace interloper::detail::pg
