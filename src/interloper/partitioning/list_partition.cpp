// The list kind: the reference implementation of a partitioning kind.
//
// A kind needs three classes (config, partition, window), a kind name, and a factory registered
// for from_definition (see registry.cpp). Everything else comes from the base classes.
#include <fmt/format.h>

#include <algorithm>

#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"
#include "interloper/partitioning/definition.hpp"
#include "interloper/partitioning/excerpt.hpp"

namespace interloper {

namespace {

// "eu, us, apac", shortened after a few values: for error messages.
std::string brief(const std::vector<std::string>& values) {
  constexpr std::size_t kShown = 5;
  std::string out;
  for (std::size_t i = 0; i < values.size() && i < kShown; ++i) {
    out += (i == 0 ? "" : ", ") + values[i];
  }
  if (values.size() > kShown) out += ", ... (" + std::to_string(values.size()) + " values)";
  return out;
}

}  // namespace

using detail::excerpt;

// ---- ListPartition ----

Filter ListPartition::filter(std::string column) const {
  return Filter::membership(std::move(column), {value_});
}

std::unique_ptr<PartitionWindow> ListPartition::as_window() const {
  auto values = std::make_shared<const std::vector<std::string>>(1, value_);
  return std::make_unique<ListPartitionWindow>(std::move(values), 0, 0);
}

std::unique_ptr<Partition> ListPartition::clone() const {
  return std::make_unique<ListPartition>(*this);
}

// ---- ListPartitionWindow ----

ListPartitionWindow::ListPartitionWindow(Values values, std::size_t first, std::size_t last)
    : values_(std::move(values)), first_(first), last_(last) {
  if (!values_ || last_ >= values_->size() || last_ < first_) {
    throw PartitionError("invalid list window [" + std::to_string(first) + ", " +
                         std::to_string(last) + "] over " +
                         std::to_string(values_ ? values_->size() : 0) + " values");
  }
}

std::vector<std::string> ListPartitionWindow::values() const {
  const auto begin = values_->begin() + static_cast<std::ptrdiff_t>(first_);
  const auto end = values_->begin() + static_cast<std::ptrdiff_t>(last_) + 1;
  return std::vector<std::string>(begin, end);
}

std::string ListPartitionWindow::to_string() const {
  return size() == 1 ? first() : first() + ".." + last();
}

bool ListPartitionWindow::contains(const Partition& partition) const {
  const auto* p = dynamic_cast<const ListPartition*>(&partition);
  if (p == nullptr) return false;
  const auto begin = values_->begin() + static_cast<std::ptrdiff_t>(first_);
  const auto end = values_->begin() + static_cast<std::ptrdiff_t>(last_) + 1;
  return std::find(begin, end, p->value()) != end;
}

std::unique_ptr<Partition> ListPartitionWindow::partition_at(std::size_t index) const {
  if (index >= size()) {
    throw std::out_of_range("partition index " + std::to_string(index) + " is outside window " +
                            to_string() + " of " + std::to_string(size()) + " partitions");
  }
  return std::make_unique<ListPartition>((*values_)[first_ + index]);
}

Filter ListPartitionWindow::filter(std::string column) const {
  return Filter::membership(std::move(column), values());
}

std::unique_ptr<PartitionWindow> ListPartitionWindow::clone() const {
  return std::make_unique<ListPartitionWindow>(*this);
}

// ---- ListPartitionConfig ----

ListPartitionConfig::ListPartitionConfig(std::string column, std::vector<std::string> values,
                                         bool allow_window)
    : PartitionConfig(std::move(column), allow_window) {
  if (values.empty()) {
    throw PartitionError("list partitioning of column '" + this->column() + "' declares no values");
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].empty()) {
      throw PartitionError("list partitioning of column '" + this->column() +
                           "' declares an empty value");
    }
    try {
      check_value(values[i]);
    } catch (const PartitionError& e) {
      throw PartitionError("list partitioning of column '" + this->column() + "': " + e.what());
    }
    if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) !=
        values.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw PartitionError("list partitioning of column '" + this->column() + "' declares value '" +
                           values[i] + "' twice");
    }
  }
  values_ = std::make_shared<const std::vector<std::string>>(std::move(values));
}

void ListPartitionConfig::check_value(std::string_view value) {
  if (value.empty()) throw PartitionError("a list value must not be empty");
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      throw PartitionError(
          fmt::format("list value '{}' holds the control character 0x{:02x} (values are keys: "
                      "printable text only)",
                      excerpt(value), u));
    }
  }
  if (value.find("..") != std::string_view::npos) {
    throw PartitionError(fmt::format(
        "list value '{}' contains '..', which separates the ends of a window (--window a..b)",
        excerpt(value)));
  }
  if (value.front() == '.' || value.back() == '.') {
    throw PartitionError(
        fmt::format("list value '{}' begins or ends with '.', which would blur the '..' between "
                    "the ends of a window (--window a..b)",
                    excerpt(value)));
  }
}

std::size_t ListPartitionConfig::index_of(std::string_view key) const {
  const auto it = std::find(values_->begin(), values_->end(), key);
  if (it == values_->end()) {
    throw PartitionError("unknown list partition '" + std::string(key) +
                         "' (declared: " + brief(*values_) + ")");
  }
  return static_cast<std::size_t>(it - values_->begin());
}

void ListPartitionConfig::check(const PartitionWindow& window) const {
  if (window.kind() != "list") {
    throw PartitionError("window of kind '" + std::string(window.kind()) +
                         "' given to a list-partitioned asset");
  }
  // Any list window (even one built from another list) is servable when its keys are a
  // contiguous run of our declared order.
  const std::vector<std::string> keys = window.keys();
  const std::size_t first = index_of(keys.front());
  if (first + keys.size() > values_->size() ||
      !std::equal(keys.begin(), keys.end(),
                  values_->begin() + static_cast<std::ptrdiff_t>(first))) {
    throw PartitionError("window " + window.to_string() +
                         " is not a contiguous range of the declared values (" + brief(*values_) +
                         ")");
  }
  if (keys.size() > 1 && !allow_window()) {
    throw PartitionError("window " + window.to_string() + " has " + std::to_string(keys.size()) +
                         " partitions but allow_window is off");
  }
}

ListPartition ListPartitionConfig::partition(std::string_view key) const {
  return ListPartition((*values_)[index_of(key)]);
}

ListPartitionWindow ListPartitionConfig::window(std::string_view start_key,
                                                std::string_view end_key) const {
  const std::size_t first = index_of(start_key);
  const std::size_t last = index_of(end_key);
  if (last < first) {
    throw PartitionError("list window " + std::string(start_key) + ".." + std::string(end_key) +
                         " runs backwards (declared order: " + brief(*values_) + ")");
  }
  return ListPartitionWindow(values_, first, last);
}

std::unique_ptr<Partition> ListPartitionConfig::make_partition(std::string_view key) const {
  return std::make_unique<ListPartition>(partition(key));
}

std::unique_ptr<PartitionWindow> ListPartitionConfig::make_window(std::string_view start_key,
                                                                  std::string_view end_key) const {
  return std::make_unique<ListPartitionWindow>(window(start_key, end_key));
}

bool ListPartitionConfig::compatible(const PartitionConfig& other) const {
  const auto* o = dynamic_cast<const ListPartitionConfig*>(&other);
  return o != nullptr && *o->values_ == *values_;
}

std::string ListPartitionConfig::to_definition() const {
  nlohmann::ordered_json j;
  j["kind"] = "list";
  j["column"] = column();
  j["values"] = *values_;
  j["allow_window"] = allow_window();
  return j.dump();
}

std::unique_ptr<PartitionWindow> ListPartitionConfig::default_window(TimePoint, std::size_t) const {
  return declared_window();
}

std::unique_ptr<PartitionWindow> ListPartitionConfig::declared_window() const {
  return std::make_unique<ListPartitionWindow>(values_, 0, values_->size() - 1);
}

std::optional<std::int64_t> ListPartitionConfig::ordinal(const Partition& partition) const {
  return static_cast<std::int64_t>(index_of(partition.key()));
}

std::optional<std::string> ListPartitionConfig::key_holding(const Value& value) const {
  if (value.is_null()) return std::nullopt;
  std::string key = value.type() == DataType::string ? value.as_string() : value.to_string();
  if (std::find(values_->begin(), values_->end(), key) == values_->end()) return std::nullopt;
  return key;
}

std::unique_ptr<PartitionConfig> ListPartitionConfig::clone() const {
  return std::make_unique<ListPartitionConfig>(*this);
}

namespace detail {

std::unique_ptr<PartitionConfig> list_config_from_definition(std::string_view json) {
  const auto j = parse_definition(json, "list", {"column", "values", "allow_window"});
  bool ok = j["column"].is_string() && j["values"].is_array() && j["allow_window"].is_boolean();
  if (ok) {
    for (const auto& v : j["values"]) ok = ok && v.is_string();
  }
  if (!ok) {
    throw PartitionError("malformed partition definition " + quote_definition(json) +
                         ": expected string column, array of string values and boolean "
                         "allow_window");
  }
  return std::make_unique<ListPartitionConfig>(j["column"].get<std::string>(),
                                               j["values"].get<std::vector<std::string>>(),
                                               j["allow_window"].get<bool>());
}

}  // namespace detail

}  // namespace interloper
