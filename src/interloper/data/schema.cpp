#include <ostream>

#include "interloper/data/format.hpp"

namespace interloper {

Schema::Schema(std::vector<Field> fields) : fields_(std::move(fields)) {
  for (std::size_t i = 0; i < fields_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (fields_[i].name == fields_[j].name)
        throw DataError("schema has column '" + fields_[i].name + "' twice");
}

const Field& Schema::field(std::size_t i) const {
  if (i >= fields_.size())
    throw DataError("schema has no field " + std::to_string(i) + " (it has " +
                    std::to_string(fields_.size()) + ")");
  return fields_[i];
}

std::optional<std::size_t> Schema::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i].name == name) return i;
  return std::nullopt;
}

void Schema::add(Field field) {
  if (find(field.name)) throw DataError("schema already has a column '" + field.name + "'");
  fields_.push_back(std::move(field));
}

void Schema::set_type(std::size_t i, DataType type, std::uint8_t precision, std::uint8_t scale) {
  field(i);  // range check
  fields_[i].type = type;
  fields_[i].precision = type == DataType::decimal ? precision : 0;
  fields_[i].scale = type == DataType::decimal ? scale : 0;
}

DataType Schema::widen(DataType a, DataType b) {
  if (a == b || b == DataType::null) return a;
  if (a == DataType::null) return b;
  auto either = [&](DataType x, DataType y) { return (a == x && b == y) || (a == y && b == x); };
  if (either(DataType::int64, DataType::float64)) return DataType::float64;
  if (either(DataType::date, DataType::timestamp)) return DataType::timestamp;
  if (either(DataType::int64, DataType::decimal)) return DataType::decimal;
  throw DataError("incompatible types " + std::string(type_name(a)) + " and " +
                  std::string(type_name(b)));
}

DataType Schema::infer(const std::vector<Value>& values, std::string_view column) {
  DataType t = DataType::null;
  for (std::size_t i = 0; i < values.size(); ++i) {
    DataType v = values[i].type();
    if (v == t || v == DataType::null) continue;
    try {
      t = widen(t, v);
    } catch (const DataError&) {
      throw DataError("column '" + std::string(column) + "' mixes " + std::string(type_name(t)) +
                      " and " + std::string(type_name(v)) + " (value " +
                      detail::describe(values[i]) + " at row " + std::to_string(i + 1) + ")");
    }
  }
  return t;
}

Schema Schema::unify(const Schema& a, const Schema& b) {
  Schema out = a;
  for (const Field& f : b.fields_) {
    if (auto i = out.find(f.name)) {
      Field& mine = out.fields_[*i];
      try {
        const DataType before = mine.type;
        mine.type = widen(mine.type, f.type);
        if (mine.type == DataType::decimal && f.type == DataType::decimal) {
          // A declared size is kept where both sides agree on it (or one side had none yet).
          const bool mine_sized = before == DataType::decimal;
          if (!mine_sized) {
            mine.precision = f.precision;
            mine.scale = f.scale;
          } else if (mine.precision != f.precision || mine.scale != f.scale) {
            mine.precision = mine.scale = 0;
          }
        }
      } catch (const DataError&) {
        throw DataError("column '" + f.name + "' has incompatible types " +
                        std::string(type_name(mine.type)) + " and " +
                        std::string(type_name(f.type)));
      }
    } else {
      out.fields_.push_back(f);
    }
  }
  return out;
}

std::string Schema::to_string() const {
  std::string out;
  for (const Field& f : fields_) {
    if (!out.empty()) out += ", ";
    out += f.name;
    out += ": ";
    out += type_text(f);
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, const Schema& s) { return os << s.to_string(); }

}  // namespace interloper
