#include "interloper/sqlsession/session.hpp"

#include "interloper/sql/identifier.hpp"
#include "interloper/sqlsession/internal.hpp"

namespace interloper::sql {

std::string Dialect::quote(std::string_view name) const { return quote_identifier(name); }

std::string Dialect::upsert(std::string_view table, const std::vector<std::string>& columns,
                            std::size_t keys) const {
  std::string names, values, key_names, updates;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const std::string q = quote(columns[c]);
    names += (c ? ", " : "") + q;
    values += (c ? ", " : "") + placeholder(c + 1);
    if (c < keys) {
      key_names += (c ? ", " : "") + q;
    } else {
      updates += (c > keys ? ", " : "") + q + " = excluded." + q;
    }
  }
  std::string sql = "INSERT INTO " + std::string(table) + " (" + names + ") VALUES (" + values +
                    ") ON CONFLICT (" + key_names + ") DO ";
  return sql + (updates.empty() ? "NOTHING" : "UPDATE SET " + updates);
}

void rethrow_as_sql_error(SqlError::Kind kind) {
  try {
    throw;
  } catch (const SqlError&) {
    throw;
  } catch (const DestinationError& e) {
    throw SqlError(e.what(), kind);
  }
}

std::string append_target(const Dialect& dialect, std::string_view schema, std::string_view table,
                          const std::vector<std::string>& columns) {
  std::string sql = schema.empty() ? "" : dialect.quote(schema) + ".";
  sql += dialect.quote(table) + " (";
  for (std::size_t c = 0; c < columns.size(); ++c) {
    sql += (c ? ", " : "") + dialect.quote(columns[c]);
  }
  return sql + ")";
}

Table SqlSession::query(std::string_view sql, std::span<const Value> params,
                        const Schema& columns) {
  Table out;
  query(
      sql, params, columns, [&](Table&& t) { out = std::move(t); }, 0);
  return out;
}

}  // namespace interloper::sql
