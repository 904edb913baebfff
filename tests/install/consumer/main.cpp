// Builds against the installed headers and library and prints one partition's key.
#include <interloper/interloper.hpp>

#include <iostream>

int main() {
  std::cout << il::TimePartition::from_key("2026-08").key() << '\n';
  return 0;
}
