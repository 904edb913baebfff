// Fuzz target: sql bodies through the scanner that finds their named parameters and a second
// statement, and through the prefixing of dependency CTEs.
// Invariants: never a crash; every parameter is a non-empty identifier; a second statement
// starts inside the text, after a ';'; prefixing puts the dependency CTEs first, and a query
// without a WITH of its own follows them unchanged.
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "interloper/pipeline/assets.hpp"

namespace ilp = interloper::pipeline;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string sql(reinterpret_cast<const char*>(data), size);
  for (const std::string& name : ilp::named_parameters(sql)) {
    if (name.empty()) std::abort();
    for (char c : name) {
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') std::abort();
    }
  }
  for (const bool postgresql : {false, true}) {
    const std::size_t second = ilp::second_statement(sql, postgresql);
    if (second != std::string::npos) {
      if (second >= sql.size() || sql.find(';') == std::string::npos || sql.find(';') >= second) {
        std::abort();
      }
    }
  }
  // Dependency CTEs as a run builds them: the window's rows under the dependency's name, and
  // every row under NAME__all.
  const std::string windowed =
      "SELECT * FROM \"shop__events\" WHERE \"hour\" >= :bounds_start AND \"hour\" < :bounds_end";
  const std::string whole = "SELECT * FROM \"shop__events\"";
  const std::string prefixed =
      ilp::sql_with_dependencies(sql, {{"events", windowed}, {"events__all", whole}});
  const std::string ctes = "\"events\" AS (" + windowed + "), \"events__all\" AS (" + whole + ")";
  // A query without a WITH of its own follows the CTEs unchanged; one with a WITH gets the
  // CTEs first in its own list.
  if (prefixed != "WITH " + ctes + " " + sql && prefixed.rfind("WITH " + ctes + ", ", 0) != 0 &&
      prefixed.rfind("WITH RECURSIVE " + ctes + ", ", 0) != 0) {
    std::abort();
  }
  return 0;
}
