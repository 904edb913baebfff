// Who holds a claim, as the store records it beside the claim, so that another run can tell a
// claim whose process still runs from one whose process died (and take the latter over at once
// instead of waiting out its lease).
#pragma once

#include <string>
#include <string_view>

namespace interloper::detail {

// This process: "HOST PID BOOT START", where BOOT is the kernel's boot id and START the
// process's start time in clock ticks since boot, so a pid used again later names another
// process. "" where /proc cannot tell (then claims lapse with their lease only).
const std::string& this_process();

enum class ProcessState { running, dead, unknown };

// Whether the process `token` (this_process() of the claimer) still runs: unknown for "" or a
// process of another host. A zombie counts as dead.
ProcessState process_state(std::string_view token);

// The words of a message on `token`'s process: "process 123 on host h".
std::string process_words(std::string_view token);

}  // namespace interloper::detail
