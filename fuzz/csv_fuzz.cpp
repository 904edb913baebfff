// Fuzz target: the CSV reader.
// Invariant: a table that was read writes out and reads back (with its schema) equal to itself.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "interloper/interloper.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const il::Table table = il::parse_csv(text);
    const il::Table again = il::parse_csv(il::to_csv(table), &table.schema());
    if (!(again == table)) std::abort();
  } catch (const il::DataError&) {
  }
  return 0;
}
