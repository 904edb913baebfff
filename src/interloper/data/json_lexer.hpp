// The reader of one JSON-lines line, internal to the data layer. A line holds one flat object
// of scalars, which is all a table row can be, so the reader is a single forward pass over the
// bytes that hands each key and value to a handler: no token objects, no DOM, and strings
// without escapes copied once. It accepts exactly RFC 8259 for such objects (numbers as the
// grammar spells them, escapes and surrogate pairs checked, UTF-8 well formed, nothing after
// the object but white space) and reports the first mistake with its 1-based column.
//
// The handler provides:
//   void key(std::string_view)        the next member's name (valid until the next call)
//   void null(); void boolean(bool); void integer(long long); void real(double);
//   void digits(std::string_view)     an integer literal beyond int64, exactly as written
//   void string(std::string_view)     a string's decoded contents (valid until the next call)
//   [[noreturn]] void not_an_object(const char* type)   the line holds a scalar or an array
//   [[noreturn]] void nested(const char* type)          a member's value is an object or array
//   [[noreturn]] void malformed(std::size_t column, const std::string& what)
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace interloper::detail {

template <typename Handler>
class JsonLineReader {
 public:
  JsonLineReader(std::string_view line, Handler& handler) : s_(line), h_(handler) {}

  void read() {
    skip_space();
    if (at_end()) malformed("the line ends before a value");
    if (s_[i_] == '[') h_.not_an_object("an array");
    if (s_[i_] != '{') {
      scalar_type();  // fails as malformed unless a whole scalar is there
      h_.not_an_object(type_);
    }
    ++i_;
    object();
    skip_space();
    if (!at_end()) malformed("unexpected text after the object");
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }

  [[noreturn]] void malformed(const std::string& what) { h_.malformed(i_ + 1, what); }

  void skip_space() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n')) {
      ++i_;
    }
  }

  void expect(char c, const char* what) {
    skip_space();
    if (at_end() || s_[i_] != c) malformed(what);
    ++i_;
  }

  void object() {
    skip_space();
    if (!at_end() && s_[i_] == '}') {
      ++i_;
      return;
    }
    while (true) {
      skip_space();
      if (at_end() || s_[i_] != '"') malformed("expected a member name in double quotes");
      ++i_;
      h_.key(string_view_of_string());
      expect(':', "expected ':' after the member name");
      value();
      skip_space();
      if (at_end()) malformed("the object is not closed: expected ',' or '}'");
      if (s_[i_] == ',') {
        ++i_;
        continue;
      }
      if (s_[i_] == '}') {
        ++i_;
        return;
      }
      malformed("expected ',' or '}' after a member");
    }
  }

  // One member's value, handed to the handler.
  void value() {
    skip_space();
    if (at_end()) malformed("expected a value");
    switch (s_[i_]) {
      case '{': h_.nested("object");
      case '[': h_.nested("array");
      case '"':
        ++i_;
        h_.string(string_view_of_string());
        return;
      case 't':
        literal("true");
        h_.boolean(true);
        return;
      case 'f':
        literal("false");
        h_.boolean(false);
        return;
      case 'n':
        literal("null");
        h_.null();
        return;
      default:
        number(true);
    }
  }

  // Parses a scalar at the top level only to name its type (or fail as malformed).
  void scalar_type() {
    switch (s_[i_]) {
      case '"':
        ++i_;
        string_view_of_string();
        type_ = "a string";
        break;
      case 't':
      case 'f':
        literal(s_[i_] == 't' ? "true" : "false");
        type_ = "a boolean";
        break;
      case 'n':
        literal("null");
        type_ = "null";
        break;
      default:
        number(false);
        type_ = "a number";
    }
    skip_space();
    if (!at_end()) malformed("unexpected text after the value");
  }

  void literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) malformed("invalid literal");
    i_ += word.size();
  }

  // A number as the JSON grammar spells it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  void number(bool deliver) {
    const std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (at_end() || !digit(s_[i_])) malformed("invalid value");
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    }
    bool integral = true;
    if (i_ < s_.size() && s_[i_] == '.') {
      integral = false;
      ++i_;
      if (at_end() || !digit(s_[i_])) malformed("expected a digit after the decimal point");
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      integral = false;
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (at_end() || !digit(s_[i_])) malformed("expected a digit in the exponent");
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    }
    const std::string_view text = s_.substr(start, i_ - start);
    if (integral) {
      long long n = 0;
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (error == std::errc() && end == text.data() + text.size()) {
        if (deliver) h_.integer(n);
      } else if (deliver) {
        h_.digits(text);  // beyond int64: kept exactly rather than rounded
      }
      return;
    }
    double d = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (error == std::errc::result_out_of_range) {
      // Underflow reads as the nearest double (0 or a subnormal); overflow has none.
      d = std::strtod(std::string(text).c_str(), nullptr);
      if (!std::isfinite(d)) malformed("number '" + std::string(text) + "' is out of range");
    } else if (error != std::errc() || end != text.data() + text.size()) {
      malformed("invalid number '" + std::string(text) + "'");
    }
    if (deliver) h_.real(d);
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  // The contents of the string whose opening quote was just read, decoded; the view points
  // into the line when the string holds no escape, else into a scratch buffer.
  std::string_view string_view_of_string() {
    const std::size_t start = i_;
    while (i_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        const std::string_view plain = s_.substr(start, i_ - start);
        ++i_;
        return plain;
      }
      if (c == '\\') break;
      if (c < 0x20) malformed("a control character must be escaped in a string");
      if (c < 0x80) {
        ++i_;
      } else {
        utf8_sequence();
      }
    }
    if (at_end()) malformed("the string is not closed");
    scratch_.assign(s_.substr(start, i_ - start));
    while (true) {
      if (at_end()) malformed("the string is not closed");
      const unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return scratch_;
      }
      if (c == '\\') {
        escape();
      } else if (c < 0x20) {
        malformed("a control character must be escaped in a string");
      } else if (c < 0x80) {
        scratch_.push_back(static_cast<char>(c));
        ++i_;
      } else {
        const std::size_t from = i_;
        utf8_sequence();
        scratch_.append(s_.substr(from, i_ - from));
      }
    }
  }

  // One well-formed UTF-8 sequence of two to four bytes (RFC 3629: no overlong forms, no
  // surrogates, nothing past U+10FFFF).
  void utf8_sequence() {
    const auto byte = [&](std::size_t k) {
      return i_ + k < s_.size() ? static_cast<unsigned char>(s_[i_ + k]) : 0;
    };
    const unsigned char b0 = byte(0);
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      length = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      length = 3;
      if (b0 == 0xE0) low = 0xA0;
      if (b0 == 0xED) high = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      length = 4;
      if (b0 == 0xF0) low = 0x90;
      if (b0 == 0xF4) high = 0x8F;
    } else {
      malformed("invalid UTF-8 in a string");
    }
    const unsigned char b1 = byte(1);
    if (b1 < low || b1 > high) malformed("invalid UTF-8 in a string");
    for (std::size_t k = 2; k < length; ++k) {
      const unsigned char b = byte(k);
      if (b < 0x80 || b > 0xBF) malformed("invalid UTF-8 in a string");
    }
    i_ += length;
  }

  // The escape at the backslash, appended to the scratch buffer decoded.
  void escape() {
    ++i_;
    if (at_end()) malformed("the string is not closed");
    const char c = s_[i_++];
    switch (c) {
      case '"': scratch_.push_back('"'); return;
      case '\\': scratch_.push_back('\\'); return;
      case '/': scratch_.push_back('/'); return;
      case 'b': scratch_.push_back('\b'); return;
      case 'f': scratch_.push_back('\f'); return;
      case 'n': scratch_.push_back('\n'); return;
      case 'r': scratch_.push_back('\r'); return;
      case 't': scratch_.push_back('\t'); return;
      case 'u': break;
      default:
        --i_;
        malformed("invalid escape in a string");
    }
    std::uint32_t code = hex4();
    if (code >= 0xDC00 && code <= 0xDFFF) malformed("a low surrogate without a high one");
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (s_.substr(i_, 2) != "\\u") malformed("a high surrogate must be followed by a low one");
      i_ += 2;
      const std::uint32_t low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) malformed("a high surrogate must be followed by a low one");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(code);
  }

  std::uint32_t hex4() {
    std::uint32_t code = 0;
    for (int k = 0; k < 4; ++k, ++i_) {
      if (at_end()) malformed("a \\u escape needs four hex digits");
      const char c = s_[i_];
      code <<= 4;
      if (c >= '0' && c <= '9') {
        code |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        code |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        code |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        malformed("a \\u escape needs four hex digits");
      }
    }
    return code;
  }

  void append_utf8(std::uint32_t code) {
    if (code < 0x80) {
      scratch_.push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      scratch_.push_back(static_cast<char>(0xC0 | (code >> 6)));
      scratch_.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      scratch_.push_back(static_cast<char>(0xE0 | (code >> 12)));
      scratch_.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      scratch_.push_back(static_cast<char>(0xF0 | (code >> 18)));
      scratch_.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      scratch_.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

  std::string_view s_;
  Handler& h_;
  std::size_t i_ = 0;
  std::string scratch_;
  const char* type_ = "";
};

}  // namespace interloper::detail
