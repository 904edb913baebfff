// What every operation of one PostgreSQL destination shares, private to the destination layer:
// the URL, the schema, the connections, and the window writer.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "interloper/destination.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/destination/postgres_rows.hpp"
#include "interloper/destination/postgres_schema.hpp"
#include "interloper/destination/postgres_sql.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/postgres/postgres.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper::detail {

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

  std::string table(const DatasetRef& dataset) const {
    return pg::qualified(schema, SqliteDestination::table_name(dataset));
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
