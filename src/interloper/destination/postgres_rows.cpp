#include "interloper/destination/postgres_rows.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "interloper/postgres/postgres.hpp"

namespace interloper::detail::pg {

namespace {

// PostgreSQL counts dates and timestamps from 2000-01-01.
constexpr std::int64_t kEpochDays = 10957;
constexpr std::int64_t kEpochSeconds = kEpochDays * 86400;
constexpr std::int64_t kMicros = 1000000;

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace

void CopyEncoder::header(std::string& out) {
  static constexpr char signature[] = "PGCOPY\n\377\r\n";
  out.append(signature, 11);
  postgres::put_u32(out, 0);  // flags
  postgres::put_u32(out, 0);  // header extension length
}

void CopyEncoder::trailer(std::string& out) { postgres::put_u16(out, 0xFFFF); }

void CopyEncoder::row(std::string& out, const std::vector<const std::vector<Value>*>& columns,
                      const std::vector<DataType>& types, std::size_t r) {
  postgres::put_u16(out, static_cast<std::uint16_t>(columns.size()));
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const Value& v = (*columns[c])[r];
    if (v.is_null()) {
      postgres::put_u32(out, 0xFFFFFFFFu);
      continue;
    }
    switch (types[c]) {
      case DataType::null:  // a null column holds only nulls
        postgres::put_u32(out, 0xFFFFFFFFu);
        break;
      case DataType::boolean:
        postgres::put_u32(out, 1);
        out += v.as_bool() ? '\1' : '\0';
        break;
      case DataType::int64:
        postgres::put_u32(out, 8);
        postgres::put_u64(out, static_cast<std::uint64_t>(v.as_int()));
        break;
      case DataType::float64:
        postgres::put_u32(out, 8);
        postgres::put_u64(out, std::bit_cast<std::uint64_t>(v.as_double()));
        break;
      case DataType::string: {
        const std::string& s = v.as_string();
        postgres::put_u32(out, static_cast<std::uint32_t>(s.size()));
        out += s;
        break;
      }
      case DataType::date:
        postgres::put_u32(out, 4);
        postgres::put_u32(
            out, static_cast<std::uint32_t>(v.as_date().time_since_epoch().count() - kEpochDays));
        break;
      case DataType::timestamp:
        postgres::put_u32(out, 8);
        postgres::put_u64(
            out, static_cast<std::uint64_t>(
                     (v.as_timestamp().time_since_epoch().count() - kEpochSeconds) * kMicros));
        break;
    }
  }
}

Value decode_binary(std::string_view bytes, DataType type, const std::string& column) {
  auto need = [&](std::size_t size) {
    if (bytes.size() != size) {
      throw DestinationError(fmt::format("postgresql column '{}': {} bytes for a {} value", column,
                                         bytes.size(), type_name(type)));
    }
  };
  switch (type) {
    case DataType::null:
      return Value();
    case DataType::boolean:
      need(1);
      return Value(bytes[0] != 0);
    case DataType::int64:
      need(8);
      return Value(static_cast<long long>(postgres::get_u64(bytes.data())));
    case DataType::float64:
      need(8);
      return Value(std::bit_cast<double>(postgres::get_u64(bytes.data())));
    case DataType::string:
      return Value(std::string(bytes));
    case DataType::date: {
      need(4);
      auto days = static_cast<std::int32_t>(postgres::get_u32(bytes.data()));
      return Value(Value::Date(std::chrono::days(days + kEpochDays)));
    }
    case DataType::timestamp: {
      need(8);
      auto micros = static_cast<std::int64_t>(postgres::get_u64(bytes.data()));
      return Value(
          Value::Timestamp(std::chrono::seconds(floor_div(micros, kMicros) + kEpochSeconds)));
    }
  }
  return Value();
}

}  // namespace interloper::detail::pg
