#include "interloper/pipeline/yaml_tree.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <sstream>

namespace interloper::pipeline::yaml {

namespace {

const std::string kEmpty;

}  // namespace

// Receives the parser's events and appends one record per node, linking each into the
// collection open above it.
class Builder final : public YAML::EventHandler {
 public:
  explicit Builder(std::vector<Document::Data>& nodes) : nodes_(nodes) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(mark, Document::Type::null, anchor);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    link(anchor < anchors_.size() ? anchors_[anchor] : 0);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    const std::uint32_t index = add(mark, Document::Type::scalar, anchor);
    nodes_[index].text = value;
    nodes_[index].quoted = tag == "!";
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back(add(mark, Document::Type::sequence, anchor));
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open_.push_back(add(mark, Document::Type::map, anchor));
  }
  void OnMapEnd() override { open_.pop_back(); }

 private:
  std::uint32_t add(const YAML::Mark& mark, Document::Type type, YAML::anchor_t anchor) {
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    nodes_.back().mark = {mark.line, mark.column};
    nodes_.back().type = type;
    if (anchor != YAML::NullAnchor) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, 0);
      anchors_[anchor] = index;
    }
    link(index);
    return index;
  }

  void link(std::uint32_t index) {
    if (!open_.empty()) nodes_[open_.back()].children.push_back(index);
  }

  std::vector<Document::Data>& nodes_;
  std::vector<std::uint32_t> open_;  // collections being read, innermost last
  std::vector<std::uint32_t> anchors_;
};

Document::Document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  // A pipeline spends some 8 bytes of text or more per node; denser text grows the vector.
  nodes_.reserve(text.size() / 8);
  Builder builder(nodes_);
  parser.HandleNextDocument(builder);  // the first document only, as YAML::Load reads
  empty_ = nodes_.empty();
}

bool Node::is_null() const { return doc_ && doc_->data(index_).type == Document::Type::null; }
bool Node::is_scalar() const { return doc_ && doc_->data(index_).type == Document::Type::scalar; }
bool Node::is_sequence() const {
  return doc_ && doc_->data(index_).type == Document::Type::sequence;
}
bool Node::is_map() const { return doc_ && doc_->data(index_).type == Document::Type::map; }

const std::string& Node::scalar() const { return is_scalar() ? doc_->data(index_).text : kEmpty; }

bool Node::quoted() const { return is_scalar() && doc_->data(index_).quoted; }

Mark Node::mark() const { return doc_ ? doc_->data(index_).mark : Mark(); }

std::size_t Node::size() const {
  if (!doc_) return 0;
  const Document::Data& data = doc_->data(index_);
  if (data.type == Document::Type::map) return data.children.size() / 2;
  return data.type == Document::Type::sequence ? data.children.size() : 0;
}

Node Node::operator[](std::string_view key) const {
  if (!is_map()) return Node();
  const std::vector<std::uint32_t>& children = doc_->data(index_).children;
  for (std::size_t i = 0; i + 1 < children.size(); i += 2) {
    const Document::Data& k = doc_->data(children[i]);
    if (k.type == Document::Type::scalar && k.text == key) return Node(doc_, children[i + 1]);
  }
  return Node();
}

Node::Iterator Node::begin() const {
  if (!is_map() && !is_sequence()) return Iterator();
  return Iterator(doc_, doc_->data(index_).children.data(), is_map());
}

Node::Iterator Node::end() const {
  if (!is_map() && !is_sequence()) return Iterator();
  const std::vector<std::uint32_t>& children = doc_->data(index_).children;
  return Iterator(doc_, children.data() + children.size(), is_map());
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
