#include "interloper/sqlsession/postgres_session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>

#include "interloper/data/table_columns.hpp"
#include "interloper/sql/identifier.hpp"
#include "interloper/sqlsession/internal.hpp"
#include "interloper/sqlsession/postgres_rows.hpp"
#include "interloper/sqlsession/postgres_sql.hpp"

namespace interloper::sql {

namespace {

// Rows fetched from a cursor at a time: memory per round trip, not per read.
constexpr std::size_t kFetchRows = 20000;
// Bytes of COPY data gathered before they are handed to libpq.
constexpr std::size_t kCopyChunk = std::size_t{1} << 20;

SqlError::Kind kind_of(const std::string& sqlstate) {
  if (sqlstate.rfind("23", 0) == 0) return SqlError::Kind::constraint;
  if (sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03") {
    return SqlError::Kind::conflict;
  }
  if (sqlstate == "57014") return SqlError::Kind::timeout;
  return SqlError::Kind::other;
}

postgres::Params params_of(std::span<const Value> values) {
  postgres::Params params;
  for (const Value& v : values) detail::pg::bind_value(params, v);
  return params;
}

// The Value of a binary cell of PostgreSQL type `type`.
Value binary_value(std::string_view bytes, Oid type, const std::string& column) {
  switch (type) {
    case postgres::oid::int2:
      return Value(
          static_cast<long long>(static_cast<std::int16_t>(postgres::get_u16(bytes.data()))));
    case postgres::oid::int4:
      return Value(
          static_cast<long long>(static_cast<std::int32_t>(postgres::get_u32(bytes.data()))));
    case postgres::oid::float4:
      return Value(static_cast<double>(std::bit_cast<float>(postgres::get_u32(bytes.data()))));
    case postgres::oid::json:
      return Value(parse_json(bytes));
    case postgres::oid::timestamptz:
      return detail::pg::decode_binary(bytes, DataType::timestamp, column);
    case postgres::oid::boolean:
    case postgres::oid::int8:
    case postgres::oid::float8:
    case postgres::oid::numeric:
    case postgres::oid::date:
    case postgres::oid::timestamp:
    case postgres::oid::jsonb:
      return detail::pg::decode_binary(bytes, detail::pg::result_type(type), column);
    case postgres::oid::text:
    case postgres::oid::varchar:
    case 1042:  // bpchar
    case 19:    // name
      return Value(std::string(bytes));
    default:
      throw DataError(
          fmt::format("column '{}' has a type (oid {}) read only as text", column, type));
  }
}

// Appends the binary rows of `result` to `out`, whose column c is of type `types[c]` and
// arrives as that type's own PostgreSQL type: each cell decoded straight into its column.
void read_typed(const postgres::Result& result, const std::vector<DataType>& types, Table& out) {
  detail::TableColumns cells(out);
  cells.reserve(static_cast<std::size_t>(result.rows()));
  const int columns = static_cast<int>(types.size());
  for (int r = 0; r < result.rows(); ++r) {
    try {
      for (int c = 0; c < columns; ++c) {
        const auto i = static_cast<std::size_t>(c);
        if (result.is_null(r, c)) continue;  // end_row() fills it with null
        cells.set(i, detail::pg::decode_binary(result.value(r, c), types[i],
                                               out.schema().field(i).name));
      }
    } catch (...) {
      cells.abandon_row();
      throw;
    }
    cells.end_row();
  }
}

// Appends the rows of `result` to `out`, typed as `types` (null: by the result's own type).
void read_result(const postgres::Result& result, bool binary, const std::vector<DataType>& types,
                 Table& out) {
  const int columns = result.columns();
  std::vector<Oid> oids(static_cast<std::size_t>(columns));
  bool native = binary && static_cast<std::size_t>(columns) == types.size();
  for (int c = 0; c < columns; ++c) {
    const auto i = static_cast<std::size_t>(c);
    oids[i] = PQftype(result.get(), c);
    native = native && oids[i] == detail::pg::type_oid(types[i]);
  }
  if (native) return read_typed(result, types, out);
  out.reserve(out.num_rows() + static_cast<std::size_t>(result.rows()));
  for (int r = 0; r < result.rows(); ++r) {
    std::vector<Value> row;
    row.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) {
      const auto i = static_cast<std::size_t>(c);
      if (result.is_null(r, c)) {
        row.emplace_back();
        continue;
      }
      Value v = binary ? binary_value(result.value(r, c), oids[i], out.schema().field(i).name)
                       : detail::pg::text_value(result.value(r, c), oids[i]);
      if (types[i] != DataType::null && v.type() != types[i]) {
        v = convert(v, types[i]);
      }
      row.push_back(std::move(v));
    }
    out.append_row(std::move(row));
  }
}

}  // namespace

std::string PostgresDialect::type_name(DataType type) const { return detail::pg::sql_type(type); }

PostgresSession::PostgresSession(postgres::Pool::Lease connection) : conn_(std::move(connection)) {}

PostgresSession::~PostgresSession() {
  if (in_transaction()) rollback();
}

void PostgresSession::rethrow() const { rethrow_as_sql_error(kind_of(conn_->last_sqlstate())); }

postgres::Result PostgresSession::exec(std::string_view sql, std::span<const Value> params,
                                       bool binary) {
  try {
    if (params.empty() && !binary) return conn_->exec(sql, postgres::Params());
    const postgres::Params bound = params_of(params);
    if (binary) return conn_->exec(sql, bound, true);
    return conn_->exec_prepared(sql, bound);
  } catch (const DestinationError&) {
    rethrow();
  }
}

void PostgresSession::execute(std::string_view sql) {
  try {
    conn_->exec(sql);
  } catch (const DestinationError&) {
    rethrow();
  }
}

std::int64_t PostgresSession::run(std::string_view sql, std::span<const Value> params) {
  postgres::Result result = exec(sql, params, false);
  const char* changed = PQcmdTuples(result.get());
  return changed == nullptr || *changed == '\0' ? 0 : std::stoll(changed);
}

void PostgresSession::query(std::string_view sql, std::span<const Value> params,
                            const Schema& columns, const std::function<void(Table&&)>& sink,
                            std::size_t batch_rows) {
  // Binary when every column is typed: no text to parse, exact values.
  bool binary = !columns.empty();
  std::vector<DataType> types;
  for (const Field& f : columns.fields()) {
    types.push_back(f.type);
    binary = binary && f.type != DataType::null;
  }
  auto start = [&](const postgres::Result& first) {
    if (!columns.empty()) return Table(columns);
    std::vector<Field> fields;
    for (int c = 0; c < first.columns(); ++c) {
      fields.push_back({PQfname(first.get(), c), DataType::null});
    }
    types.assign(fields.size(), DataType::null);
    return Table(Schema(std::move(fields)));
  };
  try {
    if (batch_rows == 0) {
      postgres::Result result = exec(sql, params, binary);
      Table out = start(result);
      read_result(result, binary, types, out);
      sink(std::move(out));
      return;
    }
    // A cursor in a transaction of its own unless one is open.
    const bool own = !in_transaction();
    if (own) begin(Access::read);
    try {
      exec("DECLARE il_rows NO SCROLL CURSOR FOR " + std::string(sql), params, false);
      const std::string fetch = fmt::format("FETCH FORWARD {} FROM il_rows", batch_rows);
      bool handed = false;
      for (;;) {
        postgres::Result chunk = exec(fetch, {}, binary);
        Table out = start(chunk);
        read_result(chunk, binary, types, out);
        const bool last = static_cast<std::size_t>(chunk.rows()) < batch_rows;
        if (out.num_rows() > 0 || !handed) sink(std::move(out));
        handed = true;
        if (last) break;
      }
      execute("CLOSE il_rows");
    } catch (...) {
      if (own) rollback();
      throw;
    }
    if (own) commit();
  } catch (const DataError& e) {
    throw SqlError(fmt::format("postgresql '{}': {}", display(), e.what()));
  }
}

void PostgresSession::begin(Access access) {
  execute(access == Access::write ? "BEGIN" : "BEGIN READ ONLY");
}

void PostgresSession::commit() { execute("COMMIT"); }

void PostgresSession::rollback() noexcept {
  if (!in_transaction()) return;
  PGresult* result = PQexec(conn_->get(), "ROLLBACK");
  PQclear(result);
}

bool PostgresSession::in_transaction() const {
  return PQtransactionStatus(conn_->get()) != PQTRANS_IDLE;
}

void PostgresSession::lock(std::string_view scope, std::span<const std::string> keys) {
  std::vector<std::string> sorted(keys.begin(), keys.end());
  std::sort(sorted.begin(), sorted.end());
  const std::vector<Value> params{Value(std::string(scope)), Value(detail::pg::text_array(sorted))};
  exec(
      "SELECT pg_advisory_xact_lock(hashtext($1), hashtext(k)) "
      "FROM unnest($2::text[]) WITH ORDINALITY AS u(k, n) ORDER BY n",
      params, false);
}

// Rows streamed through COPY ... FROM STDIN (FORMAT binary).
class PostgresSession::Copier final : public Appender {
 public:
  Copier(PostgresSession& session, const std::string& sql, std::vector<DataType> types)
      : session_(session), types_(std::move(types)) {
    try {
      session_.conn_->copy_start(sql);
    } catch (const DestinationError&) {
      session_.rethrow();
    }
    open_ = true;
    detail::pg::CopyEncoder::header(buffer_);
  }
  ~Copier() override {
    if (open_) PQputCopyEnd(session_.conn_->get(), "abandoned");
    if (open_) PQclear(PQgetResult(session_.conn_->get()));
  }

  void add(const Columns& cells, std::size_t begin, std::size_t end) override {
    for (std::size_t r = begin; r < end; ++r) put(cells, r);
  }
  void add(const Columns& cells, std::span<const std::size_t> rows) override {
    for (std::size_t r : rows) put(cells, r);
  }
  void finish() override {
    detail::pg::CopyEncoder::trailer(buffer_);
    flush();
    open_ = false;
    try {
      session_.conn_->copy_end();
    } catch (const DestinationError&) {
      session_.rethrow();
    }
  }

 private:
  void put(const Columns& cells, std::size_t r) {
    detail::pg::CopyEncoder::row(buffer_, cells, types_, r);
    if (buffer_.size() >= kCopyChunk) flush();
  }
  void flush() {
    try {
      session_.conn_->copy_put(buffer_.data(), buffer_.size());
    } catch (const DestinationError&) {
      session_.rethrow();
    }
    buffer_.clear();
  }

  PostgresSession& session_;
  std::vector<DataType> types_;
  std::string buffer_;
  bool open_ = false;
};

std::unique_ptr<Appender> PostgresSession::append(std::string_view schema, std::string_view table,
                                                  const std::vector<std::string>& columns,
                                                  const std::vector<DataType>& types) {
  return std::make_unique<Copier>(
      *this,
      "COPY " + append_target(dialect_, schema, table, columns) + " FROM STDIN (FORMAT binary)",
      types);
}

Table PostgresSession::guarded_query(const GuardedQuery& query, const DeclaredType&) {
  detail::pg::NumberedQuery numbered = detail::pg::number_parameters(query.sql);
  std::vector<Value> params;
  for (const std::string& name : numbered.names) {
    auto given = std::find_if(query.params.begin(), query.params.end(), [&](const auto& p) {
      return p.first == name || p.first == ":" + name;
    });
    params.push_back(given == query.params.end() ? Value() : given->second);
  }
  for (const auto& [name, value] : query.params) {
    const std::string bare = !name.empty() && name[0] == ':' ? name.substr(1) : name;
    if (std::find(numbered.names.begin(), numbered.names.end(), bare) == numbered.names.end()) {
      throw SqlError(fmt::format("postgresql '{}': query has no parameter ':{}': {}", display(),
                                 bare, query.sql));
    }
  }
  Table out;
  Transaction tx(*this, Access::read);
  try {
    if (!query.schema.empty()) {
      execute("SET LOCAL search_path TO " + dialect_.quote(query.schema) + ", public");
    }
    if (query.timeout_seconds > 0) {
      const auto ms = std::chrono::ceil<std::chrono::milliseconds>(
                          std::chrono::duration<double>(query.timeout_seconds))
                          .count();
      execute(fmt::format("SET LOCAL statement_timeout = {}", ms));
    }
    bool first = true;
    this->query(
        numbered.sql, params, Schema(),
        [&](Table&& t) {
          if (first)
            out = std::move(t);
          else
            out.append_table(std::move(t));
          first = false;
        },
        kFetchRows);
  } catch (const SqlError& e) {
    if (e.kind() == SqlError::Kind::timeout && query.timeout_seconds > 0) {
      throw SqlError(fmt::format("postgresql '{}': the query timed out after {}s", display(),
                                 query.timeout_seconds),
                     SqlError::Kind::timeout);
    }
    throw;
  }
  tx.commit();
  return out;
}

}  // namespace interloper::sql
