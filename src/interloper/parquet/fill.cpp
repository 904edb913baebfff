// Values into DuckDB data chunks: each column's values of its own type straight into the
// chunk's vector, others converted first.
#include <fmt/format.h>

#include <algorithm>

#include "interloper/data/format.hpp"
#include "interloper/parquet/writer_state.hpp"

namespace interloper::parquet {

[[noreturn]] void Writer::State::fail(std::size_t row, std::string_view what) const {
  throw DataError(fmt::format("parquet '{}': row {}: {}", path, row_base + row + 1, what));
}

void Writer::State::put_decimal(std::size_t c, std::size_t row, const Decimal& d) {
  if (schema.field(c).precision > 0) {  // declared_value has put it at the column's scale
    chunk->data<duckdb_hugeint>(c)[row] = to_hugeint(d.unscaled());
    return;
  }
  max_scale[c] = std::max(max_scale[c], d.scale());
  max_whole[c] = std::max(max_whole[c], d.digits() - d.scale());
  chunk->set_text(c, row, d.to_string());
}

void Writer::State::put_string(std::size_t c, std::size_t row, const std::string& text) {
  if (!detail::valid_utf8(text)) {
    fail(row, fmt::format("column '{}': the string is not valid UTF-8", schema.field(c).name));
  }
  chunk->set_text(c, row, text);
}

// The slow path of one cell: a null, or a value that must be converted to its column's type.
void Writer::State::put_converted(std::size_t c, std::size_t row, const Value& v) {
  if (v.is_null()) {
    chunk->set_null(c, row);
    return;
  }
  const Field& f = schema.field(c);
  Value declared;
  try {
    declared = detail::declared_value(v, f);
  } catch (const DataError& e) {
    fail(row, e.what());
  }
  switch (f.type) {
    case DataType::boolean:
      chunk->data<bool>(c)[row] = declared.as_bool();
      break;
    case DataType::int64:
      chunk->data<std::int64_t>(c)[row] = declared.as_int();
      break;
    case DataType::float64:
      chunk->data<double>(c)[row] = declared.as_double();
      break;
    case DataType::date:
      chunk->data<std::int32_t>(c)[row] =
          static_cast<std::int32_t>(declared.as_date().time_since_epoch().count());
      break;
    case DataType::timestamp:
      chunk->data<std::int64_t>(c)[row] = declared.as_timestamp().time_since_epoch().count();
      break;
    case DataType::decimal:
      put_decimal(c, row, declared.as_decimal());
      break;
    case DataType::string:
      put_string(c, row, declared.as_string());
      break;
    case DataType::json:
      chunk->set_text(c, row, declared.as_json().text);
      break;
    case DataType::null:
      chunk->set_null(c, row);
      break;
  }
}

// Values of the column's own type go straight into the chunk's vector; the rest take
// put_converted.
template <typename T, typename Get>
void Writer::State::fill_fixed(std::size_t c, const Value* cells, std::size_t count, DataType type,
                               Get get) {
  T* out = chunk->data<T>(c);
  for (std::size_t r = 0; r < count; ++r) {
    const Value& v = cells[r];
    if (v.type() == type) {
      out[r] = get(v);
    } else {
      put_converted(c, r, v);
    }
  }
}

void Writer::State::fill_column(std::size_t c, const Value* cells, std::size_t count) {
  const Field& f = schema.field(c);
  switch (f.type) {
    case DataType::boolean:
      fill_fixed<bool>(c, cells, count, f.type, [](const Value& v) { return v.as_bool(); });
      return;
    case DataType::int64:
      fill_fixed<std::int64_t>(c, cells, count, f.type, [](const Value& v) { return v.as_int(); });
      return;
    case DataType::float64:
      fill_fixed<double>(c, cells, count, f.type, [](const Value& v) { return v.as_double(); });
      return;
    case DataType::date:
      fill_fixed<std::int32_t>(c, cells, count, f.type, [](const Value& v) {
        return static_cast<std::int32_t>(v.as_date().time_since_epoch().count());
      });
      return;
    case DataType::timestamp:
      fill_fixed<std::int64_t>(c, cells, count, f.type, [](const Value& v) {
        return static_cast<std::int64_t>(v.as_timestamp().time_since_epoch().count());
      });
      return;
    case DataType::decimal:
      if (f.precision > 0) {
        // A decimal at the column's scale with at most `precision` digits needs no conversion.
        const __int128 bound = bounds[c];
        auto* out = chunk->data<duckdb_hugeint>(c);
        for (std::size_t r = 0; r < count; ++r) {
          const Value& v = cells[r];
          if (v.type() == DataType::decimal) {
            const Decimal d = v.as_decimal();
            if (d.scale() == f.scale && d.unscaled() < bound && -d.unscaled() < bound) {
              out[r] = to_hugeint(d.unscaled());
              continue;
            }
          }
          put_converted(c, r, v);
        }
        return;
      }
      break;
    case DataType::string:
      for (std::size_t r = 0; r < count; ++r) {
        const Value& v = cells[r];
        if (v.type() == DataType::string) {
          put_string(c, r, v.as_string());
        } else {
          put_converted(c, r, v);
        }
      }
      return;
    default:
      break;
  }
  for (std::size_t r = 0; r < count; ++r) put_converted(c, r, cells[r]);
}

void Writer::State::fill(const Table& batch, const std::vector<std::size_t>& from,
                         std::size_t begin, std::size_t count) {
  row_base = rows + begin;
  for (std::size_t c = 0; c < schema.size(); ++c) {
    if (from[c] == Schema::npos) {
      for (std::size_t r = 0; r < count; ++r) chunk->set_null(c, r);
    } else {
      fill_column(c, batch.column(from[c]).data() + begin, count);
    }
  }
}

}  // namespace interloper::parquet
