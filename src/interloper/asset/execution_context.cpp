// The execution context an asset's code runs with, and the logger it writes through.
#include <fmt/format.h>

#include <utility>

#include "interloper/asset.hpp"
#include "interloper/asset/conform.hpp"

namespace interloper {

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::debug:
      return "debug";
    case LogLevel::info:
      return "info";
    case LogLevel::warning:
      return "warning";
    case LogLevel::error:
      return "error";
  }
  return "unknown";
}

// ---- Logger ------------------------------------------------------------------------------

Logger::Logger(Sink sink, std::string asset)
    : sink_(sink ? std::make_shared<const Sink>(std::move(sink)) : nullptr),
      asset_(std::move(asset)) {}

Logger Logger::for_asset(std::string asset) const {
  Logger copy;
  copy.sink_ = sink_;
  copy.asset_ = std::move(asset);
  return copy;
}

void Logger::log(LogLevel level, std::string_view message) const {
  if (sink_) (*sink_)(level, asset_, message);
}

// ---- ExecutionContext ----------------------------------------------------------------------

ExecutionContext::ExecutionContext(std::string asset_name,
                                   std::shared_ptr<const PartitionWindow> window, Logger logger,
                                   Loader loader, Emitter emitter, ReadsOf reads_of)
    : asset_name_(std::move(asset_name)),
      window_(std::move(window)),
      logger_(std::move(logger)),
      loader_(std::move(loader)),
      emitter_(std::move(emitter)),
      reads_of_(std::move(reads_of)) {}

void ExecutionContext::emit(const Table& batch) {
  if (declared_ != nullptr && detail::needs_conform(batch.schema(), *declared_)) {
    Table conformed = batch;
    conformed.conform(*declared_, rows_emitted_ + 1);
    hand_on(conformed);
    return;
  }
  hand_on(batch);
}

void ExecutionContext::hand_on(const Table& batch) {
  if (count_) count_(batch);
  rows_emitted_ += batch.num_rows();
  if (emitter_) {
    emitter_(batch);
  } else if (!emitted_) {
    emitted_ = batch;
  } else {
    emitted_->append_table(batch);
  }
}

Table ExecutionContext::finish(Table rest) {
  if (!emitted_) return rest;
  Table all = std::move(*emitted_);
  emitted_.reset();
  all.append_table(rest);
  return all;
}

const PartitionWindow& ExecutionContext::window() const {
  if (!window_) {
    throw PartitionError(fmt::format("asset '{}': the run has no window", asset_name_));
  }
  return *window_;
}

const Partition& ExecutionContext::partition() const {
  if (!partition_) {
    const PartitionWindow& w = window();
    if (w.size() != 1) {
      throw PartitionError(fmt::format(
          "asset '{}': window {} has {} partitions; partition() needs exactly one (use window())",
          asset_name_, w.to_string(), w.size()));
    }
    partition_ = w.partition_at(0);
  }
  return *partition_;
}

std::vector<std::string> ExecutionContext::keys() const {
  return window_ ? window_->keys() : std::vector<std::string>{};
}

std::optional<TimePartitionWindow> ExecutionContext::time_window() const {
  return window_ ? window_->as_time_window() : std::nullopt;
}

TimePoint ExecutionContext::partition_start() const {
  const Partition& p = partition();
  const std::optional<TimePartitionWindow> time = window_->as_time_window();
  if (!time) {
    throw PartitionError(
        fmt::format("asset '{}': partition_start() needs a time partition, got "
                    "{} partition '{}'",
                    asset_name_, p.kind(), p.key()));
  }
  return time->start();
}

std::chrono::year_month_day ExecutionContext::partition_date() const {
  const Partition& p = partition();
  const std::optional<TimePartitionWindow> time = window_->as_time_window();
  if (!time) {
    throw PartitionError(
        fmt::format("asset '{}': partition_date() needs a day partition, got {} partition '{}'",
                    asset_name_, p.kind(), p.key()));
  }
  if (time->granularity() != TimeGranularity::DAY) {
    throw PartitionError(
        fmt::format("asset '{}': partition_date() needs a day partition, got {} partition '{}'",
                    asset_name_, time->granularity().name(), p.key()));
  }
  return time->start().date();
}

Table ExecutionContext::load(std::string_view upstream_name) const {
  if (!loader_) {
    throw RunError(
        fmt::format("asset '{}': cannot load '{}' outside a DAG run (no upstream loader)",
                    asset_name_, upstream_name));
  }
  return loader_(upstream_name);
}

ExecutionContext::UpstreamReads ExecutionContext::reads_of(std::string_view upstream_name) const {
  if (!reads_of_) {
    throw RunError(
        fmt::format("asset '{}': cannot read '{}' outside a DAG run (no upstream loader)",
                    asset_name_, upstream_name));
  }
  return reads_of_(upstream_name);
}

}  // namespace interloper
