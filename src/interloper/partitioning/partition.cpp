// The kind-independent parts of Partition, PartitionWindow and PartitionConfig.
#include <ostream>

#include "interloper/partitioning.hpp"
#include "interloper/partitioning/excerpt.hpp"

namespace interloper {

using detail::excerpt;

std::ostream& operator<<(std::ostream& out, const Partition& partition) {
  return out << partition.key();
}

std::ostream& operator<<(std::ostream& out, const PartitionWindow& window) {
  return out << window.to_string();
}

void PartitionConfig::check(const Partition& partition) const { check(*partition.as_window()); }

std::unique_ptr<PartitionWindow> PartitionConfig::parse_window(std::string_view text) const {
  const std::size_t dots = text.find("..");
  if (dots == std::string_view::npos) return make_window(text, text);
  const std::string_view start = text.substr(0, dots);
  const std::string_view end = text.substr(dots + 2);
  const std::string quoted = "window '" + excerpt(text) + "'";
  if (start.empty() || end.empty()) {
    throw PartitionError(quoted + " lacks its " + (start.empty() ? "start" : "end") +
                         " (write START..END, or one key)");
  }
  try {
    return make_window(start, end);
  } catch (const PartitionError& e) {
    throw PartitionError(quoted + ": " + e.what());
  }
}

std::unique_ptr<PartitionWindow> PartitionConfig::read_window(std::string_view text,
                                                              TextForm form) const {
  if (form == TextForm::key) return make_partition(text)->as_window();
  return parse_window(text);
}

std::unique_ptr<PartitionWindow> PartitionConfig::select_window(std::string_view text,
                                                                TextForm form) const {
  return share(*read_window(text, form));
}

std::optional<TimeAxis> PartitionConfig::time_axis() const { return std::nullopt; }

std::unique_ptr<PartitionWindow> PartitionConfig::declared_window() const { return nullptr; }

std::optional<TimePartitionWindow> PartitionWindow::as_time_window() const { return std::nullopt; }

bool PartitionWindow::same_partitions(const PartitionWindow& other) const {
  return kind() == other.kind() && size() == other.size() && keys() == other.keys();
}

std::unique_ptr<PartitionWindow> PartitionConfig::default_window(TimePoint, std::size_t) const {
  return nullptr;
}

std::optional<std::int64_t> PartitionConfig::ordinal(const Partition&) const {
  return std::nullopt;
}

std::optional<std::string> PartitionConfig::key_holding(const Value&) const { return std::nullopt; }

}  // namespace interloper
