// Internal to the pipeline layer: a YAML document as a compact tree, read from libyaml's event
// parser. A tree of objects per node (yaml-cpp's YAML::Node: a reference-counted set, its own
// string and containers, a map key converted at every lookup) cost a pipeline of 10^5 assets
// seconds and hundreds of megabytes, and yaml-cpp's event parser alone most of a second. Here
// all nodes of a document live in one vector, the items of every collection in another, and a
// node is an index, so reading a file costs libyaml's parse and one small record per node.
// Aliases refer to the anchored node, never copy it.
//
// What the tree reads is what the pipeline format has always read (with yaml-cpp, before
// libyaml): a plain scalar that is empty (`key:`), ~ or null is null, placed where the text
// goes on; a quoted or block scalar (or one tagged "!") is always text; positions count bytes
// from the start of the line. Text libyaml refuses is read again by yaml-cpp's event parser, so
// that it is taken, or reported with the message and position it always had (`illegal map
// value`, `end of map not found`...), as before; that costs nothing to text that is YAML.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace interloper::pipeline::yaml {

// Where a node starts, 0-based (line < 0: nowhere, for an undefined node).
struct Mark {
  int line = -1;
  int column = -1;
};

class Document;

// Text that is not YAML: what is wrong, and where.
struct SyntaxError {
  Mark mark;
  std::string message;
};

// A view of one node of a Document; valid while the Document lives. A default Node is
// undefined (a key a map does not have): it converts to false.
class Node {
 public:
  struct Item;
  class Iterator;

  Node() = default;

  explicit operator bool() const { return doc_ != nullptr; }
  bool is_null() const;
  bool is_scalar() const;
  bool is_sequence() const;
  bool is_map() const;
  // The text of a scalar ("" for anything else).
  std::string_view scalar() const;
  // Whether a scalar was written quoted (or with the non-specific tag "!"): always text.
  bool quoted() const;
  Mark mark() const;
  // Items of a sequence, pairs of a map, 0 for anything else.
  std::size_t size() const;
  // The value of the first pair of a map whose key is the scalar `key`; undefined when there is
  // none or this is not a map.
  Node operator[](std::string_view key) const;

  // A sequence iterates over its items (each a Node), a map over its pairs (`first` the key,
  // `second` the value); anything else is empty.
  Iterator begin() const;
  Iterator end() const;

 private:
  friend class Document;
  Node(const Document* doc, std::uint32_t index) : doc_(doc), index_(index) {}

  const Document* doc_ = nullptr;
  std::uint32_t index_ = 0;
};

struct Node::Item : Node {
  Node first;   // maps: the key
  Node second;  // maps: the value
};

class Node::Iterator {
 public:
  Item operator*() const;
  struct Arrow {
    Item item;
    const Item* operator->() const { return &item; }
  };
  Arrow operator->() const { return {**this}; }
  Iterator& operator++() {
    position_ += map_ ? 2 : 1;
    return *this;
  }
  bool operator==(const Iterator& other) const { return position_ == other.position_; }
  bool operator!=(const Iterator& other) const { return position_ != other.position_; }

 private:
  friend class Node;
  Iterator() = default;
  Iterator(const Document* doc, const std::uint32_t* position, bool map)
      : doc_(doc), position_(position), map_(map) {}
  const Document* doc_ = nullptr;
  const std::uint32_t* position_ = nullptr;
  bool map_ = false;
};

// One parsed document. Not copyable: its nodes point into it.
class Document {
 public:
  // Parses the one document of `text`. Throws SyntaxError for text that is not YAML or that
  // holds a second document.
  explicit Document(const std::string& text);
  Document(const Document&) = delete;
  Document& operator=(const Document&) = delete;

  // The document's root; undefined when the text holds no document.
  Node root() const { return empty_ ? Node() : Node(this, 0); }

  enum class Type : std::uint8_t { null, scalar, sequence, map };
  struct Data {
    // Scalars: their text in text_. Collections: their items in children_ (sequences: items;
    // maps: key, value, key...).
    std::uint32_t first = 0;
    std::uint32_t count = 0;
    Mark mark;
    Type type = Type::null;
    bool quoted = false;
  };

 private:
  friend class Node;
  friend class Builder;
  const Data& data(std::uint32_t index) const { return nodes_[index]; }
  const std::uint32_t* children(const Data& data) const { return children_.data() + data.first; }
  std::string_view text(const Data& data) const { return {text_.data() + data.first, data.count}; }

  std::vector<Data> nodes_;
  std::vector<std::uint32_t> children_;
  std::string text_;  // the text of every scalar, one after another
  bool empty_ = true;
};

}  // namespace interloper::pipeline::yaml
