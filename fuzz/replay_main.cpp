// Runs a fuzz target without libFuzzer: every file of a corpus directory, then a fixed number
// of deterministic mutations of them. Lets ordinary builds (and CI) exercise the harnesses.
//
//   keys_fuzz_replay CORPUS_DIR [ITERATIONS]
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void run(const std::string& input) {
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(input.data()), input.size());
}

std::string mutate(std::string input, std::mt19937& rng) {
  static const std::string interesting = "0123456789-WQT.:Z{}[]\",\n\\ax";
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits; ++i) {
    const auto pick = rng() % 4;
    const std::size_t at = input.empty() ? 0 : rng() % (input.size() + 1);
    const char c = (rng() % 4 == 0) ? static_cast<char>(rng() % 256)
                                    : interesting[rng() % interesting.size()];
    if (pick == 0 || input.empty()) {
      input.insert(input.begin() + static_cast<std::ptrdiff_t>(at), c);
    } else if (pick == 1 && at < input.size()) {
      input.erase(at, 1);
    } else if (pick == 2 && at < input.size()) {
      input[at] = c;
    } else {
      input = input.substr(0, at);
    }
  }
  return input;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR [ITERATIONS]\n";
    return 2;
  }
  const long iterations = argc > 2 ? std::stol(argv[2]) : 20000;
  std::vector<std::string> corpus;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
    std::ifstream in(entry.path(), std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (corpus.empty()) {
    std::cerr << "empty corpus: " << argv[1] << "\n";
    return 2;
  }
  for (const auto& input : corpus) run(input);
  std::mt19937 rng(20261202);
  for (long i = 0; i < iterations; ++i) run(mutate(corpus[rng() % corpus.size()], rng));
  std::cout << corpus.size() << " corpus inputs and " << iterations << " mutations passed\n";
  return 0;
}
