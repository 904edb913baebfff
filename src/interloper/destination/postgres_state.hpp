// What every operation of one PostgreSQL destination shares, private to the destination layer:
// the URL, the schema, the connections, and the window writer.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "interloper/destination.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/sqlsession/postgres_rows.hpp"
#include "interloper/destination/postgres_schema.hpp"
#include "interloper/sqlsession/postgres_sql.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper::detail {

namespace pg {
// Rows fetched from a cursor at a time: memory per round trip, not per read.
constexpr int kFetchRows = 20000;
}  // namespace pg

// What every operation of one destination shares: the URL, the schema and the connections.
struct PostgresState {
  explicit PostgresState(std::string_view text)
      : url(postgres::parse_url(text, {"schema"})), schema(url.get("schema", "public")), pool(url) {
    if (schema.empty()) {
      throw DestinationError(fmt::format("postgresql URL '{}': schema is empty", url.redacted));
    }
    auto conn = pool.acquire();
    detail::pg::ensure_catalog(*conn, schema);
  }

  postgres::Url url;
  std::string schema;
  postgres::Pool pool;

  // The key of `dataset`'s records: "SOURCE__ASSET" (or "ASSET"), whatever its length.
  static std::string record_name(const DatasetRef& dataset) {
    return SqliteDestination::table_name(dataset);
  }
  // The table of `dataset`, unquoted (see pg::table_of), and qualified and quoted.
  std::string table_name(postgres::Connection& conn, const DatasetRef& dataset) const {
    return pg::table_of(conn, schema, record_name(dataset));
  }
  std::string table(postgres::Connection& conn, const DatasetRef& dataset) const {
    return pg::qualified(schema, table_name(conn, dataset));
  }
  std::string catalog(const char* name) const { return pg::qualified(schema, name); }

  [[noreturn]] void fail_table(const std::string& table, const std::string& why) const {
    throw DestinationError(
        fmt::format("postgresql '{}': table '{}': {}", url.redacted, table, why));
  }
};

// A writer replacing `window` (nullptr: the whole dataset) of `dataset` (postgres_writer.cpp).
std::unique_ptr<WindowWriter> open_postgres_writer(PostgresState& state, const DatasetRef& dataset,
                                                   const PartitionWindow* window);

}  // namespace interloper::detail

namespace interloper {

struct PostgresDestination::State : detail::PostgresState {
  using PostgresState::PostgresState;
};

}  // namespace interloper
