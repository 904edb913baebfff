// Names, events, the event bus and result helpers.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "interloper/run.hpp"

namespace interloper {

std::string_view status_name(Status status) {
  switch (status) {
    case Status::pending:
      return "pending";
    case Status::running:
      return "running";
    case Status::succeeded:
      return "succeeded";
    case Status::failed:
      return "failed";
    case Status::canceled:
      return "canceled";
    case Status::skipped:
      return "skipped";
  }
  return "unknown";
}

std::string_view event_type_name(EventType type) {
  switch (type) {
    case EventType::run_started:
      return "run_started";
    case EventType::run_completed:
      return "run_completed";
    case EventType::run_failed:
      return "run_failed";
    case EventType::asset_queued:
      return "asset_queued";
    case EventType::asset_started:
      return "asset_started";
    case EventType::asset_completed:
      return "asset_completed";
    case EventType::asset_failed:
      return "asset_failed";
    case EventType::asset_canceled:
      return "asset_canceled";
    case EventType::destination_read:
      return "destination_read";
    case EventType::destination_write:
      return "destination_write";
    case EventType::log:
      return "log";
  }
  return "unknown";
}

std::string Event::to_json() const {
  // ordered_json keeps the documented field order; invalid UTF-8 in user text is replaced
  // rather than thrown, so an event can always be written.
  nlohmann::ordered_json j;
  j["type"] = event_type_name(type);
  j["time"] = time.to_string();
  j["run_id"] = run_id;
  if (!asset.empty()) j["asset"] = asset;
  j["window"] = window;
  j["rows"] = rows;
  j["seconds"] = seconds;
  if (!message.empty()) j["message"] = message;
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void EventBus::subscribe(Subscriber subscriber) {
  std::lock_guard lock(mutex_);
  subscribers_.push_back(std::move(subscriber));
}

void EventBus::publish(const Event& event) const {
  std::lock_guard lock(mutex_);
  for (const Subscriber& subscriber : subscribers_) subscriber(event);
}

const AssetResult& RunResult::asset(std::string_view name) const {
  for (const AssetResult& result : assets) {
    if (result.asset == name) return result;
  }
  throw RunError(fmt::format("run {}: asset '{}' is not part of the run", run_id, name));
}

std::string RunResult::error_summary() const {
  std::string out;
  for (const AssetResult& result : assets) {
    if (result.status != Status::failed) continue;
    if (!out.empty()) out += '\n';
    out += result.asset + ": " + result.error;
  }
  return out;
}

}  // namespace interloper
