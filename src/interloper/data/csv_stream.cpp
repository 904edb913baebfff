// CSV read as a stream: text fed in chunks, cut at record boundaries into typed batches.
#include <algorithm>
#include <cstring>
#include <deque>
#include <istream>
#include <iterator>
#include <ostream>

#include "interloper/data/csv_records.hpp"
#include "interloper/data/format.hpp"
#include "interloper/data/stream.hpp"
#include "interloper/data/table_columns.hpp"

namespace interloper {

using namespace detail::csv;

namespace detail {
namespace {

// Finds where records end in CSV text arriving in pieces, reading quotes exactly as
// RecordReader does (a quote opens a field only at its start; "" inside is a literal quote).
class RecordBoundaries {
 public:
  // Feeds one character; true when it ends a record.
  bool ends_record(char c) {
    switch (state_) {
      case State::field_start:
        if (c == '"') {
          state_ = State::quoted;
          return false;
        }
        [[fallthrough]];
      case State::unquoted:
        if (c == '\n') {
          state_ = State::field_start;
          return true;
        }
        state_ = c == ',' ? State::field_start : State::unquoted;
        return false;
      case State::quoted:
        if (c == '"') state_ = State::quote_seen;
        return false;
      case State::quote_seen:
        if (c == '"') {
          state_ = State::quoted;
          return false;
        }
        state_ = State::unquoted;
        return ends_record(c);
    }
    return false;
  }

 private:
  enum class State : std::uint8_t { field_start, unquoted, quoted, quote_seen };
  State state_ = State::field_start;
};

class CsvStream final : public StreamFormat {
 public:
  CsvStream(ReadOptions options, BatchSink& sink) : options_(std::move(options)), sink_(sink) {}

  void feed(std::string_view bytes) override {
    std::size_t at = pending_.size();
    pending_.append(bytes);
    while (at < pending_.size()) {
      if (!boundaries_.ends_record(pending_[at++])) continue;
      complete_ = at;
      ++records_;
      if (names_ ? sink_.full(records_, complete_) : true) {
        parse(complete_);  // drops the first `at` bytes
        at = 0;
      }
    }
  }

  void finish() override {
    if (!pending_.empty()) {
      ++records_;
      parse(pending_.size());
    }
    if (names_ && !emitted_) emit(records_table(*names_, {}, options_));
  }

 private:
  // Parses the complete records in the first `end` bytes of pending_.
  void parse(std::size_t end) {
    std::string_view text(pending_.data(), end);
    RecordReader reader(text, line_);
    if (!names_) {
      std::vector<CsvField> header;
      std::deque<std::string> unescaped;
      reader.next(header, unescaped);
      names_ = header_names(header);
    }
    const Records records = read_records(reader, *names_);
    std::optional<Table> table;  // built before the text its fields view goes
    if (records.size() > 0) table = batch(records);
    line_ = reader.next_line();
    pending_.erase(0, end);
    complete_ = 0;
    records_ = 0;
    if (table) emit(std::move(*table));
  }

  Table batch(const Records& records) {
    Table table = records_table(*names_, records, options_, rows_, emitted_ ? &schema_ : nullptr);
    rows_ += records.size();
    if (options_.only_declared) return table;
    try {
      schema_ = emitted_ ? Schema::unify(schema_, table.schema()) : table.schema();
    } catch (const DataError& e) {
      // Earlier batches are already handed on in their types; only a declared type reads every
      // batch alike.
      throw DataError(line_prefix(clashing_line(records)) + e.what() +
                      " (earlier lines were already read; declare the column's type in the "
                      "schema to read every line as that type)");
    }
    return table;
  }

  // The line of the first field whose own type cannot widen from the type earlier batches
  // gave its column.
  std::size_t clashing_line(const Records& records) const {
    for (std::size_t r = 0; r < records.size(); ++r) {
      for (std::size_t c = 0; c < names_->size(); ++c) {
        const auto i = schema_.find((*names_)[c]);
        const CsvField& f = records.at(r, c);
        if (!i || is_null(f)) continue;
        try {
          Schema::widen(schema_.field(*i).type,
                        type_of(kinds_of(f, (*names_)[c] == options_.time_column)));
        } catch (const DataError&) {
          return records.lines[r];
        }
      }
    }
    return records.lines.front();
  }

  void emit(Table&& table) {
    emitted_ = true;
    sink_.emit(std::move(table));
  }

  ReadOptions options_;
  BatchSink& sink_;
  RecordBoundaries boundaries_;
  std::string pending_;       // text not parsed yet, starting at a record
  std::size_t complete_ = 0;  // bytes of pending_ holding complete records
  std::size_t records_ = 0;   // complete records in pending_
  std::size_t line_ = 1;      // the line pending_ begins on
  std::size_t rows_ = 0;      // records handed on so far
  std::optional<std::vector<std::string>> names_;
  Schema schema_;  // the batches' schemas unified so far
  bool emitted_ = false;
};

}  // namespace

std::unique_ptr<StreamFormat> csv_stream(const ReadOptions& options, BatchSink& sink) {
  return std::make_unique<CsvStream>(options, sink);
}

}  // namespace detail

}  // namespace interloper
