#include "interloper/sqlsession/postgres_rows.hpp"

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

constexpr std::int64_t kEpochMicros = kEpochSeconds * kMicros;
constexpr std::uint8_t kJsonbVersion = 1;

// numeric's binary form: digits in base 10000, most significant first, with the power of 10000
// of the first (its weight), a sign and the scale. Written from the decimal's text.
void put_numeric(std::string& out, const Decimal& d) {
  std::string text = d.to_string();
  const bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  const std::size_t point = text.find('.');
  std::string whole = text.substr(0, point);
  std::string fraction = point == std::string::npos ? "" : text.substr(point + 1);
  whole.insert(0, (4 - whole.size() % 4) % 4, '0');
  fraction.append((4 - fraction.size() % 4) % 4, '0');
  std::vector<std::uint16_t> groups;
  const std::string all = whole + fraction;
  for (std::size_t i = 0; i < all.size(); i += 4)
    groups.push_back(static_cast<std::uint16_t>(std::stoi(all.substr(i, 4))));
  int weight = static_cast<int>(whole.size() / 4) - 1;
  std::size_t first = 0;
  while (first < groups.size() && groups[first] == 0) {
    ++first;
    --weight;
  }
  std::size_t last = groups.size();
  while (last > first && groups[last - 1] == 0) --last;
  if (first == last) weight = 0;
  const std::size_t n = last - first;
  postgres::put_u32(out, static_cast<std::uint32_t>(8 + 2 * n));
  postgres::put_u16(out, static_cast<std::uint16_t>(n));
  postgres::put_u16(out, static_cast<std::uint16_t>(static_cast<std::int16_t>(weight)));
  postgres::put_u16(out, negative && n > 0 ? 0x4000 : 0x0000);
  postgres::put_u16(out, static_cast<std::uint16_t>(d.scale()));
  for (std::size_t i = first; i < last; ++i) postgres::put_u16(out, groups[i]);
}

// The decimal of numeric's binary form (see put_numeric); throws for NaN, infinities and
// numbers of more than 38 digits.
Value get_numeric(std::string_view bytes, const std::string& column) {
  auto fail = [&](const std::string& why) -> Value {
    throw DestinationError(fmt::format("postgresql column '{}': {}", column, why));
  };
  if (bytes.size() < 8)
    return fail("a numeric value of " + std::to_string(bytes.size()) + " bytes");
  const std::uint16_t n = postgres::get_u16(bytes.data());
  const auto weight = static_cast<std::int16_t>(postgres::get_u16(bytes.data() + 2));
  const std::uint16_t sign = postgres::get_u16(bytes.data() + 4);
  const std::uint16_t scale = postgres::get_u16(bytes.data() + 6);
  if (bytes.size() != 8 + 2 * std::size_t{n}) return fail("a malformed numeric value");
  if (sign != 0 && sign != 0x4000) return fail("NaN or an infinity is not a decimal");
  std::string whole, fraction;
  for (int i = 0; i < n; ++i) {
    const std::string group = fmt::format("{:04}", postgres::get_u16(bytes.data() + 8 + 2 * i));
    (weight - i >= 0 ? whole : fraction) += group;
  }
  if (weight >= n) whole.append(4 * static_cast<std::size_t>(weight - n + 1), '0');
  if (weight < -1) fraction.insert(0, 4 * static_cast<std::size_t>(-weight - 1), '0');
  fraction.resize(scale, '0');
  std::string text = (sign == 0x4000 ? "-" : "") + (whole.empty() ? "0" : whole);
  if (scale > 0) text += "." + fraction;
  if (auto d = Decimal::parse(text)) return Value(*d);
  return fail("numeric " + text + " does not fit a decimal (at most 38 digits)");
}

}  // namespace

const char* sql_type(DataType type) {
  switch (type) {
    case DataType::boolean:
      return "boolean";
    case DataType::int64:
      return "bigint";
    case DataType::float64:
      return "double precision";
    case DataType::date:
      return "date";
    case DataType::timestamp:
      return "timestamp";
    case DataType::decimal:  // without a type modifier: each value keeps its own scale
      return "numeric";
    case DataType::json:
      return "jsonb";
    case DataType::null:
    case DataType::string:
      break;
  }
  return "text";
}

Oid type_oid(DataType type) {
  switch (type) {
    case DataType::boolean:
      return postgres::oid::boolean;
    case DataType::int64:
      return postgres::oid::int8;
    case DataType::float64:
      return postgres::oid::float8;
    case DataType::date:
      return postgres::oid::date;
    case DataType::timestamp:
      return postgres::oid::timestamp;
    case DataType::decimal:
      return postgres::oid::numeric;
    case DataType::json:
      return postgres::oid::jsonb;
    case DataType::null:
    case DataType::string:
      break;
  }
  return postgres::oid::text;
}

std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

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
        postgres::put_u64(out, static_cast<std::uint64_t>(
                                   v.as_timestamp().time_since_epoch().count() - kEpochMicros));
        break;
      case DataType::decimal:
        put_numeric(out, v.as_decimal());
        break;
      case DataType::json: {
        const std::string& text = v.as_json().text;
        postgres::put_u32(out, static_cast<std::uint32_t>(text.size() + 1));
        out += static_cast<char>(kJsonbVersion);
        out += text;
        break;
      }
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
      return Value(Value::Timestamp(std::chrono::microseconds(micros + kEpochMicros)));
    }
    case DataType::decimal:
      return get_numeric(bytes, column);
    case DataType::json:
      if (bytes.empty() || bytes[0] != static_cast<char>(kJsonbVersion)) {
        throw DestinationError(
            fmt::format("postgresql column '{}': not a jsonb value of version 1", column));
      }
      return Value(parse_json(bytes.substr(1)));
  }
  return Value();
}

}  // namespace interloper::detail::pg
