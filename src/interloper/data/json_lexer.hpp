// The reader of one JSON-lines line, internal to the data layer. A line holds one object whose
// members are a row's cells, so the reader is a single forward pass over the bytes that hands
// each key and value to a handler: no token objects, no DOM, and strings without escapes copied
// once. A member whose value is an array or an object is handed on as canonical JSON text (see
// Json in data.hpp); read_json reads a whole text as one such value. It accepts exactly RFC 8259 for such objects (numbers as the
// grammar spells them, escapes and surrogate pairs checked, UTF-8 well formed, nothing after
// the object but white space) and reports the first mistake with its 1-based column.
//
// The handler provides:
//   void key(std::string_view)        the next member's name (valid until the next call)
// and may provide, to have names it expects matched without decoding them:
//   std::string_view expected_key()   the name the next member likely has, spelled as its JSON
//                                     text is (no character that needs an escape), or ""
//   void key_as_expected()            the next member's name is that one
//   void null(); void boolean(bool); void integer(long long); void real(double);
//   void digits(std::string_view)     an integer literal beyond int64, exactly as written
//   void string(std::string_view)     a string's decoded contents (valid until the next call)
//   [[noreturn]] void not_an_object(const char* type)   the line holds a scalar or an array
//   void json(std::string_view)       a member's array or object, as canonical JSON text
// and may provide, to have a number's text rather than its value:
//   bool wants_number_text()          whether the current member's number is wanted as text
//   void number_text(std::string_view)  the number exactly as written
//   [[noreturn]] void malformed(std::size_t column, const std::string& what)
#pragma once

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interloper/data/format.hpp"

namespace interloper::detail {

template <typename Handler>
class JsonLineReader {
 public:
  JsonLineReader(std::string_view line, Handler& handler) : s_(line), h_(handler) {}

  // Reads the whole text as one JSON value of any kind, appending its canonical text to `out`.
  void read_json(std::string& out) {
    canonical(out, 0);
    skip_space();
    if (!at_end()) malformed("unexpected text after the value");
  }

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
      if (!expected_key()) h_.key(string_view_of_string());
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

  // Whether the member name whose opening quote was just read is, byte for byte, the one the
  // handler expects (when it says which it expects); it is then read, and the handler told.
  bool expected_key() {
    if constexpr (requires { h_.expected_key(); }) {
      const std::string_view name = h_.expected_key();
      if (name.empty() || s_.size() - i_ <= name.size() || s_[i_ + name.size()] != '"') {
        return false;
      }
      for (std::size_t k = 0; k < name.size(); ++k) {
        if (s_[i_ + k] != name[k]) return false;
      }
      i_ += name.size() + 1;
      h_.key_as_expected();
      return true;
    } else {
      return false;
    }
  }

  // One member's value, handed to the handler.
  void value() {
    skip_space();
    if (at_end()) malformed("expected a value");
    switch (s_[i_]) {
      case '{':
      case '[':
        json_scratch_.clear();
        canonical(json_scratch_, 0);
        h_.json(json_scratch_);
        return;
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
  // Its digits are gathered as they are checked. An integer of up to 18 digits is exact as
  // gathered; a real of up to 19 digits whose significand is at most 2^53 and whose power of
  // ten is at most 22 either way is their product or quotient of two exact doubles, rounded
  // once, which is what from_chars gives. Anything else goes to from_chars.
  void number(bool deliver) {
    const std::size_t start = i_;
    bool as_text = false;
    if constexpr (requires { h_.wants_number_text(); }) as_text = deliver && h_.wants_number_text();
    const bool negative = i_ < s_.size() && s_[i_] == '-';
    if (negative) ++i_;
    if (at_end() || !digit(s_[i_])) malformed("invalid value");
    std::uint64_t significand = 0;  // wraps past 19 digits, and is then not used
    std::size_t digits = 0;
    auto gather = [&] {
      for (; i_ < s_.size() && digit(s_[i_]); ++i_, ++digits) {
        significand = significand * 10 + static_cast<unsigned>(s_[i_] - '0');
      }
    };
    if (s_[i_] == '0') {
      ++i_;
      ++digits;
    } else {
      gather();
    }
    bool integral = true;
    std::size_t fraction_digits = 0;
    if (i_ < s_.size() && s_[i_] == '.') {
      integral = false;
      ++i_;
      if (at_end() || !digit(s_[i_])) malformed("expected a digit after the decimal point");
      const std::size_t before = digits;
      gather();
      fraction_digits = digits - before;
    }
    int exponent = 0;  // capped: any power beyond 22 goes to from_chars anyway
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      integral = false;
      ++i_;
      const bool below_one = i_ < s_.size() && s_[i_] == '-';
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (at_end() || !digit(s_[i_])) malformed("expected a digit in the exponent");
      for (; i_ < s_.size() && digit(s_[i_]); ++i_) {
        if (exponent < 100000) exponent = exponent * 10 + (s_[i_] - '0');
      }
      if (below_one) exponent = -exponent;
    }
    if constexpr (requires { h_.wants_number_text(); }) {
      if (as_text) return h_.number_text(s_.substr(start, i_ - start));
    }
    if (integral && digits <= 18) {
      const auto n = static_cast<long long>(significand);
      if (deliver) h_.integer(negative ? -n : n);
      return;
    }
    if (!integral && digits <= 19 && significand <= (std::uint64_t{1} << 53)) {
      const int power = exponent - static_cast<int>(fraction_digits);
      if (power >= -22 && power <= 22) {
        double d = static_cast<double>(significand);
        d = power < 0 ? d / exact_power_of_ten(-power) : d * exact_power_of_ten(power);
        if (deliver) h_.real(negative ? -d : d);
        return;
      }
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

  // One value at i_, appended to `out` in canonical form. Arrays and objects nest at most 512
  // deep, so that a hostile line cannot exhaust the stack.
  void canonical(std::string& out, int depth) {
    skip_space();
    if (at_end()) malformed("expected a value");
    if (depth > 512) malformed("arrays and objects nest more than 512 deep");
    const char c = s_[i_];
    if (c == '{') return canonical_object(out, depth);
    if (c == '[') {
      ++i_;
      out.push_back('[');
      skip_space();
      if (!at_end() && s_[i_] == ']') {
        ++i_;
        out.push_back(']');
        return;
      }
      for (bool first = true;; first = false) {
        if (!first) out.push_back(',');
        canonical(out, depth + 1);
        skip_space();
        if (at_end()) malformed("the array is not closed: expected ',' or ']'");
        if (s_[i_++] == ']') break;
        if (s_[i_ - 1] != ',') malformed("expected ',' or ']' after an element");
      }
      out.push_back(']');
      return;
    }
    if (c == '"') {
      ++i_;
      return append_json_string(out, string_view_of_string());
    }
    if (c == 't' || c == 'f' || c == 'n') {
      const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      literal(word);
      out += word;
      return;
    }
    const std::size_t start = i_;
    number(false);
    append_canonical_number(out, s_.substr(start, i_ - start));
  }

  // An object, its members sorted as jsonb keeps them: shorter names first, then by bytes; of
  // a repeated name, the last member.
  void canonical_object(std::string& out, int depth) {
    ++i_;
    std::vector<std::pair<std::string, std::string>> members;
    skip_space();
    if (!at_end() && s_[i_] == '}') {
      ++i_;
    } else {
      while (true) {
        skip_space();
        if (at_end() || s_[i_] != '"') malformed("expected a member name in double quotes");
        ++i_;
        auto& member = members.emplace_back(std::string(string_view_of_string()), std::string());
        expect(':', "expected ':' after the member name");
        canonical(member.second, depth + 1);
        skip_space();
        if (at_end()) malformed("the object is not closed: expected ',' or '}'");
        if (s_[i_++] == '}') break;
        if (s_[i_ - 1] != ',') malformed("expected ',' or '}' after a member");
      }
    }
    std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
      return a.first.size() != b.first.size() ? a.first.size() < b.first.size()
                                              : a.first < b.first;
    });
    out.push_back('{');
    bool first = true;
    for (std::size_t k = 0; k < members.size(); ++k) {
      if (k + 1 < members.size() && members[k + 1].first == members[k].first) continue;
      if (!first) out.push_back(',');
      first = false;
      append_json_string(out, members[k].first);
      out.push_back(':');
      out += members[k].second;
    }
    out.push_back('}');
  }

  // A valid JSON number as PostgreSQL's numeric writes it: an exponent spelled out (1.5e2 is
  // 150, 1e-2 is 0.01, the scale kept), a negative zero without its sign. A number too large
  // to spell out is kept as written.
  static void append_canonical_number(std::string& out, std::string_view text) {
    const std::size_t e = text.find_first_of("eE");
    const std::string_view mantissa = text.substr(0, e);
    const bool negative = mantissa[0] == '-';
    const std::string_view unsigned_part = mantissa.substr(negative ? 1 : 0);
    const std::size_t point = unsigned_part.find('.');
    std::string digits(unsigned_part.substr(0, point));
    long fraction = 0;
    if (point != std::string_view::npos) {
      digits += unsigned_part.substr(point + 1);
      fraction = static_cast<long>(unsigned_part.size() - point - 1);
    }
    long exponent = 0;
    if (e != std::string_view::npos) {
      exponent = std::strtol(std::string(text.substr(e + 1)).c_str(), nullptr, 10);
    }
    if (exponent > 1000 || exponent < -1000) {
      out += text;
      return;
    }
    long scale = fraction - exponent;
    if (scale < 0) {
      digits.append(static_cast<std::size_t>(-scale), '0');
      scale = 0;
    }
    if (static_cast<long>(digits.size()) <= scale) {
      digits.insert(0, static_cast<std::size_t>(scale) + 1 - digits.size(), '0');
    }
    const std::size_t whole = digits.size() - static_cast<std::size_t>(scale);
    std::size_t lead = 0;  // zeros before the point, but the last
    while (lead + 1 < whole && digits[lead] == '0') ++lead;
    digits.erase(0, lead);
    if (scale > 0) digits.insert(digits.size() - static_cast<std::size_t>(scale), 1, '.');
    if (negative && digits.find_first_not_of("0.") != std::string::npos) out.push_back('-');
    out += digits;
  }

  // 10^k for k in [0, 22], the powers of ten a double holds exactly.
  static double exact_power_of_ten(int k) {
    static constexpr double powers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    return powers[k];
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  // The contents of the string whose opening quote was just read, decoded; the view points
  // into the line when the string holds no escape, else into a scratch buffer.
  std::string_view string_view_of_string() {
    const std::size_t start = i_;
    // Eight bytes at a time up to the first that needs a look of its own: a quote, a backslash,
    // a control character or a byte of a multibyte sequence.
    while (i_ + 8 <= s_.size()) {
      std::uint64_t word;
      std::memcpy(&word, s_.data() + i_, 8);
      const std::uint64_t special = special_bytes(word);
      if (special != 0) {
        i_ += static_cast<std::size_t>(std::countr_zero(special)) / 8;
        break;
      }
      i_ += 8;
    }
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

  // The high bit of each byte of `word` (read little-endian) that needs a look of its own in a
  // string, exact up to the first such byte (later ones may be marked wrongly). A byte b below
  // k (k <= 0x80) sets its high bit in (b - k) & ~b, and no byte at or above k borrows from the
  // next; quotes and backslashes are the zero bytes of word ^ their pattern; bytes of multibyte
  // sequences have their own high bit set.
  static std::uint64_t special_bytes(std::uint64_t word) {
    static_assert(std::endian::native == std::endian::little);
    constexpr std::uint64_t ones = 0x0101010101010101;
    const std::uint64_t quote = word ^ (ones * '"');
    const std::uint64_t backslash = word ^ (ones * '\\');
    const std::uint64_t special = ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) |
                                  ((word - ones * 0x20) & ~word) | word;
    return special & (ones * 0x80);
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
  std::string json_scratch_;
  const char* type_ = "";
};

}  // namespace interloper::detail
