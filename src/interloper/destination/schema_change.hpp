// The one rule every destination applies when a write brings a schema other than the stored one.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/dataset.hpp"
#include "interloper/destination/dataset_name.hpp"
#include "interloper/partitioning.hpp"

namespace interloper::detail {

// The schema a dataset has after a write of rows typed `incoming`. An unpartitioned dataset is
// replaced whole, so it simply takes the new columns and types. A partitioned one keeps the
// partitions the write does not touch, so its columns only grow and its types only widen
// (Schema::unify); a type that cannot widen is a DestinationError saying how to go on. A column
// stored as double (as numeric query results once were) stays double when decimals come: the
// data already there keeps its type, and the decimals are written as their nearest doubles
// (keeping_stored_doubles gives the incoming schema so amended).
inline Schema keeping_stored_doubles(const Schema& stored, const Schema& given) {
  Schema incoming = given;
  for (std::size_t c = 0; c < incoming.size(); ++c) {
    const auto i = stored.find(incoming.field(c).name);
    if (i && stored.field(*i).type == DataType::float64 &&
        incoming.field(c).type == DataType::decimal)
      incoming.set_type(c, DataType::float64);
  }
  return incoming;
}

inline Schema evolve_schema(const DatasetRef& dataset, const std::optional<Schema>& stored,
                            const Schema& given) {
  if (!stored || dataset.partitioning == nullptr) return given;
  const Schema incoming = keeping_stored_doubles(*stored, given);
  try {
    return Schema::unify(*stored, incoming);
  } catch (const DataError&) {
  }
  for (const Field& f : incoming.fields()) {
    auto i = stored->find(f.name);
    if (!i) continue;
    const DataType had = stored->field(*i).type;
    try {
      Schema::widen(had, f.type);
    } catch (const DataError&) {
      throw DestinationError(fmt::format(
          "dataset '{}': column '{}' is stored as {} but this write gives it {}, and a "
          "partitioned dataset keeps one type per column across its partitions; declare the "
          "column's type in the asset's schema (values that do not convert then fail naming "
          "their row), write the new values under a new column name, or drop the stored "
          "dataset with `interloper reset PIPELINE {}` and build it again",
          dataset_name(dataset), f.name, type_name(had), type_text(f), dataset.asset));
    }
  }
  return Schema::unify(*stored, incoming);  // not reached: some column failed to widen
}

// The columns a write stores: `incoming`, and for a partitioned dataset its partition column
// too when `incoming` lacks it, typed null (which widens into whatever type a later row gives
// it). So a write without rows still leaves a table that reads as empty, with the column a
// downstream query selects its partitions by.
inline Schema with_partition_column(const DatasetRef& dataset, const Schema& incoming) {
  if (dataset.partitioning == nullptr || incoming.find(dataset.partitioning->column())) {
    return incoming;
  }
  std::vector<Field> fields = incoming.fields();
  fields.push_back({dataset.partitioning->column(), DataType::null});
  return Schema(std::move(fields));
}

// The type a database column is created with for a partition column that no row has typed yet
// (see with_partition_column): the type its rows will bring, so that a downstream query's
// window filter compares with it: date for time partitions of a day or longer, timestamp for
// hours, text otherwise.
inline DataType untyped_partition_column(const PartitionConfig& partitioning) {
  if (const std::optional<TimeAxis> axis = partitioning.time_axis()) {
    return axis->granularity == TimeGranularity::HOUR ? DataType::timestamp : DataType::date;
  }
  return DataType::string;
}

// The columns `incoming` gives as decimals that `merged` (evolve_schema's result) keeps as
// doubles, as declared doubles: Table::conform with them turns a write's decimals into the
// doubles its dataset stores.
inline Schema decimals_stored_as_doubles(const Schema& merged, const Schema& incoming) {
  std::vector<Field> out;
  for (const Field& f : incoming.fields()) {
    const auto i = merged.find(f.name);
    if (f.type == DataType::decimal && i && merged.field(*i).type == DataType::float64)
      out.push_back({f.name, DataType::float64});
  }
  return Schema(std::move(out));
}

// The columns of `merged` (the schema after a write, see evolve_schema) that the write did not
// produce: a partitioned dataset keeps every column it ever stored, so a column the asset renamed
// or stopped producing lingers there. A write that brought no columns at all (no rows, nothing
// declared) says nothing about them and keeps `previous`. A dataset replaced whole has none, and
// the partition column, which every row holds, is never one.
inline std::vector<std::string> retired_columns(const DatasetRef& dataset, const Schema& merged,
                                                const Schema& incoming,
                                                const std::vector<std::string>& previous) {
  std::vector<std::string> out;
  if (dataset.partitioning == nullptr) return out;
  for (const Field& f : merged.fields()) {
    if (f.name == dataset.partitioning->column()) continue;
    const bool retired = incoming.empty()
                             ? std::find(previous.begin(), previous.end(), f.name) != previous.end()
                             : !incoming.find(f.name);
    if (retired) out.push_back(f.name);
  }
  return out;
}

// The names in a stored list of retired columns (a schema as JSON text). `where` names the list
// in the DestinationError a malformed one gives ("file destination: '/w/shop/events/_retired.json'").
inline std::vector<std::string> retired_names(const std::string& text, const std::string& where) {
  std::vector<std::string> out;
  try {
    const Schema retired = schema_from_json(text);
    for (const Field& f : retired.fields()) out.push_back(f.name);
  } catch (const DataError& e) {
    throw DestinationError(fmt::format("{}: {}", where, e.what()));
  }
  return out;
}

}  // namespace interloper::detail
