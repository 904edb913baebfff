// Private to the data layer: a table's columns filled in place.
//
// Readers know each value's column as they read it, so they push cells straight into the
// columns and close the row, instead of assembling a row and handing it to Table::append_row.
// They keep Table's invariants themselves: every cell holds its column's type or null, and
// after end_row() every column has num_rows() cells.
#pragma once

#include <interloper/data.hpp>
#include <vector>

#include "interloper/data/memory.hpp"

namespace interloper::detail {

class TableColumns {
 public:
  TableColumns() = default;  // fills nothing until assigned one over a table
  explicit TableColumns(Table& table) noexcept : table_(&table) {}

  // Room for `rows` more rows, which the reader is about to fill (an exact count: their pages
  // are mapped at once, see prefault).
  void reserve(std::size_t rows) {
    table_->reserve(table_->num_rows_ + rows);
    for (const auto& col : table_->columns_) {
      prefault(col.data() + col.size(), (col.capacity() - col.size()) * sizeof(Value));
    }
  }

  // Sets the cell of column c in the row being filled (a second value replaces the first).
  void set(std::size_t c, Value&& v) {
    std::vector<Value>& col = table_->columns_[c];
    if (col.size() > table_->num_rows_) {
      col.back() = std::move(v);
    } else {
      col.push_back(std::move(v));
    }
  }
  // Whether some column has no room for another cell (false for a table without columns).
  bool full() const {
    for (const auto& col : table_->columns_) {
      if (col.size() == col.capacity()) return true;
    }
    return false;
  }
  // Closes the row being filled: columns without a cell get null.
  void end_row() {
    for (auto& col : table_->columns_) {
      if (col.size() == table_->num_rows_) col.emplace_back();
    }
    ++table_->num_rows_;
  }
  // Drops the cells of a row left unfinished (by a reader that failed in it).
  void abandon_row() noexcept {
    for (auto& col : table_->columns_) {
      while (col.size() > table_->num_rows_) col.pop_back();
    }
  }

 private:
  Table* table_ = nullptr;
};

}  // namespace interloper::detail
