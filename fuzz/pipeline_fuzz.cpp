// Fuzz target: pipeline files.
// Invariant: any text either loads or is rejected with a PipelineError whose message starts
// with "path:line:col: " — never another exception, never a crash.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "interloper/pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string path = "/fuzz/pipeline.yaml";
  try {
    interloper::Pipeline pipeline = interloper::Pipeline::parse(text, path);
    (void)pipeline.catalog(false);
  } catch (const interloper::PipelineError& e) {
    if (std::string(e.what()).rfind(path + ":", 0) != 0) std::abort();
  }
  return 0;
}
