#include "interloper/pipeline/yaml_tree.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>
#include <yaml.h>

#include <cstring>
#include <sstream>

namespace interloper::pipeline::yaml {

namespace {

bool is_null_text(std::string_view text) {
  return text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL";
}

struct Parser {
  yaml_parser_t parser{};
  bool initialized = false;
  ~Parser() {
    if (initialized) yaml_parser_delete(&parser);
  }
};

struct Event {
  yaml_event_t event{};
  ~Event() { yaml_event_delete(&event); }
};

}  // namespace

// Appends one record per node, linking each into the collection open above it. The items of
// open collections wait in `pending_`, innermost last; a closed collection moves its own to the
// end of the document's children, in one block.
class Builder {
 public:
  explicit Builder(Document& document)
      : nodes_(document.nodes_), children_(document.children_), text_(document.text_) {}

  std::uint32_t add(Mark mark, Document::Type type) {
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    Document::Data& node = nodes_.emplace_back();
    node.mark = mark;
    node.type = type;
    link(index);
    return index;
  }

  Document::Data& node(std::uint32_t index) { return nodes_[index]; }

  void scalar(Mark mark, std::string_view text, bool quoted) {
    Document::Data& node = nodes_[add(mark, Document::Type::scalar)];
    node.first = static_cast<std::uint32_t>(text_.size());
    node.count = static_cast<std::uint32_t>(text.size());
    node.quoted = quoted;
    text_.append(text);
  }

  void link(std::uint32_t index) {
    if (!open_.empty()) pending_.push_back(index);
  }

  void open(std::uint32_t index) { open_.emplace_back(index, pending_.size()); }

  void close() {
    const auto [index, start] = open_.back();
    open_.pop_back();
    Document::Data& node = nodes_[index];
    node.first = static_cast<std::uint32_t>(children_.size());
    node.count = static_cast<std::uint32_t>(pending_.size() - start);
    children_.insert(children_.end(), pending_.begin() + static_cast<std::ptrdiff_t>(start),
                     pending_.end());
    pending_.resize(start);
  }

  std::uint32_t size() const { return static_cast<std::uint32_t>(nodes_.size()); }

  // The column of the innermost collection still open (0 when none is).
  int innermost_indent() const {
    return open_.empty() ? 0 : nodes_[open_.back().first].mark.column;
  }

  void clear() {
    nodes_.clear();
    children_.clear();
    text_.clear();
    open_.clear();
    pending_.clear();
  }

 private:
  std::vector<Document::Data>& nodes_;
  std::vector<std::uint32_t>& children_;
  std::string& text_;
  std::vector<std::pair<std::uint32_t, std::size_t>> open_;  // (collection, its first pending)
  std::vector<std::uint32_t> pending_;
};

namespace {

constexpr const char* kSecondDocument =
    "a second YAML document ('---') is not supported: a pipeline file holds one document";

// libyaml's events into a Builder. libyaml refuses some text yaml-cpp, which read pipelines
// before it, took or described its own way; read() says so, and the caller reads that text
// with yaml-cpp, so every file means and reports what it always has.
class LibyamlReader {
 public:
  LibyamlReader(const std::string& text, Builder& tree) : text_(text), tree_(tree) {}

  // False when libyaml refuses the text or an alias names no anchor.
  bool read() {
    Parser parser;
    if (yaml_parser_initialize(&parser.parser) == 0) throw std::bad_alloc();
    parser.initialized = true;
    yaml_parser_set_input_string(
        &parser.parser, reinterpret_cast<const unsigned char*>(text_.data()), text_.size());
    return events(parser.parser);
  }

 private:
  struct Anchor {
    std::string name;
    std::uint32_t index;
  };

  bool events(yaml_parser_t& parser) {
    for (;;) {
      Event e;
      if (yaml_parser_parse(&parser, &e.event) == 0) return false;
      const yaml_event_t& event = e.event;
      switch (event.type) {
        case YAML_SCALAR_EVENT:
          scalar(event);
          break;
        case YAML_ALIAS_EVENT:
          if (!alias(event)) return false;
          break;
        case YAML_SEQUENCE_START_EVENT:
          tree_.open(
              add(event.start_mark, Document::Type::sequence, event.data.sequence_start.anchor));
          break;
        case YAML_MAPPING_START_EVENT:
          tree_.open(add(event.start_mark, Document::Type::map, event.data.mapping_start.anchor));
          break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
          tree_.close();
          break;
        case YAML_DOCUMENT_END_EVENT:
          return only_document(parser);
        case YAML_STREAM_END_EVENT:
          return true;
        default:
          break;
      }
    }
  }

  // After the first document: the end of the text, or a second document, which is refused at
  // its start (a pipeline file holds one; the others would be ignored without a word).
  bool only_document(yaml_parser_t& parser) {
    Event e;
    if (yaml_parser_parse(&parser, &e.event) == 0) return false;
    if (e.event.type != YAML_DOCUMENT_START_EVENT) return true;
    throw SyntaxError{mark(e.event.start_mark), kSecondDocument};
  }

  void scalar(const yaml_event_t& event) {
    const auto& data = event.data.scalar;
    const char* tag = reinterpret_cast<const char*>(data.tag);
    const std::string_view value(reinterpret_cast<const char*>(data.value), data.length);
    // A plain scalar without a tag that is empty (a value left out), ~ or null is null.
    if (data.style == YAML_PLAIN_SCALAR_STYLE && (tag == nullptr || std::strcmp(tag, "?") == 0) &&
        is_null_text(value)) {
      const std::uint32_t index = add(event.start_mark, Document::Type::null, data.anchor);
      // A value left out is placed where the text goes on, as it always was.
      if (value.empty() && data.anchor == nullptr && tag == nullptr) {
        tree_.node(index).mark = next_content(tree_.node(index).mark);
      }
      return;
    }
    const Mark at = mark(event.start_mark);
    remember(data.anchor, tree_.size());
    tree_.scalar(
        at, value,
        tag != nullptr ? std::strcmp(tag, "!") == 0 : data.style != YAML_PLAIN_SCALAR_STYLE);
  }

  bool alias(const yaml_event_t& event) {
    const char* name = reinterpret_cast<const char*>(event.data.alias.anchor);
    // The latest definition of a name is the one an alias refers to.
    for (auto it = anchors_.rbegin(); it != anchors_.rend(); ++it) {
      if (it->name == name) {
        tree_.link(it->index);
        return true;
      }
    }
    return false;
  }

  std::uint32_t add(const yaml_mark_t& at, Document::Type type, const yaml_char_t* anchor) {
    remember(anchor, tree_.size());
    return tree_.add(mark(at), type);
  }

  void remember(const yaml_char_t* anchor, std::uint32_t index) {
    if (anchor != nullptr) anchors_.push_back({reinterpret_cast<const char*>(anchor), index});
  }

  // libyaml counts characters along a line; a position here counts bytes, as it always has.
  // Events come in the order of the text, so the start of the current line moves forward only.
  Mark mark(const yaml_mark_t& at) {
    if (at.line < line_) line_ = 0, line_start_ = 0;
    while (line_ < at.line && line_start_ < text_.size()) {
      line_start_ += line_break_after(line_start_);
      ++line_;
    }
    std::size_t p = line_start_;
    for (std::size_t c = 0; c < at.column && p < text_.size(); ++c) p += utf8_width(text_[p]);
    return {static_cast<int>(at.line), static_cast<int>(p - line_start_)};
  }

  // Where the next token starts at or after `from` (on the current line): past blanks, line
  // breaks and comments.
  Mark next_content(Mark from) const {
    std::size_t p = line_start_ + static_cast<std::size_t>(from.column);
    while (p < text_.size()) {
      const char c = text_[p];
      if (c == ' ' || c == '\t') {
        ++p, ++from.column;
      } else if (c == '\n' || c == '\r') {
        p += c == '\r' && p + 1 < text_.size() && text_[p + 1] == '\n' ? 2 : 1;
        ++from.line, from.column = 0;
      } else if (c == '#') {
        while (p < text_.size() && text_[p] != '\n' && text_[p] != '\r') ++p, ++from.column;
      } else {
        return from;
      }
    }
    // The end of the text closes the collections indented deeper than the last line's blanks
    // there, and the rest at the start of that line.
    const int indent = tree_.innermost_indent();
    if (from.column >= indent) from.column = 0;
    return from;
  }

  // The length of the line starting at `p`, with its line break as libyaml reads them:
  // CR LF, CR, LF, NEL, LS or PS.
  std::size_t line_break_after(std::size_t p) const {
    const std::size_t start = p;
    while (p < text_.size()) {
      const auto c = static_cast<unsigned char>(text_[p]);
      if (c == '\n') return p + 1 - start;
      if (c == '\r') return p + (p + 1 < text_.size() && text_[p + 1] == '\n' ? 2 : 1) - start;
      if (c == 0xC2 && p + 1 < text_.size() && static_cast<unsigned char>(text_[p + 1]) == 0x85) {
        return p + 2 - start;
      }
      if (c == 0xE2 && p + 2 < text_.size() && static_cast<unsigned char>(text_[p + 1]) == 0x80 &&
          (static_cast<unsigned char>(text_[p + 2]) & 0xFE) == 0xA8) {
        return p + 3 - start;
      }
      p += utf8_width(text_[p]);
    }
    return p - start;
  }

  static std::size_t utf8_width(char byte) {
    const auto c = static_cast<unsigned char>(byte);
    return c < 0x80             ? 1
           : (c & 0xE0) == 0xC0 ? 2
           : (c & 0xF0) == 0xE0 ? 3
           : (c & 0xF8) == 0xF0 ? 4
                                : 1;
  }

  const std::string& text_;
  Builder& tree_;
  std::size_t line_ = 0;        // the line of the latest position asked for
  std::size_t line_start_ = 0;  // where it starts in text_
  std::vector<Anchor> anchors_;
};

// Where a second document starts, to refuse it there.
class SecondDocument final : public YAML::EventHandler {
 public:
  Mark at;
  void OnDocumentStart(const YAML::Mark& mark) override { at = {mark.line, mark.column}; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// yaml-cpp's events into a Builder, for text libyaml refuses.
class YamlCppReader final : public YAML::EventHandler {
 public:
  explicit YamlCppReader(Builder& tree) : tree_(tree) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(mark, Document::Type::null, anchor);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    tree_.link(anchor < anchors_.size() ? anchors_[anchor] : 0);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    remember(anchor, tree_.size());
    tree_.scalar({mark.line, mark.column}, value, tag == "!");
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    tree_.open(add(mark, Document::Type::sequence, anchor));
  }
  void OnSequenceEnd() override { tree_.close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    tree_.open(add(mark, Document::Type::map, anchor));
  }
  void OnMapEnd() override { tree_.close(); }

  void read(const std::string& text) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    try {
      parser.HandleNextDocument(*this);
      SecondDocument second;
      if (parser.HandleNextDocument(second)) throw SyntaxError{second.at, kSecondDocument};
    } catch (const YAML::Exception& e) {
      throw SyntaxError{{e.mark.line, e.mark.column}, e.msg};
    }
  }

 private:
  std::uint32_t add(const YAML::Mark& mark, Document::Type type, YAML::anchor_t anchor) {
    remember(anchor, tree_.size());
    return tree_.add({mark.line, mark.column}, type);
  }

  void remember(YAML::anchor_t anchor, std::uint32_t index) {
    if (anchor == YAML::NullAnchor) return;
    if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, 0);
    anchors_[anchor] = index;
  }

  Builder& tree_;
  std::vector<std::uint32_t> anchors_;
};

}  // namespace

Document::Document(const std::string& text) {
  // A pipeline spends some 6 bytes of text or more per node; denser text grows the vectors.
  nodes_.reserve(text.size() / 6);
  children_.reserve(text.size() / 6);
  text_.reserve(text.size());
  Builder tree(*this);
  if (!LibyamlReader(text, tree).read()) {
    tree.clear();
    YamlCppReader(tree).read(text);
  }
  empty_ = nodes_.empty();
}

bool Node::is_null() const { return doc_ && doc_->data(index_).type == Document::Type::null; }
bool Node::is_scalar() const { return doc_ && doc_->data(index_).type == Document::Type::scalar; }
bool Node::is_sequence() const {
  return doc_ && doc_->data(index_).type == Document::Type::sequence;
}
bool Node::is_map() const { return doc_ && doc_->data(index_).type == Document::Type::map; }

std::string_view Node::scalar() const {
  return is_scalar() ? doc_->text(doc_->data(index_)) : std::string_view();
}

bool Node::quoted() const { return is_scalar() && doc_->data(index_).quoted; }

Mark Node::mark() const { return doc_ ? doc_->data(index_).mark : Mark(); }

std::size_t Node::size() const {
  if (!doc_) return 0;
  const Document::Data& data = doc_->data(index_);
  if (data.type == Document::Type::map) return data.count / 2;
  return data.type == Document::Type::sequence ? data.count : 0;
}

Node Node::operator[](std::string_view key) const {
  if (!is_map()) return Node();
  const Document::Data& map = doc_->data(index_);
  const std::uint32_t* children = doc_->children(map);
  for (std::uint32_t i = 0; i + 1 < map.count; i += 2) {
    const Document::Data& k = doc_->data(children[i]);
    if (k.type == Document::Type::scalar && doc_->text(k) == key) {
      return Node(doc_, children[i + 1]);
    }
  }
  return Node();
}

Node::Iterator Node::begin() const {
  if (!is_map() && !is_sequence()) return Iterator();
  return Iterator(doc_, doc_->children(doc_->data(index_)), is_map());
}

Node::Iterator Node::end() const {
  if (!is_map() && !is_sequence()) return Iterator();
  const Document::Data& data = doc_->data(index_);
  return Iterator(doc_, doc_->children(data) + data.count, is_map());
}

Node::Item Node::Iterator::operator*() const {
  Item item;
  if (map_) {
    item.first = Node(doc_, position_[0]);
    item.second = Node(doc_, position_[1]);
  } else {
    static_cast<Node&>(item) = Node(doc_, position_[0]);
  }
  return item;
}

}  // namespace interloper::pipeline::yaml
