// PostgresStore: the SQL state store in a PostgreSQL schema. What is PostgreSQL's own: the
// schema and its `interloper_` tables, opening the connection again after the server went away,
// and claims held by a session with the server (pg_stat_activity).
#include <fmt/format.h>

#include <algorithm>

#include "interloper/sqlsession/postgres_session.hpp"
#include "interloper/store/sql_store_state.hpp"

namespace interloper {

namespace detail {

namespace {

// The session that runs a claim's owner, as `backend` records it: the server process and its
// start, so that a process id the server uses again names another session.
constexpr const char* kSession =
    "(SELECT pid::text || ' ' || extract(epoch FROM backend_start)::text FROM pg_stat_activity "
    "WHERE pid = pg_backend_pid())";

class PostgresEngine final : public StoreEngine {
 public:
  explicit PostgresEngine(std::string_view text)
      : url_(postgres::parse_url(text, {"schema"})),
        schema_(url_.get("schema", "public")),
        pool_(url_) {
    if (schema_.empty()) {
      throw DestinationError(fmt::format("postgresql URL '{}': schema is empty", url_.redacted));
    }
    session_ = std::make_unique<sql::PostgresSession>(pool_.acquire());
  }

  const std::string& name() const override { return url_.redacted; }

  sql::SqlSession& session() override {
    if (session_ && session_->connection().ok()) return *session_;
    session_.reset();
    session_ = std::make_unique<sql::PostgresSession>(pool_.acquire());
    // A run outliving its session (the server restarted) still holds its claims.
    for (const std::string& owner : owners_) {
      const std::vector<Value> params{owner};
      session_->run("UPDATE " + table("claims") + " SET backend = " + kSession +
                        " WHERE owner = " + session_->dialect().placeholder(1),
                    params);
    }
    return *session_;
  }
  std::string table(std::string_view name) const override {
    return dialect_.quote(schema_) + "." + dialect_.quote("interloper_" + std::string(name));
  }
  std::string index(std::string_view name) const override {
    return dialect_.quote("interloper_" + std::string(name));
  }
  std::string_view id_column() const override { return "bigserial PRIMARY KEY"; }
  std::string_view keyed_table() const override { return ""; }
  void add_column(std::string_view table, std::string_view column,
                  std::string_view definition) override {
    session().execute(fmt::format("ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} {}",
                                  this->table(table), dialect_.quote(column), definition));
  }

  void open(SqlStoreState& state) override {
    sql::Transaction tx(session());
    state.lock("store", "");
    session().execute("CREATE SCHEMA IF NOT EXISTS " + dialect_.quote(schema_));
    state.create_tables();
    tx.commit();
  }

  std::string_view holder_column() const override { return "backend"; }
  std::string holder(std::vector<Value>&) const override { return kSession; }
  // Claims whose owner's session with the server is gone (the owner died, or the server
  // restarted under it) are taken over at once.
  void drop_gone_holders(SqlStoreState& state) override {
    state.run("DELETE FROM " + table("claims") +
              " c WHERE c.backend <> '' AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE "
              "a.pid::text || ' ' || extract(epoch FROM a.backend_start)::text = c.backend)");
  }
  std::optional<std::string> holding(std::string_view token, const Claim& claim) override {
    if (token.empty()) {
      return fmt::format(
          "its session cannot be checked (a claim of an earlier version); the claim lapses at {}",
          claim.expires.to_string());
    }
    return fmt::format("its session with the store's server (server process {}) is open",
                       token.substr(0, token.find(' ')));
  }
  void claimed(std::string_view owner) override {
    if (std::find(owners_.begin(), owners_.end(), owner) == owners_.end()) {
      owners_.emplace_back(owner);
    }
  }

 private:
  postgres::Url url_;
  std::string schema_;
  postgres::Pool pool_;
  sql::PostgresDialect dialect_;
  std::unique_ptr<sql::PostgresSession> session_;
  std::vector<std::string> owners_;  // whose claims this store took: stamped again on reconnect
};

}  // namespace

std::unique_ptr<SqlStoreState> open_postgres_state(std::string_view url) {
  auto state = std::make_unique<SqlStoreState>(std::make_unique<PostgresEngine>(url));
  state->engine->open(*state);
  return state;
}

}  // namespace detail

PostgresStore::PostgresStore(std::string_view url)
    : SqlStore(detail::open_postgres_state(url)) {}
PostgresStore::~PostgresStore() = default;

std::string PostgresStore::url() const {
  return state().engine->name();
}

}  // namespace interloper
