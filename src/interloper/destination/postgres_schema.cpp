#include "interloper/destination/postgres_schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <string_view>

#include "interloper/sql/identifier.hpp"
#include "interloper/time/civil.hpp"

namespace interloper::detail::pg {

constexpr auto quote = sql::quote_identifier;

const char* sql_type(DataType type) {
  switch (type) {
    case DataType::boolean:
      return "boolean";
    case DataType::int64:
      return "bigint";
    case DataType::float64:
      return "double precision";
    case DataType::date:
      return "date";
    case DataType::timestamp:
      return "timestamp";
    case DataType::null:
    case DataType::string:
      break;
  }
  return "text";
}

Oid type_oid(DataType type) {
  switch (type) {
    case DataType::boolean:
      return postgres::oid::boolean;
    case DataType::int64:
      return postgres::oid::int8;
    case DataType::float64:
      return postgres::oid::float8;
    case DataType::date:
      return postgres::oid::date;
    case DataType::timestamp:
      return postgres::oid::timestamp;
    case DataType::null:
    case DataType::string:
      break;
  }
  return postgres::oid::text;
}

std::string qualified(const std::string& schema, const std::string& name) {
  return quote(schema) + "." + quote(name);
}

void ensure_catalog(postgres::Connection& conn, const std::string& schema) {
  postgres::Transaction tx(conn);
  // CREATE ... IF NOT EXISTS races with itself across sessions; one lock per schema settles it.
  postgres::Params lock;
  lock.text("interloper catalog " + schema);
  conn.exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
  conn.exec(
      fmt::format("CREATE SCHEMA IF NOT EXISTS {0}; "
                  "CREATE TABLE IF NOT EXISTS {0}._interloper_columns (dataset text NOT NULL, "
                  "\"column\" text NOT NULL, type text NOT NULL, position integer NOT NULL, "
                  "PRIMARY KEY (dataset, \"column\")); "
                  "CREATE TABLE IF NOT EXISTS {0}._interloper_partitions (dataset text NOT NULL, "
                  "key text NOT NULL, rows bigint NOT NULL, written_at timestamp NOT NULL, "
                  "PRIMARY KEY (dataset, key)); "
                  "CREATE TABLE IF NOT EXISTS {0}._interloper_retired (dataset text NOT NULL, "
                  "\"column\" text NOT NULL, PRIMARY KEY (dataset, \"column\"))",
                  quote(schema)));
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
                     const std::string& table) {
  postgres::Params params;
  params.text(table);
  postgres::Result rows =
      conn.exec("SELECT \"column\", type FROM " + qualified(schema, "_interloper_columns") +
                    " WHERE dataset = $1 ORDER BY position",
                params);
  std::vector<Field> fields;
  for (int r = 0; r < rows.rows(); ++r) {
    fields.push_back({std::string(rows.value(r, 0)), type_from_name(rows.value(r, 1))});
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
                                          DataType::date,    DataType::timestamp, DataType::string};
  std::vector<Field> fields;
  for (int r = 0; r < rows.rows(); ++r) {
    const std::string name(rows.value(r, 0));
    const std::string type(rows.value(r, 1));
    auto written = std::find_if(std::begin(kWritten), std::end(kWritten),
                                [&type](DataType t) { return type == sql_type(t); });
    if (written == std::end(kWritten)) {
      throw DestinationError(fmt::format(
          "column '{}' is {}; a table taken over must hold only the types interloper writes "
          "(boolean, bigint, double precision, date, timestamp, text)",
          name, type));
    }
    fields.push_back({name, *written});
  }
  return Schema(std::move(fields));
}

namespace {

// ALTER COLUMN ... TYPE for a widening Schema::unify allows (int -> double, date -> timestamp,
// null -> anything).
std::string retype(const std::string& table, const Field& field, DataType from) {
  std::string using_clause =
      from == DataType::null ? fmt::format(" USING NULL::{}", sql_type(field.type)) : "";
  return fmt::format("ALTER TABLE {} ALTER COLUMN {} TYPE {}{}", table, quote(field.name),
                     sql_type(field.type), using_clause);
}

}  // namespace

void change_schema(postgres::Connection& conn, const std::string& schema, const std::string& table,
                   const Schema& stored, const Schema& merged,
                   const std::string& partition_column) {
  const std::string name = qualified(schema, table);
  std::string ddl;
  if (stored.empty()) {
    ddl = "CREATE TABLE IF NOT EXISTS " + name + " (";
    for (std::size_t i = 0; i < merged.size(); ++i) {
      ddl += fmt::format("{}{} {}", i ? ", " : "", quote(merged.field(i).name),
                         sql_type(merged.field(i).type));
    }
    ddl += ")";
  } else {
    for (std::size_t i = 0; i < merged.size(); ++i) {
      const Field& f = merged.field(i);
      if (i >= stored.size()) {
        ddl +=
            fmt::format("ALTER TABLE {} ADD COLUMN {} {}; ", name, quote(f.name), sql_type(f.type));
      } else if (stored.field(i).type != f.type) {
        ddl += retype(name, f, stored.field(i).type) + "; ";
      }
    }
  }
  if (!ddl.empty()) conn.exec(ddl);
  if (!partition_column.empty() && merged.find(partition_column) &&
      !(stored.find(partition_column))) {
    conn.exec(fmt::format("CREATE INDEX IF NOT EXISTS {} ON {} ({})",
                          quote(table + "__" + partition_column), name, quote(partition_column)));
  }
  postgres::Params params;
  std::vector<std::string> names, types, positions;
  for (std::size_t i = 0; i < merged.size(); ++i) {
    names.push_back(merged.field(i).name);
    types.emplace_back(type_name(merged.field(i).type));
    positions.push_back(std::to_string(i));
  }
  params.text(table);
  params.text(text_array(names));
  params.text(text_array(types));
  params.text(text_array(positions));
  conn.exec("INSERT INTO " + qualified(schema, "_interloper_columns") +
                " (dataset, \"column\", type, position) "
                "SELECT $1, c, t, p::integer FROM unnest($2::text[], $3::text[], $4::text[]) "
                "AS u(c, t, p) ON CONFLICT (dataset, \"column\") DO UPDATE SET "
                "type = excluded.type, position = excluded.position",
            params);
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

Where where_of(const Filter& filter, DataType type) {
  Where where;
  const std::string column = quote(filter.column());
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

std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace interloper::detail::pg
