// Fuzz target: sql bodies through the scanner that finds their named parameters and a second
// statement, and through the prefixing of dependency CTEs.
// Invariants: never a crash; every parameter is a non-empty identifier; a second statement
// starts inside the text, after a ';'; prefixing keeps the body's text.
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
  const std::size_t second = ilp::second_statement(sql);
  if (second != std::string::npos) {
    if (second >= sql.size() || sql.find(';') == std::string::npos || sql.find(';') >= second) {
      std::abort();
    }
  }
  const std::string prefixed = ilp::sql_with_dependencies(sql, {{"events", "shop__events"}});
  if (prefixed.rfind("WITH ", 0) != 0) std::abort();
  return 0;
}
