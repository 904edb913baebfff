// PostgresDestination as a queryable destination: named parameters made numbered, and the query
// of a `sql:` asset run with the rights of a role that reads its dependencies and nothing else.
//
// Each dependency table has a reader role, kept from one query to the next, that may use the
// schema and SELECT that table (granting on the table at every query would make concurrent
// queries of one table take turns on its catalog row). A query then runs in a transaction that
// is never committed: it creates a role for itself (named after the server process, so
// concurrent queries never share one), makes it a member of its dependencies' readers only,
// defines the query as a SECURITY DEFINER function owned by that role, and reads the function's
// rows. Inside a security-definer function PostgreSQL refuses SET ROLE and SET SESSION
// AUTHORIZATION (set_config included), so the query cannot take back the connecting user's
// rights; the rollback removes the role, its grants and the function.
#include <chrono>
#include <optional>

#include "interloper/asset.hpp"
#include "interloper/destination/postgres_state.hpp"

namespace interloper {

namespace {

constexpr auto quote = sql::quote_identifier;
// Rows fetched from a cursor at a time: memory per round trip, not per read.
constexpr int kFetchRows = 20000;

// A query's time limit, kept by PostgreSQL: each statement of the query runs under a
// statement_timeout of what is left of it (the cursor's rows come in several FETCHes).
class QueryDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  explicit QueryDeadline(double seconds) : seconds_(seconds) {
    if (seconds > 0) {
      end_ = Clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    }
  }
  // Sets the limit of the transaction's next statements; throws when nothing is left.
  void limit(postgres::Connection& conn) const {
    if (!end_) return;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*end_ - Clock::now()).count();
    if (left <= 0) throw timed_out(conn);
    conn.exec(fmt::format("SET LOCAL statement_timeout = {}", left));
  }
  // Whether `conn`'s last failure was this limit running out.
  bool ended(const postgres::Connection& conn) const {
    return end_ && conn.last_sqlstate() == "57014";  // query_canceled
  }
  DestinationError timed_out(const postgres::Connection& conn) const {
    return DestinationError(
        fmt::format("postgresql '{}': the query timed out after {}s", conn.display(), seconds_));
  }

 private:
  double seconds_;
  std::optional<Clock::time_point> end_;
};

// The rows of the open cursor il_query, typed by the result's column types.
Table fetch_query(postgres::Connection& conn, const QueryDeadline& deadline) {
  const std::string fetch_sql =
      fmt::format("FETCH FORWARD {} FROM il_query", kFetchRows);
  Table out;
  std::vector<Oid> types;
  for (bool first = true;; first = false) {
    if (!first) deadline.limit(conn);
    postgres::Result chunk = conn.exec(fetch_sql);
    try {
      if (first) {
        std::vector<Field> fields;
        for (int c = 0; c < chunk.columns(); ++c) {
          types.push_back(PQftype(chunk.get(), c));
          fields.push_back({PQfname(chunk.get(), c), detail::pg::result_type(types.back())});
        }
        out = Table(Schema(std::move(fields)));
      }
      for (int r = 0; r < chunk.rows(); ++r) {
        std::vector<Value> row;
        row.reserve(types.size());
        for (int c = 0; c < static_cast<int>(types.size()); ++c) {
          row.push_back(
              chunk.is_null(r, c)
                  ? Value()
                  : detail::pg::text_value(chunk.value(r, c), types[static_cast<std::size_t>(c)]));
        }
        out.append_row(std::move(row));
      }
    } catch (const DataError& e) {
      conn.fail(fmt::format("query result: {}", e.what()));
    }
    if (chunk.rows() < kFetchRows) break;
  }
  return out;
}

// A query with its ":name" parameters numbered and bound.
struct BoundQuery {
  std::string sql;
  postgres::Params params;
};

BoundQuery bind_named(std::string_view sql, const QueryableDestination::Params& params,
                      const std::string& url) {
  detail::pg::NumberedQuery numbered = detail::pg::number_parameters(sql);
  BoundQuery out{std::move(numbered.sql), {}};
  for (const std::string& name : numbered.names) {
    auto given = std::find_if(params.begin(), params.end(), [&](const auto& p) {
      return p.first == name || p.first == ":" + name;
    });
    if (given == params.end()) {
      out.params.null();  // as SQLite leaves an unbound parameter null
    } else {
      detail::pg::bind_value(out.params, given->second);
    }
  }
  for (const auto& [name, value] : params) {
    std::string bare = !name.empty() && name[0] == ':' ? name.substr(1) : name;
    if (std::find(numbered.names.begin(), numbered.names.end(), bare) == numbered.names.end()) {
      throw DestinationError(
          fmt::format("postgresql '{}': query has no parameter ':{}': {}", url, bare, sql));
    }
  }
  return out;
}

// The role that may read `table` of `schema` in the connection's database (roles belong to the
// whole server, so the name holds all three).
std::string reader_role(const postgres::Connection& conn, const std::string& schema,
                        const std::string& table) {
  return "il_read_" + fingerprint(std::string(PQdb(conn.get())) + '\n' + schema + '\n' + table);
}

// Gives each existing table of `tables` its reader role (created when missing, granted what it
// lacks, in a transaction of its own under the catalog lock and the tables' change locks) and
// returns the roles of the tables that exist.
std::vector<std::string> ensure_readers(sql::PostgresSession& s, const std::string& schema,
                                        const std::vector<std::string>& tables) {
  postgres::Connection& conn = s.connection();
  std::vector<std::string> roles, names;
  for (const std::string& table : tables) {
    roles.push_back(reader_role(conn, schema, table));
    names.push_back(detail::pg::qualified(schema, table));
  }
  postgres::Params params;
  params.text(detail::pg::text_array(names));
  params.text(detail::pg::text_array(roles));
  params.text(schema);
  postgres::Result found = conn.exec(
      "SELECT u.role, u.i, CASE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = u.role) "
      "THEN false ELSE has_table_privilege(u.role, to_regclass(u.name)::oid, 'SELECT') AND "
      "has_schema_privilege(u.role, $3, 'USAGE') END FROM unnest($1::text[], $2::text[]) "
      "WITH ORDINALITY AS u(name, role, i) WHERE to_regclass(u.name) IS NOT NULL ORDER BY u.i",
      params);
  std::vector<std::string> existing;
  std::vector<std::size_t> lacking;
  for (int r = 0; r < found.rows(); ++r) {
    existing.emplace_back(found.value(r, 0));
    if (found.value(r, 2) != "t")
      lacking.push_back(static_cast<std::size_t>(found.int_value(r, 1) - 1));
  }
  if (lacking.empty()) return existing;
  postgres::Transaction tx(conn);
  postgres::Params lock;
  lock.text("interloper catalog " +
            schema);  // as ensure_catalog: one grant on the schema at a time
  conn.exec("SELECT pg_advisory_xact_lock(hashtext($1))", lock);
  for (std::size_t i : lacking) {
    detail::pg::lock_table_changes(s, schema, tables[i]);
    postgres::Params role;
    role.text(roles[i]);
    if (conn.exec("SELECT 1 FROM pg_roles WHERE rolname = $1", role).rows() == 0) {
      conn.exec("CREATE ROLE " + quote(roles[i]) + " NOLOGIN");
    }
    conn.exec(fmt::format("GRANT USAGE ON SCHEMA {0} TO {1}; GRANT SELECT ON {2} TO {1}",
                          quote(schema), quote(roles[i]), names[i]));
  }
  tx.commit();
  return existing;
}

// The connecting user must be able to create roles; says how to allow it otherwise.
void check_can_create_roles(postgres::Connection& conn, std::string_view asset) {
  postgres::Result me = conn.exec(
      "SELECT current_user, rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user");
  if (me.rows() == 1 && me.value(0, 1) == "t") return;
  const std::string user(me.rows() == 1 ? me.value(0, 0) : "?");
  throw DestinationError(fmt::format(
      "postgresql '{}': asset '{}': a sql: query runs with a role made to read only its "
      "dependencies, and user '{}' may not create roles; allow it with ALTER ROLE {} CREATEROLE",
      conn.display(), asset, user, quote(user)));
}

// Defines `query` (described by `shape`) as pg_temp.il_query_body, a SECURITY DEFINER function
// of the current role, and returns the SELECT of its rows under the query's own column names.
std::string define_body(postgres::Connection& conn, const BoundQuery& query,
                        const postgres::Result& shape) {
  const int columns = PQnfields(shape.get());
  const int parameters = PQnparams(shape.get());
  if (columns == 0) conn.fail("a sql: query must return columns");
  std::vector<std::string> oids, mods;
  for (int p = 0; p < parameters; ++p) {
    oids.push_back(std::to_string(PQparamtype(shape.get(), p)));
    mods.emplace_back("-1");
  }
  for (int c = 0; c < columns; ++c) {
    oids.push_back(std::to_string(PQftype(shape.get(), c)));
    mods.push_back(std::to_string(PQfmod(shape.get(), c)));
  }
  postgres::Params types;
  types.text(detail::pg::text_array(oids));
  types.text(detail::pg::text_array(mods));
  postgres::Result names = conn.exec(
      "SELECT format_type(o, m) FROM unnest($1::oid[], $2::integer[]) WITH ORDINALITY AS u(o, m, "
      "i) "
      "ORDER BY i",
      types);
  std::string arguments, returned, select = "SELECT ", call;
  for (int p = 0; p < parameters; ++p) {
    arguments += fmt::format("{}{}", p ? ", " : "", names.value(p, 0));
    call += fmt::format("{}${}", p ? ", " : "", p + 1);
  }
  for (int c = 0; c < columns; ++c) {
    returned += fmt::format("{}il_c{} {}", c ? ", " : "", c, names.value(parameters + c, 0));
    select += fmt::format("{}il_c{} AS {}", c ? ", " : "", c, quote(PQfname(shape.get(), c)));
  }
  std::string tag = "$il_body$";
  for (int n = 1; query.sql.find(tag) != std::string::npos; ++n)
    tag = fmt::format("$il_body{}$", n);
  conn.exec(
      fmt::format("CREATE FUNCTION pg_temp.il_query_body({}) RETURNS TABLE ({}) LANGUAGE sql "
                  "STABLE SECURITY DEFINER AS {}\n{}\n{}",
                  arguments, returned, tag, query.sql, tag));
  return select + " FROM pg_temp.il_query_body(" + call + ")";
}

// `e` about one of our statements around the query (DECLARE, FETCH) in the server's own words:
// the statement sent is not the one its author wrote (the pipeline shows that one), so neither
// it nor the server's quote of it is kept.
DestinationError about_query(const DestinationError& e, const postgres::Connection& conn) {
  if (conn.last_error().empty()) return e;
  return DestinationError(
      fmt::format("postgresql '{}': ERROR: {}", conn.display(), conn.last_error()));
}

// Runs `query` as described in the file comment. `readers` are the dependencies' reader roles.
Table run_confined(postgres::Connection& conn, const std::string& schema, const BoundQuery& query,
                   const std::vector<std::string>& readers, const QueryDeadline& deadline) {
  postgres::Transaction tx(conn);  // never committed: what it creates goes with its rollback
  const std::string role =
      quote(fmt::format("il_query_{}", conn.exec("SELECT pg_backend_pid()").int_value(0, 0)));
  std::string setup = "CREATE ROLE " + role + " NOLOGIN; ";
  for (const std::string& reader : readers)
    setup += "GRANT " + quote(reader) + " TO " + role + "; ";
  setup += "GRANT " + role + " TO CURRENT_USER; SET LOCAL search_path TO " + quote(schema) +
           ", public; SET LOCAL ROLE " + role;
  conn.exec(setup);
  try {
    const std::string select = define_body(conn, query, conn.describe(query.sql, query.params));
    conn.exec("SET TRANSACTION READ ONLY");
    deadline.limit(conn);
    conn.exec("DECLARE il_query NO SCROLL CURSOR FOR " + select, query.params);
    return fetch_query(conn, deadline);
  } catch (const DestinationError& e) {
    if (deadline.ended(conn)) throw deadline.timed_out(conn);
    throw about_query(e, conn);
  }
}

// Runs `sql` read-only in the destination's schema with the connecting user's rights, within
// `timeout` seconds when positive.
Table unconfined_query(detail::PostgresState& state, std::string_view sql,
                       const QueryableDestination::Params& params, double timeout) {
  BoundQuery bound = bind_named(sql, params, state.url.redacted);
  auto conn = state.pool.acquire();
  const QueryDeadline deadline(timeout);
  try {
    postgres::Transaction tx(*conn, "READ ONLY");
    conn->exec("SET LOCAL search_path TO " + quote(state.schema) + ", public");
    deadline.limit(*conn);
    conn->exec("DECLARE il_query NO SCROLL CURSOR FOR " + bound.sql, bound.params);
    Table out = fetch_query(*conn, deadline);
    tx.commit();
    return out;
  } catch (const DestinationError&) {
    if (deadline.ended(*conn)) throw deadline.timed_out(*conn);
    throw;
  }
}

}  // namespace

Table PostgresDestination::query(std::string_view sql, const Params& params,
                                 const QueryScope& scope) {
  if (scope.any_dataset) return unconfined_query(*state_, sql, params, scope.timeout_seconds);
  try {
    BoundQuery bound = bind_named(sql, params, url());
    std::vector<std::string> tables;
    for (const DatasetRef& dataset : scope.datasets) tables.push_back(table_name_of(dataset));
    sql::PostgresSession s(state_->pool.acquire());
    check_can_create_roles(s.connection(), scope.asset);
    const std::vector<std::string> readers = ensure_readers(s, state_->schema, tables);
    return run_confined(s.connection(), state_->schema, bound, readers,
                        QueryDeadline(scope.timeout_seconds));
  } catch (const DestinationError& e) {
    if (scope.asset.empty()) throw;
    const std::string_view what = e.what();
    if (what.find("asset '" + scope.asset + "'") != std::string_view::npos) throw;
    std::string hint;
    if (what.find("permission denied") != std::string_view::npos) {
      hint = "; a sql: query may read the tables of its declared dependencies and nothing else";
    }
    throw DestinationError(fmt::format("asset '{}': {}{}", scope.asset, what, hint));
  }
}

std::string PostgresDestination::table_name_of(const DatasetRef& dataset) const {
  const std::string name = State::record_name(dataset);
  if (name.size() <= detail::pg::kMaxName) return name;
  sql::PostgresSession s(state_->pool.acquire());
  return detail::pg::table_of(s, state_->schema, name);
}

QueryableDestination::Relation PostgresDestination::relation_of(const DatasetRef& dataset,
                                                                const PartitionWindow* window,
                                                                std::string_view prefix) const {
  Relation relation = QueryableDestination::relation_of(dataset, window, prefix);
  std::vector<std::string> stored_as;
  Schema schema;
  state_->engine.with_session([&](sql::SqlSession& s) {
    schema = state_->engine.recorded(s, State::record_name(dataset), &stored_as);
  });
  bool renamed = false;
  std::string columns;
  for (std::size_t i = 0; i < schema.size(); ++i) {
    renamed = renamed || stored_as[i] != schema.field(i).name;
    columns += (i ? ", " : "") + quote(stored_as[i]) + " AS " + quote(schema.field(i).name);
  }
  if (!renamed) return relation;
  // Columns stored under a short name are read under their own: the table, renamed, in place.
  const std::string table = quote(table_name_of(dataset));
  const std::string whole = "SELECT * FROM " + table;
  relation.sql = "SELECT * FROM (SELECT " + columns + " FROM " + table + ") AS " + table +
                 relation.sql.substr(whole.size());
  return relation;
}

Table PostgresDestination::query(std::string_view sql, const Params& params) {
  return unconfined_query(*state_, sql, params, 0);
}

}  // namespace interloper
