// JSON values (arrays, objects, any JSON) as canonical text.
#include <string>

#include "interloper/data/json_lexer.hpp"

namespace interloper {

namespace {

// The handler parse_json gives the reader: only its mistakes are reported.
struct WholeValue {
  std::string_view text;
  [[noreturn]] void malformed(std::size_t column, const std::string& what) {
    const std::string_view shown = text.size() > 60 ? text.substr(0, 60) : text;
    throw DataError("malformed JSON at character " + std::to_string(column) + " of '" +
                    std::string(shown) + (text.size() > 60 ? "...'" : "'") + ": " + what);
  }
  // A whole value never reaches the handlers of a line's members.
  void key(std::string_view) {}
  void null() {}
  void boolean(bool) {}
  void integer(long long) {}
  void real(double) {}
  void digits(std::string_view) {}
  void string(std::string_view) {}
  void json(std::string_view) {}
  [[noreturn]] void not_an_object(const char*) { malformed(0, "not an object"); }
};

}  // namespace

Json parse_json(std::string_view text) {
  WholeValue handler{text};
  Json out;
  detail::JsonLineReader<WholeValue>(text, handler).read_json(out.text);
  return out;
}

}  // namespace interloper
