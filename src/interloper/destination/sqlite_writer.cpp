// SqliteDestination's window writer: batches staged in a temporary table, swapped in at commit.
#include <fmt/format.h>

#include <array>
#include <mutex>
#include <optional>

#include "interloper/destination.hpp"
#include "interloper/destination/schema_change.hpp"
#include "interloper/destination/session_hook.hpp"
#include "interloper/destination/sqlite_state.hpp"
#include "interloper/destination/window_index.hpp"
#include "interloper/sqlite/sqlite.hpp"
#include "interloper/time/civil.hpp"

namespace interloper {

using sql::Appender;

namespace {

// How much of a write is kept in memory before it goes to a staging table.
constexpr std::size_t kMemoryBound = std::size_t{1} << 20;

// About what a batch takes in memory.
std::size_t approximate_bytes(const Table& batch) {
  std::size_t bytes = batch.num_rows() * batch.num_columns() * sizeof(Value);
  for (std::size_t c = 0; c < batch.num_columns(); ++c) {
    const DataType type = batch.schema().field(c).type;
    if (type != DataType::string && type != DataType::json && type != DataType::null) continue;
    for (const Value& v : batch.column(c)) {
      if (v.type() == DataType::string) bytes += v.as_string().size();
      if (v.type() == DataType::json) bytes += 64;
    }
  }
  return bytes;
}

}  // namespace

// Batches are validated as they arrive. The first MiB of a write stays in memory and goes
// straight into the table at commit, through the connection's cached INSERT; a larger write is
// staged in a temporary table of the connection (the temporary database spills to a file, so
// memory stays bounded and the database file is not locked while the rows are produced), drawn
// from a few the connection reuses. commit() swaps the rows in with one short transaction:
// delete the window, insert the rows, record the partitions.
class SqliteDestination::Writer final : public WindowWriter {
 public:
  Writer(State& state, DatasetRef dataset, const PartitionWindow* window)
      : state_(state),
        dataset_(std::move(dataset)),
        window_(window),
        name_(table_name(dataset_)),
        column_(dataset_.partitioning ? dataset_.partitioning->column() : ""),
        session_(detail::wrap_session(state.session)) {
    if (window_ != nullptr && dataset_.partitioning != nullptr) {
      index_.emplace(*window_, column_);
      rows_.assign(index_->size(), 0);
    } else {
      rows_.assign(1, 0);
    }
    // Refused before the asset computes anything; commit checks again, in its transaction.
    std::lock_guard lock(state_.mutex);
    state_.refuse_foreign(dataset_, name_);
  }

  ~Writer() override {
    if (stage_slot_ < 0) return;
    std::lock_guard lock(state_.mutex);
    const std::string sql = "DROP TABLE IF EXISTS temp." + quote(stage_);
    sqlite3_exec(state_.db.get(), sql.c_str(), nullptr, nullptr, nullptr);
    state_.stage_slots[static_cast<std::size_t>(stage_slot_)] = false;
  }

  void append(const Table& batch) override {
    usable();
    unusable_ = true;  // until this batch is in
    std::vector<std::vector<std::size_t>> parts;
    if (index_) parts = index_->split(dataset_, batch);  // throws before anything is staged
    if (!index_ && dataset_.partitioning) detail::check_every_row_held(dataset_, batch);
    Schema next;
    try {
      next = started_ ? Schema::unify(schema_, batch.schema()) : batch.schema();
    } catch (const DataError& e) {
      throw DestinationError(
          fmt::format("sqlite '{}': table '{}': {}", state_.path, name_, e.what()));
    }
    if (batch.num_rows() > 0) keep(batch, next);
    if (index_) {
      for (std::size_t i = 0; i < parts.size(); ++i) {
        rows_[i] += static_cast<std::int64_t>(parts[i].size());
      }
    } else {
      rows_[0] += static_cast<std::int64_t>(batch.num_rows());
    }
    schema_ = std::move(next);
    started_ = true;
    unusable_ = false;
  }

  std::int64_t commit() override {
    usable();
    unusable_ = true;
    std::lock_guard lock(state_.mutex);
    try {
      swap_in();
    } catch (...) {
      state_.forget();  // the rollback undid what the write recorded
      throw;
    }
    std::int64_t total = 0;
    for (std::int64_t rows : rows_) total += rows;
    return total;
  }

 private:
  void usable() const {
    if (unusable_) {
      throw DestinationError(
          fmt::format("sqlite '{}': table '{}': the writer failed or was "
                      "committed",
                      state_.path, name_));
    }
  }

  // Keeps the batch in memory while the write stays under the bound; past it, stages what was
  // kept and every batch after.
  void keep(const Table& batch, const Schema& unified) {
    if (staged_columns_ == 0) {
      const std::size_t bytes = approximate_bytes(batch);
      if (kept_bytes_ + bytes <= kMemoryBound) {
        kept_.push_back(batch);
        kept_bytes_ += bytes;
        return;
      }
      std::lock_guard lock(state_.mutex);
      take_stage();
      for (const Table& earlier : kept_) stage(earlier, unified);
      kept_.clear();
      kept_bytes_ = 0;
      stage(batch, unified);
      return;
    }
    std::lock_guard lock(state_.mutex);
    stage(batch, unified);
  }

  // Takes the first staging table no other writer of the connection holds, so the names (and
  // the statements cached for them) stay as few as the writers open at once.
  void take_stage() {
    auto& slots = state_.stage_slots;
    std::size_t slot = 0;
    while (slot < slots.size() && slots[slot]) ++slot;
    if (slot == slots.size()) slots.push_back(false);
    slots[slot] = true;
    stage_slot_ = static_cast<int>(slot);
    stage_ = fmt::format("_interloper_stage_{}", slot);
  }

  // Inserts the batch into the staging table, adding the columns it is missing. Holds the
  // state's mutex.
  void stage(const Table& batch, const Schema& unified) {
    auto& db = state_.db;
    const std::string stage = "temp." + quote(stage_);
    if (staged_columns_ == 0) {
      // Untyped columns keep every value as it was bound until the copy at commit.
      db.exec(("DROP TABLE IF EXISTS temp." + quote(stage_)).c_str());
      std::string sql = "CREATE TEMP TABLE " + quote(stage_) + " (";
      for (std::size_t i = 0; i < unified.size(); ++i) {
        sql += (i ? ", " : "") + quote(unified.field(i).name);
      }
      db.exec((sql + ")").c_str());
    } else {
      for (std::size_t i = staged_columns_; i < unified.size(); ++i) {
        const std::string sql =
            "ALTER TABLE " + stage + " ADD COLUMN " + quote(unified.field(i).name);
        db.exec(sql.c_str());
      }
    }
    staged_columns_ = unified.size();

    // Outside a transaction, the append is one of its own on the temporary table: it takes no
    // lock on the database file.
    put(batch, "temp", stage_, nullptr);
  }

  void swap_in() {
    sql::Transaction transaction(session_);
    // Replaced whole, an unpartitioned dataset's table goes (inside this transaction) and is
    // built anew from the write's columns and types.
    state_.adopt_foreign(dataset_, name_);
    if (dataset_.partitioning == nullptr) state_.drop_table(name_);
    const Schema schema = state_.ensure_table(session_, dataset_, name_, schema_, column_);
    if (!schema.empty()) {
      const bool by_union = !index_ || index_->is_time() || index_->is_list();
      state_.clear(session_, name_, schema, index_ ? window_ : nullptr, column_, by_union);
    }
    for (const Table& batch : kept_) put(batch, "main", name_, &schema_);
    if (staged_columns_ > 0) {
      // A column that widened from date to timestamp holds bare dates from earlier batches:
      // they are stored as their midnight, as a timestamp column's values always are.
      std::string columns, select;
      for (std::size_t i = 0; i < schema_.size(); ++i) {
        const Field& f = schema_.field(i);
        const std::string q = quote(f.name);
        columns += (i ? ", " : "") + q;
        select += i ? ", " : "";
        select +=
            f.type == DataType::timestamp
                ? fmt::format("CASE WHEN length({0}) = 10 THEN {0} || 'T00:00:00' ELSE {0} END", q)
                : q;
      }
      session_.execute(fmt::format("INSERT INTO main.{} ({}) SELECT {} FROM temp.{} ORDER BY rowid",
                                   quote(name_), columns, select, quote(stage_)));
    }
    state_.register_partitions(session_, name_, dataset_, index_ ? window_ : nullptr, rows_);
    transaction.commit();
  }

  // Appends the batch to `schema`.`table`, each value as `as` types its column (a date into a
  // widened timestamp column as its midnight), or as the batch does when `as` is null.
  void put(const Table& batch, std::string_view schema, const std::string& table,
           const Schema* as) {
    const std::size_t n = batch.num_columns();
    std::vector<std::string> names(n);
    std::vector<DataType> types(n);
    Appender::Columns cells(n);
    for (std::size_t c = 0; c < n; ++c) {
      names[c] = batch.schema().field(c).name;
      const std::optional<std::size_t> at = as ? as->find(names[c]) : std::nullopt;
      types[c] = at ? as->field(*at).type : batch.schema().field(c).type;
      cells[c] = &batch.column(c);
    }
    auto append = session_.append(schema, table, names, types);
    append->add(cells, 0, batch.num_rows());
    append->finish();
  }

  State& state_;
  DatasetRef dataset_;
  const PartitionWindow* window_;
  const std::string name_;
  const std::string column_;
  std::string stage_;
  int stage_slot_ = -1;  // the staging table held, when the write went past the bound
  std::vector<Table> kept_;
  std::size_t kept_bytes_ = 0;
  std::optional<detail::WindowIndex> index_;
  std::vector<std::int64_t> rows_;  // per partition of the window, or one for the whole
  Schema schema_;
  sql::SqlSession& session_;  // the state's session, or what a fault sweep wraps it in
  std::size_t staged_columns_ = 0;
  bool started_ = false;
  bool unusable_ = false;
};

std::unique_ptr<WindowWriter> SqliteDestination::open_writer(const DatasetRef& dataset,
                                                             const PartitionWindow* window) {
  return std::make_unique<Writer>(*state_, dataset, window);
}

void SqliteDestination::State::clear(sql::SqlSession& s, const std::string& name,
                                     const Schema& schema, const PartitionWindow* window,
                                     const std::string& column, bool by_union) {
  if (window == nullptr) {
    s.run("DELETE FROM " + quote(name));
    return;
  }
  detail::StoredTable t{schema, {}, quote(name)};
  for (const Field& f : schema.fields()) t.names.push_back(f.name);
  detail::delete_window(s, engine, t, *window, column, by_union);
}

}  // namespace interloper
