// The SQL state store's tables, written once for every engine: the engine gives their names, the
// id column and the types; stores of earlier versions gain the columns they lack.
#include <fmt/format.h>

#include "interloper/store/sql_store_state.hpp"

namespace interloper::detail {

void SqlStoreState::create_tables() {
  const sql::Dialect& dialect = db().dialect();
  const std::string text = dialect.type_name(DataType::string);
  const std::string integer = dialect.type_name(DataType::int64);
  const std::string keyed(engine->keyed_table());
  const std::string holder = dialect.quote(engine->holder_column());
  db().execute(fmt::format(
      "CREATE TABLE IF NOT EXISTS {failures} (id {id}, asset_name {T} NOT NULL, rows {I} NOT "
      "NULL, run_id {T} NOT NULL, started {T} NOT NULL, finished {T} NOT NULL, error {T} NOT "
      "NULL);"
      "CREATE TABLE IF NOT EXISTS {ranges} (source {T} NOT NULL, asset {T} NOT NULL, scope {T} "
      "NOT NULL, first {I} NOT NULL, last {I} NOT NULL, status {T} NOT NULL, failure {I}, "
      "definition {T} NOT NULL DEFAULT '', PRIMARY KEY (source, asset, scope, first)){keyed};"
      "CREATE INDEX IF NOT EXISTS {ranges_failure} ON {ranges} (failure) WHERE failure IS NOT "
      "NULL;"
      "CREATE TABLE IF NOT EXISTS {keys} (source {T} NOT NULL, asset {T} NOT NULL, scope {T} "
      "NOT NULL, key {T} NOT NULL, status {T} NOT NULL, failure {I}, definition {T} NOT NULL "
      "DEFAULT '', PRIMARY KEY (source, asset, scope, key)){keyed};"
      "CREATE INDEX IF NOT EXISTS {keys_failure} ON {keys} (failure) WHERE failure IS NOT NULL;"
      "CREATE TABLE IF NOT EXISTS {claims} (source {T} NOT NULL, asset {T} NOT NULL, scope {T} "
      "NOT NULL, key {T} NOT NULL, first {I} NOT NULL, last {I} NOT NULL, owner {T} NOT NULL, "
      "expires {I} NOT NULL, {holder} {T} NOT NULL DEFAULT '');"
      "CREATE INDEX IF NOT EXISTS {claims_partition} ON {claims} (source, asset, scope, key, "
      "first);"
      "CREATE INDEX IF NOT EXISTS {claims_owner} ON {claims} (owner);"
      "CREATE TABLE IF NOT EXISTS {runs} (id {id}, run_id {T} NOT NULL UNIQUE, pipeline {T} NOT "
      "NULL, command_line {T} NOT NULL, {window} {T} NOT NULL, started {T} NOT NULL, finished "
      "{T} NOT NULL, state {T} NOT NULL, partitions {I} NOT NULL, succeeded {I} NOT NULL, failed "
      "{I} NOT NULL, skipped {I} NOT NULL, canceled {I} NOT NULL DEFAULT 0);"
      "CREATE INDEX IF NOT EXISTS {runs_pipeline} ON {runs} (pipeline, id);"
      "CREATE TABLE IF NOT EXISTS {last} (source {T} NOT NULL, asset {T} NOT NULL, status {T} "
      "NOT NULL, rows {I} NOT NULL, run_id {T} NOT NULL, started {T} NOT NULL, finished {T} NOT "
      "NULL, error {T} NOT NULL, PRIMARY KEY (source, asset)){keyed};",
      fmt::arg("failures", t("failures")), fmt::arg("ranges", t("partition_ranges")),
      fmt::arg("keys", t("partition_keys")), fmt::arg("claims", t("claims")),
      fmt::arg("runs", t("runs")), fmt::arg("last", t("last_records")),
      fmt::arg("ranges_failure", engine->index("ranges_failure")),
      fmt::arg("keys_failure", engine->index("keys_failure")),
      fmt::arg("claims_partition", engine->index("claims_partition")),
      fmt::arg("claims_owner", engine->index("claims_owner")),
      fmt::arg("runs_pipeline", engine->index("runs_pipeline")),
      fmt::arg("id", engine->id_column()), fmt::arg("T", text), fmt::arg("I", integer),
      fmt::arg("keyed", keyed), fmt::arg("holder", holder),
      fmt::arg("window", dialect.quote("window"))));
  // Stores of earlier versions: definitions were not kept ("" is unknown, never stale), claims
  // named no process or session ("" is unknown: they lapse by their lease), runs counted no
  // canceled tasks (0).
  engine->add_column("partition_ranges", "definition", text + " NOT NULL DEFAULT ''");
  engine->add_column("partition_keys", "definition", text + " NOT NULL DEFAULT ''");
  engine->add_column("claims", engine->holder_column(), text + " NOT NULL DEFAULT ''");
  engine->add_column("runs", "canceled", integer + " NOT NULL DEFAULT 0");
}

}  // namespace interloper::detail
