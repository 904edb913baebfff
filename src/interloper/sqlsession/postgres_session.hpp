// SqlSession over one PostgreSQL connection (see session.hpp). Bulk append is binary COPY; reads
// with every column typed come back in binary.
//
//   postgres::Pool pool(postgres::parse_url(url, {"schema"}));
//   sql::PostgresSession db(pool.acquire());
#pragma once

#include <memory>
#include <string>

#include "interloper/postgres/postgres.hpp"
#include "interloper/sqlsession/session.hpp"

namespace interloper::sql {

class PostgresDialect final : public Dialect {
 public:
  std::string_view name() const override { return "postgresql"; }
  std::string placeholder(std::size_t index) const override { return "$" + std::to_string(index); }
  std::string type_name(DataType type) const override;
  std::size_t max_identifier() const override { return 63; }
};

class PostgresSession final : public SqlSession {
 public:
  explicit PostgresSession(postgres::Pool::Lease connection);
  ~PostgresSession() override;

  const Dialect& dialect() const override { return dialect_; }
  const std::string& display() const override { return conn_->display(); }
  void execute(std::string_view sql) override;
  std::int64_t run(std::string_view sql, std::span<const Value> params = {}) override;
  void query(std::string_view sql, std::span<const Value> params, const Schema& columns,
             const std::function<void(Table&&)>& sink, std::size_t batch_rows = 0) override;
  using SqlSession::query;
  void begin(Access access = Access::write) override;
  void commit() override;
  void rollback() noexcept override;
  bool in_transaction() const override;
  void lock(std::string_view scope, std::span<const std::string> keys) override;
  std::unique_ptr<Appender> append(std::string_view schema, std::string_view table,
                                   const std::vector<std::string>& columns,
                                   const std::vector<DataType>& types) override;
  Table guarded_query(const GuardedQuery& query, const DeclaredType& declared) override;

  // The connection, for what only PostgreSQL has (roles, SECURITY DEFINER functions).
  postgres::Connection& connection() { return *conn_; }
  // Rethrows the DestinationError being handled as an SqlError of the kind the connection's
  // last SQLSTATE says.
  [[noreturn]] void rethrow() const;

 private:
  class Copier;
  postgres::Result exec(std::string_view sql, std::span<const Value> params, bool binary);
  PostgresDialect dialect_;
  postgres::Pool::Lease conn_;
};

}  // namespace interloper::sql
