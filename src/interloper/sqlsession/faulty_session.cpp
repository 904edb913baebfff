#include "interloper/sqlsession/faulty_session.hpp"

#include <fmt/format.h>

namespace interloper::sql {

namespace {

class FaultyAppender final : public Appender {
 public:
  FaultyAppender(FaultySession& session, std::unique_ptr<Appender> inner)
      : session_(session), inner_(std::move(inner)) {}
  void add(const Columns& cells, std::size_t begin, std::size_t end) override {
    session_.step();
    inner_->add(cells, begin, end);
  }
  void add(const Columns& cells, std::span<const std::size_t> rows) override {
    session_.step();
    inner_->add(cells, rows);
  }
  void finish() override {
    session_.step();
    inner_->finish();
  }

 private:
  FaultySession& session_;
  std::unique_ptr<Appender> inner_;
};

}  // namespace

void FaultySession::step() {
  ++calls_;
  if (fail_at_ != 0 && (calls_ == fail_at_ || (sticky_ && calls_ > fail_at_))) {
    failed_ = true;
    throw SqlError(fmt::format("{} '{}': injected fault at call {}", inner_.dialect().name(),
                               inner_.display(), calls_));
  }
}

void FaultySession::execute(std::string_view sql) {
  step();
  inner_.execute(sql);
}

std::int64_t FaultySession::run(std::string_view sql, std::span<const Value> params) {
  step();
  return inner_.run(sql, params);
}

void FaultySession::query(std::string_view sql, std::span<const Value> params,
                          const Schema& columns, const std::function<void(Table&&)>& sink,
                          std::size_t batch_rows) {
  step();
  inner_.query(sql, params, columns, sink, batch_rows);
}

void FaultySession::begin(Access access) {
  step();
  inner_.begin(access);
}

void FaultySession::commit() {
  step();
  inner_.commit();
}

void FaultySession::lock(std::string_view scope, std::span<const std::string> keys) {
  step();
  inner_.lock(scope, keys);
}

std::unique_ptr<Appender> FaultySession::append(std::string_view schema, std::string_view table,
                                                const std::vector<std::string>& columns,
                                                const std::vector<DataType>& types) {
  step();
  return std::make_unique<FaultyAppender>(*this, inner_.append(schema, table, columns, types));
}

Table FaultySession::guarded_query(const GuardedQuery& query, const DeclaredType& declared) {
  step();
  return inner_.guarded_query(query, declared);
}

}  // namespace interloper::sql
