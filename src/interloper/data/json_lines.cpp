#include <cmath>
#include <istream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "interloper/data/format.hpp"

namespace interloper {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
    }
  }
  out.append(s.data() + start, s.size() - start);
  out.push_back('"');
}

// Appends rows [begin, end) of `table`; `keys` holds each column's `"name":` prefix.
void append_rows(std::string& out, const Table& table, const std::vector<std::string>& keys,
                 std::size_t begin, std::size_t end) {
  const std::size_t n = table.num_columns();
  for (std::size_t r = begin; r < end; ++r) {
    out.push_back('{');
    for (std::size_t c = 0; c < n; ++c) {
      if (c > 0) out.push_back(',');
      out += keys[c];
      const Value& v = table.column(c)[r];
      switch (v.type()) {
        case DataType::null: out += "null"; break;
        case DataType::boolean: out += v.as_bool() ? "true" : "false"; break;
        case DataType::int64: detail::append_int(out, v.as_int()); break;
        case DataType::float64: {
          double d = v.as_double();
          if (!std::isfinite(d))
            throw DataError("cannot write " + detail::describe(v) + " as JSON (column '" +
                            table.schema().field(c).name + "' row " + std::to_string(r) + ")");
          detail::append_double(out, d);
          break;
        }
        case DataType::string: append_json_string(out, v.as_string()); break;
        case DataType::date:
          out.push_back('"');
          detail::append_date(out, v.as_date());
          out.push_back('"');
          break;
        case DataType::timestamp:
          out.push_back('"');
          detail::append_timestamp(out, v.as_timestamp());
          out.push_back('"');
          break;
      }
    }
    out += "}\n";
  }
}

std::vector<std::string> key_prefixes(const Schema& schema) {
  std::vector<std::string> keys;
  for (const Field& f : schema.fields()) {
    std::string k;
    append_json_string(k, f.name);
    k.push_back(':');
    keys.push_back(std::move(k));
  }
  return keys;
}

std::string line_prefix(std::size_t line) { return "line " + std::to_string(line) + ": "; }

Value from_json(const nlohmann::ordered_json& j, bool detect_dates, std::size_t line,
                const std::string& key) {
  using J = nlohmann::ordered_json;
  switch (j.type()) {
    case J::value_t::null: return Value();
    case J::value_t::boolean: return Value(j.get<bool>());
    case J::value_t::number_integer: return Value(static_cast<long long>(j.get<std::int64_t>()));
    case J::value_t::number_unsigned: {
      auto u = j.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX))
        throw DataError(line_prefix(line) + "column '" + key + "': integer " + std::to_string(u) +
                        " does not fit in int64");
      return Value(static_cast<long long>(u));
    }
    case J::value_t::number_float: return Value(j.get<double>());
    case J::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      if (detect_dates && s.size() >= 10 && s.size() <= 20 && s[4] == '-') {
        if (auto d = parse_date(s)) return Value(*d);
        if (auto t = parse_timestamp(s)) return Value(*t);
      }
      return Value(s);
    }
    default:
      throw DataError(line_prefix(line) + "column '" + key + "': nested " +
                      std::string(j.type_name()) + " values are not supported");
  }
}

// Reads lines from `next_line` (returns false at the end) into a table.
template <typename NextLine>
Table read_lines(NextLine&& next_line, const Schema* declared) {
  Table table = declared ? Table(*declared) : Table();
  std::vector<std::pair<std::string, Value>> cells;
  std::vector<Value> row;
  std::string_view line;
  std::size_t line_no = 0;
  while (next_line(line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(line.begin(), line.end());
    } catch (const nlohmann::json::exception& e) {
      throw DataError(line_prefix(line_no) + "malformed JSON: " + e.what());
    }
    if (!j.is_object())
      throw DataError(line_prefix(line_no) + "expected a JSON object, got " +
                      std::string(j.type_name()));
    if (declared) {
      row.assign(declared->size(), Value());
      for (auto it = j.begin(); it != j.end(); ++it) {
        auto c = declared->find(it.key());
        if (!c)
          throw DataError(line_prefix(line_no) + "column '" + it.key() +
                          "' is not in the declared schema (" + declared->to_string() + ")");
        Value v = from_json(it.value(), false, line_no, it.key());
        DataType t = declared->field(*c).type;
        try {
          row[*c] = convert(v, t);
        } catch (const DataError& e) {
          throw DataError(line_prefix(line_no) + "column '" + it.key() + "': " + e.what());
        }
      }
      table.append_row(std::move(row));
    } else {
      cells.clear();
      for (auto it = j.begin(); it != j.end(); ++it)
        cells.emplace_back(it.key(), from_json(it.value(), true, line_no, it.key()));
      try {
        table.append(cells);
      } catch (const DataError& e) {
        throw DataError(line_prefix(line_no) + e.what());
      }
    }
  }
  return table;
}

}  // namespace

void write_json_lines(const Table& table, std::ostream& out) {
  auto keys = key_prefixes(table.schema());
  std::string buf;
  constexpr std::size_t kChunk = 4096;  // rows per buffered write
  for (std::size_t r = 0; r < table.num_rows(); r += kChunk) {
    buf.clear();
    append_rows(buf, table, keys, r, std::min(table.num_rows(), r + kChunk));
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  }
}

std::string to_json_lines(const Table& table) {
  std::string out;
  append_rows(out, table, key_prefixes(table.schema()), 0, table.num_rows());
  return out;
}

Table read_json_lines(std::istream& in, const Schema* declared) {
  std::string buffer;
  return read_lines(
      [&](std::string_view& line) {
        if (!std::getline(in, buffer)) return false;
        line = buffer;
        return true;
      },
      declared);
}

Table parse_json_lines(std::string_view text, const Schema* declared) {
  std::size_t pos = 0;
  return read_lines(
      [&](std::string_view& line) {
        if (pos >= text.size()) return false;
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos) nl = text.size();
        line = text.substr(pos, nl - pos);
        pos = nl + 1;
        return true;
      },
      declared);
}

std::string schema_to_json(const Schema& schema) {
  std::string out = "[";
  for (const Field& f : schema.fields()) {
    if (out.size() > 1) out += ',';
    out += "{\"name\":";
    append_json_string(out, f.name);
    out += ",\"type\":\"";
    out += type_name(f.type);
    out += "\"}";
  }
  out += ']';
  return out;
}

Schema schema_from_json(std::string_view text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw DataError(std::string("malformed schema JSON: ") + e.what());
  }
  if (!j.is_array()) throw DataError("schema JSON must be an array, got " + std::string(j.type_name()));
  std::vector<Field> fields;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto& f = j[i];
    if (!f.is_object() || !f.contains("name") || !f["name"].is_string() || !f.contains("type") ||
        !f["type"].is_string())
      throw DataError("schema JSON field " + std::to_string(i) +
                      " must be an object with string \"name\" and \"type\": " + f.dump());
    fields.push_back(Field{f["name"].get<std::string>(),
                           type_from_name(f["type"].get_ref<const std::string&>())});
  }
  return Schema(std::move(fields));
}

}  // namespace interloper
