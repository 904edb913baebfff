// A partition kind defined outside the library, as a user would add one: partitions named
// "shard-N" for N in [0, shards). Tests of every layer use it to show that a registered kind
// works end to end (definitions, pipelines, the command line).
#pragma once

#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "interloper/partitioning.hpp"

namespace il_test {

namespace il = interloper;

class ShardPartitionWindow;

class ShardPartition final : public il::Partition {
 public:
  explicit ShardPartition(int shard) : shard_(shard) {}
  std::string key() const override { return "shard-" + std::to_string(shard_); }
  il::Filter filter(std::string column) const override {
    return il::Filter::membership(std::move(column), {std::to_string(shard_)});
  }
  std::string_view kind() const override { return "shard"; }
  std::unique_ptr<il::PartitionWindow> as_window() const override;
  std::unique_ptr<il::Partition> clone() const override {
    return std::make_unique<ShardPartition>(*this);
  }
  int shard() const { return shard_; }

 private:
  int shard_;
};

class ShardPartitionWindow final : public il::PartitionWindow {
 public:
  ShardPartitionWindow(int first, int last) : first_(first), last_(last) {}
  std::size_t size() const override { return static_cast<std::size_t>(last_ - first_ + 1); }
  std::vector<std::string> keys() const override {
    std::vector<std::string> out;
    for (int i = first_; i <= last_; ++i) out.push_back(ShardPartition(i).key());
    return out;
  }
  std::string to_string() const override {
    return size() == 1 ? keys().front() : keys().front() + ".." + keys().back();
  }
  bool contains(const il::Partition& p) const override {
    if (p.kind() != "shard") return false;
    const int shard = static_cast<const ShardPartition&>(p).shard();
    return first_ <= shard && shard <= last_;
  }
  std::string_view kind() const override { return "shard"; }
  std::unique_ptr<il::Partition> partition_at(std::size_t i) const override {
    if (i >= size()) throw std::out_of_range("shard window index");
    return std::make_unique<ShardPartition>(first_ + static_cast<int>(i));
  }
  il::Filter filter(std::string column) const override {
    std::vector<std::string> values;
    for (int i = first_; i <= last_; ++i) values.push_back(std::to_string(i));
    return il::Filter::membership(std::move(column), std::move(values));
  }
  std::unique_ptr<il::PartitionWindow> clone() const override {
    return std::make_unique<ShardPartitionWindow>(*this);
  }

 private:
  int first_;
  int last_;
};

inline std::unique_ptr<il::PartitionWindow> ShardPartition::as_window() const {
  return std::make_unique<ShardPartitionWindow>(shard_, shard_);
}

class ShardPartitionConfig final : public il::PartitionConfig {
 public:
  ShardPartitionConfig(std::string column, int shards)
      : PartitionConfig(std::move(column), false), shards_(shards) {}
  std::string_view kind() const override { return "shard"; }
  using PartitionConfig::check;
  void check(const il::PartitionWindow& w) const override {
    if (w.kind() != "shard") throw il::PartitionError("not a shard window");
    if (w.size() > 1 && !allow_window()) {
      throw il::PartitionError("window " + w.to_string() + " has several shards");
    }
  }
  bool compatible(const il::PartitionConfig& other) const override {
    return other.kind() == "shard" && other.to_definition() == to_definition();
  }
  std::string to_definition() const override {
    return nlohmann::ordered_json{{"kind", "shard"}, {"column", column()}, {"shards", shards_}}
        .dump();
  }
  std::unique_ptr<il::PartitionConfig> clone() const override {
    return std::make_unique<ShardPartitionConfig>(*this);
  }
  std::unique_ptr<il::PartitionWindow> default_window(il::TimePoint, std::size_t) const override {
    return std::make_unique<ShardPartitionWindow>(0, shards_ - 1);
  }
  int shards() const { return shards_; }

  // The shard a key names; PartitionError for anything but "shard-N" with 0 <= N < shards.
  int shard_of(std::string_view key) const {
    int shard = -1;
    const std::string_view digits =
        key.substr(0, 6) == "shard-" ? key.substr(6) : std::string_view();
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), shard);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
        shard < 0 || shard >= shards_) {
      throw il::PartitionError("unknown shard '" + std::string(key) + "'");
    }
    return shard;
  }

 protected:
  std::unique_ptr<il::Partition> make_partition(std::string_view key) const override {
    return std::make_unique<ShardPartition>(shard_of(key));
  }
  std::unique_ptr<il::PartitionWindow> make_window(std::string_view a,
                                                   std::string_view b) const override {
    const int first = shard_of(a);
    const int last = shard_of(b);
    if (last < first) throw il::PartitionError("shard window runs backwards");
    return std::make_unique<ShardPartitionWindow>(first, last);
  }

 private:
  int shards_;
};

// Registers "shard": {"kind":"shard","column":COLUMN,"shards":N}.
inline void register_shard_kind() {
  il::PartitionConfig::register_kind("shard", [](std::string_view text) {
    const auto json = nlohmann::json::parse(text);
    return std::make_unique<ShardPartitionConfig>(json.at("column").get<std::string>(),
                                                  json.at("shards").get<int>());
  });
}

}  // namespace il_test
