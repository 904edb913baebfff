#include <algorithm>

#include "interloper/partitioning.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper {

Filter Filter::range(std::string column, TimePoint start, TimePoint end) {
  Filter f;
  f.kind_ = Kind::range;
  f.column_ = std::move(column);
  f.start_ = start;
  f.end_ = end;
  return f;
}

Filter Filter::membership(std::string column, std::vector<std::string> values) {
  Filter f;
  f.kind_ = Kind::membership;
  f.column_ = std::move(column);
  f.values_ = std::move(values);
  return f;
}

bool Filter::matches(TimePoint t) const { return kind_ == Kind::range && start_ <= t && t < end_; }

bool Filter::matches(std::string_view value) const {
  if (kind_ == Kind::membership) {
    return std::find(values_.begin(), values_.end(), value) != values_.end();
  }
  try {
    return matches(TimePoint::parse(value));
  } catch (const std::invalid_argument&) {
    return false;
  }
}

Filter::Sql Filter::to_sql(Placeholder style, int first_index, std::string_view prefix) const {
  Sql sql;
  int index = first_index;
  auto placeholder = [&]() -> std::string {
    switch (style) {
      case Placeholder::question:
        return "?";
      case Placeholder::dollar:
        return "$" + std::to_string(index++);
      case Placeholder::named:
        break;
    }
    return ":" + std::string(prefix) + std::to_string(index++);
  };
  const std::string column = sql::quote_identifier(column_);
  if (kind_ == Kind::range) {
    sql.text = column + " >= " + placeholder();
    sql.text += " AND " + column + " < " + placeholder();
    sql.params = {start_, end_};
    return sql;
  }
  if (values_.empty()) {
    sql.text = "1 = 0";
    return sql;
  }
  sql.text = column + " IN (";
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (i > 0) sql.text += ", ";
    sql.text += placeholder();
    sql.params.emplace_back(values_[i]);
  }
  sql.text += ')';
  return sql;
}

std::string Filter::to_string() const {
  if (kind_ == Kind::range) {
    return column_ + " >= " + start_.to_string() + " AND " + column_ + " < " + end_.to_string();
  }
  std::string out = column_ + " IN (";
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (i > 0) out += ", ";
    out += values_[i];
  }
  return out + ')';
}

}  // namespace interloper
