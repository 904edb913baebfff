// Private to the data layer: room for large buffers.
#pragma once

#include <cstddef>
#include <string>

namespace interloper::detail {

// Asks the kernel to back the whole 2 MiB pages of [data, data + bytes) with huge pages. A large
// buffer then costs one page fault per 2 MiB instead of one per 4 KiB, which is most of the cost
// of filling fresh memory where each fault traps to a hypervisor. Only buffers of several MiB
// are advised; elsewhere, or where the kernel declines, nothing changes.
void advise_huge_pages(const void* data, std::size_t bytes) noexcept;

// s.reserve(bytes), advised as above.
void reserve_text(std::string& s, std::size_t bytes);

}  // namespace interloper::detail
