// What every materialization store shares: window status counts, bounded error text and run
// state names.
#include "interloper/store.hpp"

#include <fmt/format.h>

namespace interloper {

namespace {

// The largest n <= at that does not fall inside a UTF-8 sequence of `text`.
std::size_t char_boundary(std::string_view text, std::size_t at) {
  while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}

}  // namespace

void PartitionStates::record_all(const std::vector<PartitionOutcome>& outcomes) {
  for (const PartitionOutcome& o : outcomes) record(o.dataset, o.window.get(), o.record);
}

std::vector<std::optional<Claim>> PartitionClaims::claim_all(
    const std::vector<ClaimRequest>& requests, const Claim& claim, TimePoint now) {
  std::vector<std::optional<Claim>> out;
  out.reserve(requests.size());
  for (const ClaimRequest& r : requests) {
    out.push_back(this->claim(r.datasets, r.window.get(), claim, now));
  }
  return out;
}

void PartitionClaims::release_all(const std::vector<ClaimRequest>& requests,
                                  std::string_view owner) {
  for (const ClaimRequest& r : requests) release(r.datasets, r.window.get(), owner);
}

std::size_t WindowStatus::count(const std::vector<PartitionRange>& ranges) const {
  std::size_t n = 0;
  for (const PartitionRange& range : ranges) n += range.last - range.first + 1;
  return n;
}

namespace {

// The ranges of `defined` that are (or are not) stale against `current`, adjacent ones joined.
std::vector<PartitionRange> by_freshness(const std::vector<DefinedRange>& defined,
                                         std::string_view current, bool stale) {
  std::vector<PartitionRange> out;
  for (const DefinedRange& d : defined) {
    const bool is_stale = !current.empty() && !d.definition.empty() && d.definition != current;
    if (is_stale != stale) continue;
    if (!out.empty() && out.back().last + 1 == d.range.first) {
      out.back().last = d.range.last;
    } else {
      out.push_back(d.range);
    }
  }
  return out;
}

}  // namespace

std::vector<PartitionRange> WindowStatus::stale(std::string_view current) const {
  return by_freshness(definitions, current, true);
}

std::vector<PartitionRange> WindowStatus::fresh(std::string_view current) const {
  return by_freshness(definitions, current, false);
}

std::string bound_error(std::string_view error, std::size_t max) {
  if (error.size() <= max) return std::string(error);
  // A quarter for the beginning (what failed), the rest for the end (the stderr tail).
  constexpr std::size_t kMarker = 32;  // room for "[... N bytes cut ...]"
  const std::size_t room = max > kMarker ? max - kMarker : 0;
  const std::size_t head = char_boundary(error, room / 4);
  std::size_t tail_start = error.size() - (room - room / 4);
  while (tail_start < error.size() &&
         (static_cast<unsigned char>(error[tail_start]) & 0xC0) == 0x80) {
    ++tail_start;
  }
  return fmt::format("{}[... {} bytes cut ...]{}", error.substr(0, head), tail_start - head,
                     error.substr(tail_start));
}

namespace {
// By RunState, in the order of its enumerators.
constexpr std::string_view kRunStateNames[] = {"running", "succeeded", "failed", "interrupted"};
}  // namespace

std::string_view run_state_name(RunState state) {
  return kRunStateNames[static_cast<std::size_t>(state)];
}

RunState run_state_from(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kRunStateNames); ++i) {
    if (name == kRunStateNames[i]) return static_cast<RunState>(i);
  }
  return RunState::running;
}

}  // namespace interloper
