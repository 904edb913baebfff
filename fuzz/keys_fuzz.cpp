// Fuzz target: partition keys and window text.
// Invariant: whatever parses formats back to exactly the text it came from.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "interloper/interloper.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const il::TimePartition partition = il::TimePartition::from_key(text);
    if (partition.key() != text) std::abort();
    if (partition.granularity().parse(text) != partition.value()) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    const il::TimePartitionWindow window = il::TimePartitionWindow::parse(text);
    if (window.size() == 0 || window.end() < window.start()) std::abort();
    if (il::TimePartitionWindow::parse(window.to_string()) != window) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    (void)il::TimePoint::parse(text);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
