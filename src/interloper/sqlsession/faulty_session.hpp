// A SqlSession that fails on purpose: the way SQLite's test_vfs tests a database, a wrapper that
// lets the first N - 1 calls through to the session it wraps and fails the Nth (and, when asked,
// every later one), so that a test can sweep N over every call an operation makes and check what
// each failure leaves behind.
//
//   sql::FaultySession db(inner, 7);  // the 7th call throws SqlError "injected fault"
//   ... run the operation; db.calls() says how many calls it made ...
//
// A call is any statement, query, begin, commit, lock, append, and each add() or finish() of an
// Appender. rollback() is never failed (nothing could be trusted after a failed rollback), and
// neither are dialect() and display().
#pragma once

#include <cstddef>

#include "interloper/sqlsession/session.hpp"

namespace interloper::sql {

class FaultySession final : public SqlSession {
 public:
  // Fails the `fail_at`-th call (counting from 1; 0: none). With `sticky`, every call after it
  // fails too, as a connection that went away would.
  FaultySession(SqlSession& inner, std::size_t fail_at, bool sticky = false)
      : inner_(inner), fail_at_(fail_at), sticky_(sticky) {}

  // How many calls were made (failed ones included).
  std::size_t calls() const { return calls_; }
  // Whether the fault was injected.
  bool failed() const { return failed_; }
  // Counts a call and throws when it is the one to fail; for the wrappers of this file.
  void step();

  const Dialect& dialect() const override { return inner_.dialect(); }
  const std::string& display() const override { return inner_.display(); }
  void execute(std::string_view sql) override;
  std::int64_t run(std::string_view sql, std::span<const Value> params = {}) override;
  void query(std::string_view sql, std::span<const Value> params, const Schema& columns,
             const std::function<void(Table&&)>& sink, std::size_t batch_rows = 0) override;
  using SqlSession::query;
  void begin(Access access = Access::write) override;
  void commit() override;
  void rollback() noexcept override { inner_.rollback(); }
  bool in_transaction() const override { return inner_.in_transaction(); }
  void lock(std::string_view scope, std::span<const std::string> keys) override;
  std::unique_ptr<Appender> append(std::string_view schema, std::string_view table,
                                   const std::vector<std::string>& columns,
                                   const std::vector<DataType>& types) override;
  Table guarded_query(const GuardedQuery& query, const DeclaredType& declared) override;

 private:
  SqlSession& inner_;
  std::size_t fail_at_;
  bool sticky_;
  std::size_t calls_ = 0;
  bool failed_ = false;
};

}  // namespace interloper::sql
