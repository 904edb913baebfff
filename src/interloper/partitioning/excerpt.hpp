// Internal: how partitioning's error messages quote text a user gave them.
#pragma once

#include <string>
#include <string_view>

namespace interloper::detail {

// `text` on one line, shortened to 60 characters: control characters become spaces.
inline std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out(text.substr(0, kMax));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return text.size() > kMax ? out + "..." : out;
}

}  // namespace interloper::detail
