// The default QueryableDestination::relation_of: the table filtered by the window's Filter.
#include <string>
#include <variant>

#include "interloper/dataset.hpp"
#include "interloper/sql/identifier.hpp"

namespace interloper {

QueryableDestination::Relation QueryableDestination::relation_of(const DatasetRef& dataset,
                                                                 const PartitionWindow* window,
                                                                 std::string_view prefix) const {
  Relation relation;
  relation.sql = "SELECT * FROM " + sql::quote_identifier(table_name_of(dataset));
  if (window == nullptr || dataset.partitioning == nullptr) return relation;
  const Filter::Sql where =
      window->filter(dataset.partitioning->column()).to_sql(Filter::Placeholder::named, 1, prefix);
  relation.sql += " WHERE " + where.text;
  int index = 1;
  for (const auto& param : where.params) {
    std::string name = ":" + std::string(prefix) + std::to_string(index++);
    if (const auto* t = std::get_if<TimePoint>(&param)) {
      relation.params.emplace_back(
          std::move(name), Value(Value::Timestamp(std::chrono::seconds(t->epoch_seconds()))));
    } else {
      relation.params.emplace_back(std::move(name), Value(std::get<std::string>(param)));
    }
  }
  return relation;
}

}  // namespace interloper
