// A list partitioning that takes any value, the ones ListPartitionConfig refuses included
// ("..", "../x", ".", a NUL byte): storage keys partitions of every kind, and a kind other than
// the list may have such keys, so the destinations' escaping is tested with them. Its windows
// and partitions are the list kind's own (ListPartitionWindow, ListPartition).
#pragma once

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/data.hpp"
#include "interloper/partitioning.hpp"

namespace interloper::testing {

class AnyValueList final : public PartitionConfig {
 public:
  AnyValueList(std::string column, std::vector<std::string> values, bool allow_window = false)
      : PartitionConfig(std::move(column), allow_window),
        values_(std::make_shared<const std::vector<std::string>>(std::move(values))) {}

  std::size_t index_of(std::string_view key) const {
    const auto it = std::find(values_->begin(), values_->end(), key);
    if (it == values_->end()) throw PartitionError("unknown value '" + std::string(key) + "'");
    return static_cast<std::size_t>(it - values_->begin());
  }
  ListPartitionWindow window(std::string_view a, std::string_view b) const {
    return ListPartitionWindow(values_, index_of(a), index_of(b));
  }

  std::string_view kind() const override { return "list"; }
  using PartitionConfig::check;
  void check(const PartitionWindow& window) const override {
    if (window.kind() != "list") throw PartitionError("not a list window");
    if (window.size() > 1 && !allow_window()) throw PartitionError("allow_window is off");
  }
  std::unique_ptr<PartitionWindow> declared_window() const override {
    return std::make_unique<ListPartitionWindow>(values_, 0, values_->size() - 1);
  }
  std::optional<std::int64_t> ordinal(const Partition& partition) const override {
    return static_cast<std::int64_t>(index_of(partition.key()));
  }
  std::optional<std::string> key_holding(const Value& value) const override {
    if (value.is_null()) return std::nullopt;
    std::string key = value.type() == DataType::string ? value.as_string() : value.to_string();
    if (std::find(values_->begin(), values_->end(), key) == values_->end()) return std::nullopt;
    return key;
  }
  bool compatible(const PartitionConfig& other) const override { return &other == this; }
  std::string to_definition() const override {
    nlohmann::ordered_json j;
    j["kind"] = "list";
    j["column"] = column();
    j["values"] = *values_;
    j["allow_window"] = allow_window();
    return j.dump();
  }
  std::unique_ptr<PartitionConfig> clone() const override {
    return std::make_unique<AnyValueList>(*this);
  }

 protected:
  std::unique_ptr<Partition> make_partition(std::string_view key) const override {
    return std::make_unique<ListPartition>((*values_)[index_of(key)]);
  }
  std::unique_ptr<PartitionWindow> make_window(std::string_view a,
                                               std::string_view b) const override {
    return std::make_unique<ListPartitionWindow>(window(a, b));
  }

 private:
  ListPartitionWindow::Values values_;
};

}  // namespace interloper::testing
