// Fuzz target: partitioning definitions (catalog JSON).
// Invariant: a definition that loads renders to a definition that loads to the same thing.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "interloper/interloper.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto config = il::PartitionConfig::from_definition(text);
    const auto again = il::PartitionConfig::from_definition(config->to_definition());
    if (again->to_definition() != config->to_definition()) std::abort();
    if (!again->compatible(*config)) std::abort();
  } catch (const il::Error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
