#include "interloper/sqlsession/session.hpp"

#include "interloper/sql/identifier.hpp"

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

Table SqlSession::query(std::string_view sql, std::span<const Value> params,
                        const Schema& columns) {
  Table out;
  query(
      sql, params, columns, [&](Table&& t) { out = std::move(t); }, 0);
  return out;
}

}  // namespace interloper::sql
