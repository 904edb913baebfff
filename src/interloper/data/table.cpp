#include <algorithm>
#include <ostream>
#include <type_traits>

#include "interloper/data/format.hpp"
#include "interloper/data/memory.hpp"

namespace interloper {

namespace {

[[noreturn]] void incompatible(std::string_view column, std::size_t row, DataType column_type,
                               const Value& v) {
  throw DataError("column '" + std::string(column) + "' row " + std::to_string(row + 1) +
                  ": value " + detail::describe(v) + " is incompatible with column type " +
                  std::string(type_name(column_type)));
}

// Room for `rows` cells in `column`; a large column is advised to take huge pages before it is
// filled.
void reserve_cells(std::vector<Value>& column, std::size_t rows) {
  if (rows <= column.capacity()) return;
  column.reserve(rows);
  detail::advise_huge_pages(column.data(), column.capacity() * sizeof(Value));
}

// The type column type `have` must become to take a `v` value (may throw via widen).
inline DataType target_type(DataType have, DataType v) {
  if (have == v || v == DataType::null) return have;
  return Schema::widen(have, v);
}

}  // namespace

const Value& RowRef::operator[](std::string_view name) const { return table_->at(row_, name); }
const Value& RowRef::operator[](std::size_t column) const { return table_->column(column)[row_]; }

Table::Table(Schema schema) : schema_(std::move(schema)), columns_(schema_.size()) {}

void Table::add_column(std::string name, DataType type) {
  schema_.add(Field{std::move(name), type});
  try {
    columns_.emplace_back(num_rows_);
  } catch (...) {
    schema_ = Schema(std::vector<Field>(schema_.fields().begin(), schema_.fields().end() - 1));
    throw;
  }
}

void Table::reserve(std::size_t rows) {
  for (auto& c : columns_) reserve_cells(c, rows);
}

void Table::retype_column(std::size_t c, DataType type) {
  for (Value& v : columns_[c])
    if (!v.is_null()) v = convert(v, type);
  schema_.set_type(c, type);
}

template <typename Cells>
void Table::resolve_cells(const Cells& cells) {
  const std::size_t row = num_rows_;
  scratch_.clear();
  std::size_t next_new = columns_.size();
  std::size_t k = 0;
  for (const auto& [name, value] : cells) {
    std::string_view n = name;
    std::size_t c;
    if (auto found = schema_.find(n)) {
      c = *found;
      DataType have = schema_.fields()[c].type;
      if (value.type() != have && !value.is_null()) {
        try {
          target_type(have, value.type());
        } catch (const DataError&) {
          incompatible(n, row, have, value);
        }
      }
    } else {
      c = next_new++;
    }
    // A column given twice (an existing one, or a new name repeated).
    std::size_t j = 0;
    for (const auto& [other, ignored] : cells) {
      if (j == k) break;
      if (std::string_view(other) == n)
        throw DataError("row " + std::to_string(row + 1) + " gives column '" + std::string(n) +
                        "' twice");
      ++j;
    }
    scratch_.push_back(c);
    ++k;
  }
}

template <typename Cells>
void Table::append_cells(Cells&& cells) {
  constexpr bool kMove = !std::is_const_v<std::remove_reference_t<Cells>>;
  const std::size_t ncols = columns_.size();
  const std::size_t row = num_rows_;
  // Nothing changes until every cell is known good.
  resolve_cells(cells);
  std::size_t k = 0;
  for (auto& [name, value] : cells) {
    std::size_t c = scratch_[k++];
    if (c >= ncols) {
      add_column(std::string(name), value.type());
      columns_[c].push_back(value);
      continue;
    }
    DataType have = schema_.fields()[c].type;
    if (value.is_null() || value.type() == have) {
      if constexpr (kMove)
        columns_[c].push_back(std::move(value));
      else
        columns_[c].push_back(value);
    } else {
      DataType t = target_type(have, value.type());
      if (t != have) retype_column(c, t);
      columns_[c].push_back(t == value.type() ? value : convert(value, t));
    }
  }
  for (auto& col : columns_)
    if (col.size() == row) col.emplace_back();
  ++num_rows_;
}

void Table::append(std::initializer_list<std::pair<std::string_view, Value>> cells) {
  append_cells(cells);
}

void Table::append(const std::vector<std::pair<std::string, Value>>& cells) { append_cells(cells); }

void Table::append(std::vector<std::pair<std::string, Value>>&& cells) { append_cells(cells); }

void Table::append_row(std::vector<Value> row) {
  if (row.size() != columns_.size())
    throw DataError("row " + std::to_string(num_rows_ + 1) + " has " + std::to_string(row.size()) +
                    " values but the table has " + std::to_string(columns_.size()) + " columns");
  const auto& fields = schema_.fields();
  bool retype = false;
  for (std::size_t c = 0; c < row.size(); ++c) {
    DataType have = fields[c].type, got = row[c].type();
    if (got == have || got == DataType::null) continue;
    try {
      target_type(have, got);
    } catch (const DataError&) {
      incompatible(fields[c].name, num_rows_, have, row[c]);
    }
    retype = true;
  }
  if (retype) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      DataType have = schema_.fields()[c].type, got = row[c].type();
      if (got == have || got == DataType::null) continue;
      DataType t = target_type(have, got);
      if (t != have) retype_column(c, t);
      if (t != got) row[c] = convert(row[c], t);
    }
  }
  for (std::size_t c = 0; c < row.size(); ++c) columns_[c].push_back(std::move(row[c]));
  ++num_rows_;
}

void Table::conform(const Schema& declared, std::size_t first_row) {
  // Converted columns are built aside and swapped in, so a failure changes nothing.
  std::vector<std::pair<std::size_t, std::vector<Value>>> converted;
  for (const Field& f : declared.fields()) {
    auto c = schema_.find(f.name);
    if (!c) continue;
    const Field& have = schema_.field(*c);
    if (have.type == f.type &&
        (f.type != DataType::decimal || (have.precision == f.precision && have.scale == f.scale)))
      continue;
    const std::vector<Value>& cells = columns_[*c];
    std::vector<Value> out;
    reserve_cells(out, cells.size());
    for (std::size_t r = 0; r < cells.size(); ++r) {
      try {
        out.push_back(detail::declared_value(cells[r], f));
      } catch (const DataError& e) {
        throw DataError("row " + std::to_string(first_row + r) + ": " + e.what());
      }
    }
    converted.emplace_back(*c, std::move(out));
  }
  for (auto& [c, cells] : converted) {
    columns_[c] = std::move(cells);
    const Field& f = declared.field(*declared.find(schema_.field(c).name));
    schema_.set_type(c, f.type, f.precision, f.scale);
  }
  for (const Field& f : declared.fields()) {
    if (schema_.find(f.name)) continue;
    add_column(f.name, f.type);
    schema_.set_type(schema_.size() - 1, f.type, f.precision, f.scale);
  }
}

template <typename Source>
void Table::append_rows_of(Source&& other) {
  Schema unified = Schema::unify(schema_, other.schema_);  // throws before any change
  const std::size_t rows_before = num_rows_;
  for (std::size_t c = 0; c < unified.size(); ++c) {
    const Field& f = unified.field(c);
    if (c >= columns_.size()) {
      add_column(f.name, f.type);
    } else if (f.type != schema_.field(c).type) {
      retype_column(c, f.type);
    }
  }
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    auto& col = columns_[c];
    auto src = other.column_index(schema_.field(c).name);
    if (!src) {
      col.resize(rows_before + other.num_rows_);
      continue;
    }
    constexpr bool moving = !std::is_lvalue_reference_v<Source>;
    auto& cells = other.columns_[*src];
    const DataType t = schema_.field(c).type;
    if constexpr (moving) {
      const bool same_type = std::all_of(
          cells.begin(), cells.end(), [t](const Value& v) { return v.type() == t || v.is_null(); });
      if (rows_before == 0 && same_type && col.capacity() <= cells.size()) {
        col = std::move(cells);  // the column taken whole
        continue;
      }
    }
    const std::size_t needed = rows_before + other.num_rows_;
    if (col.capacity() < needed) reserve_cells(col, std::max(needed, 2 * col.capacity()));
    for (auto& v : cells) {
      if (v.type() != t && !v.is_null()) {
        col.push_back(convert(v, t));
      } else if constexpr (moving) {
        col.push_back(std::move(v));
      } else {
        col.push_back(v);
      }
    }
  }
  num_rows_ += other.num_rows_;
  if constexpr (!std::is_lvalue_reference_v<Source>) other = Table();
}

void Table::append_table(const Table& other) { append_rows_of(other); }

void Table::append_table(Table&& other) { append_rows_of(std::move(other)); }

const std::vector<Value>& Table::column(std::string_view name) const {
  auto i = schema_.find(name);
  if (!i) throw DataError("table has no column '" + std::string(name) + "'");
  return columns_[*i];
}

const std::vector<Value>& Table::column(std::size_t index) const {
  if (index >= columns_.size())
    throw DataError("table has no column " + std::to_string(index) + " (it has " +
                    std::to_string(columns_.size()) + ")");
  return columns_[index];
}

const Value& Table::at(std::size_t row, std::string_view column_name) const {
  const auto& col = column(column_name);
  if (row >= num_rows_)
    throw DataError("table has no row " + std::to_string(row) + " (it has " +
                    std::to_string(num_rows_) + ")");
  return col[row];
}

std::vector<Value> Table::row(std::size_t i) const {
  if (i >= num_rows_)
    throw DataError("table has no row " + std::to_string(i) + " (it has " +
                    std::to_string(num_rows_) + ")");
  std::vector<Value> out;
  out.reserve(columns_.size());
  for (const auto& col : columns_) out.push_back(col[i]);
  return out;
}

Table Table::select_rows(const std::vector<std::size_t>& rows) const {
  for (std::size_t r : rows)
    if (r >= num_rows_)
      throw DataError("table has no row " + std::to_string(r) + " (it has " +
                      std::to_string(num_rows_) + ")");
  Table out(schema_);
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    auto& col = out.columns_[c];
    reserve_cells(col, rows.size());
    for (std::size_t r : rows) col.push_back(columns_[c][r]);
  }
  out.num_rows_ = rows.size();
  return out;
}

Table Table::filter_rows(const std::function<bool(const RowRef&)>& keep) const {
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < num_rows_; ++r)
    if (keep(RowRef(*this, r))) rows.push_back(r);
  return select_rows(rows);
}

std::string Table::to_string() const {
  const std::size_t n = columns_.size();
  std::vector<std::vector<std::string>> cells(n);
  std::vector<std::size_t> width(n);
  for (std::size_t c = 0; c < n; ++c) {
    width[c] = schema_.field(c).name.size();
    cells[c].reserve(num_rows_);
    for (const Value& v : columns_[c]) {
      cells[c].push_back(v.to_string());
      width[c] = std::max(width[c], cells[c].back().size());
    }
  }
  std::string out;
  auto line = [&](auto&& text_of) {
    for (std::size_t c = 0; c < n; ++c) {
      std::string_view t = text_of(c);
      if (c > 0) out += " | ";
      out += t;
      if (c + 1 < n) out.append(width[c] - std::min(width[c], t.size()), ' ');
    }
    out += '\n';
  };
  line([&](std::size_t c) -> std::string_view { return schema_.field(c).name; });
  for (std::size_t c = 0; c < n; ++c) {
    if (c > 0) out += "-+-";
    out.append(width[c], '-');
  }
  out += '\n';
  for (std::size_t r = 0; r < num_rows_; ++r)
    line([&](std::size_t c) -> std::string_view { return cells[c][r]; });
  return out;
}

std::ostream& operator<<(std::ostream& os, const Table& t) { return os << t.to_string(); }

}  // namespace interloper
