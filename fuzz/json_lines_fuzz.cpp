// Fuzz target: the JSON-lines reader.
// Invariants: a table that was read writes out and reads back equal to itself; and each line
// alone is accepted exactly when nlohmann's parser, the reference, reads it as an object of
// scalars whose names are distinct.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "interloper/interloper.hpp"

namespace {

// Whether the reference reads `line` as one object of scalars. A raw NUL byte is valid nowhere
// in JSON, but the reference takes it for the end of its input and ignores what follows.
bool reference_accepts(std::string_view line) {
  if (line.find('\0') != std::string_view::npos) return false;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line.begin(), line.end());
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  if (!j.is_object()) return false;
  for (const auto& [name, value] : j.items()) {
    if (value.is_object() || value.is_array()) return false;
  }
  return true;
}

// Whether a member name occurs twice (the reader refuses it; the reference keeps the last).
bool has_repeated_name(std::string_view line) {
  std::set<std::string> names;
  std::size_t members = 0;
  nlohmann::json::parser_callback_t count = [&](int depth, nlohmann::json::parse_event_t event,
                                                nlohmann::json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key) {
      ++members;
      names.insert(parsed.get<std::string>());
    }
    return true;
  };
  try {
    const nlohmann::json read = nlohmann::json::parse(line.begin(), line.end(), count);
    (void)read;
  } catch (const nlohmann::json::exception&) {
  }
  return names.size() != members;
}

void check_line(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  bool accepted = true;
  try {
    const il::Table table = il::parse_json_lines(line);
    (void)table;
  } catch (const il::DataError&) {
    accepted = false;
  }
  if (accepted != reference_accepts(line) && !has_repeated_name(line)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    check_line(text.substr(start, end - start));
    start = end + 1;
  }
  try {
    const il::Table table = il::parse_json_lines(text);
    const il::Table again = il::parse_json_lines(il::to_json_lines(table), &table.schema());
    if (!(again == table)) std::abort();
  } catch (const il::DataError&) {
  }
  return 0;
}
