// Fuzz target: list values as a pipeline file declares them. The input, split at 0x1e, becomes
// the values of one list partitioning, written as double-quoted YAML with every other byte
// escaped.
// Invariants: the file loads or is rejected with a PipelineError at "path:line:col: "; when it
// loads, every value is non-empty, printable and free of "..", and each names exactly itself
// as a window.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "interloper/pipeline.hpp"

namespace {

std::string quoted(const std::string& value) {
  std::string out = "\"";
  for (unsigned char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::string values;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= input.size(); ++i) {
    if (i < input.size() && input[i] != '\x1e') continue;
    values += (values.empty() ? "" : ", ") + quoted(input.substr(start, i - start));
    start = i + 1;
  }
  const std::string text =
      "destination: memory://\nsources:\n  - name: s\n    assets:\n      - name: t\n"
      "        partitioning: {kind: list, column: v, values: [" + values + "]}\n"
      "        command: [/bin/true]\n";
  const std::string path = "/fuzz/pipeline.yaml";
  try {
    interloper::Pipeline pipeline = interloper::Pipeline::parse(text, path);
    const interloper::PartitionConfig* config = pipeline.dag().asset("t").partitioning();
    auto all = config->default_window(interloper::TimePoint(), 30);
    if (!all) std::abort();
    for (const std::string& key : all->keys()) {
      if (key.empty() || key.find("..") != std::string::npos) std::abort();
      for (unsigned char c : key) {
        if (c < 0x20 || c == 0x7f) std::abort();
      }
      if (config->parse_window(key)->keys() != std::vector<std::string>{key}) std::abort();
      if (config->parse_window(key + ".." + key)->keys() != std::vector<std::string>{key}) {
        std::abort();
      }
    }
  } catch (const interloper::PipelineError& e) {
    if (std::string(e.what()).rfind(path + ":", 0) != 0) std::abort();
  }
  return 0;
}
