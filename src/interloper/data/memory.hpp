// Private to the data layer: room for large buffers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace interloper::detail {

// Asks the kernel to back the whole 2 MiB pages of [data, data + bytes) with huge pages. A large
// buffer then costs one page fault per 2 MiB instead of one per 4 KiB, which is most of the cost
// of filling fresh memory where each fault traps to a hypervisor. Only buffers of several MiB
// are advised; elsewhere, or where the kernel declines, nothing changes.
void advise_huge_pages(const void* data, std::size_t bytes) noexcept;

// Maps the whole 4 KiB pages of [data, data + bytes) writable at once, for a buffer about to be
// filled: one call instead of a fault per page (each a trap to the hypervisor on a virtual
// machine). Only buffers of a MiB or more; where the kernel declines, the pages fault as usual.
void prefault(const void* data, std::size_t bytes) noexcept;

// s.reserve(bytes), advised as above.
void reserve_text(std::string& s, std::size_t bytes);

// Calls write(out, row) for `n` rows (row k is (*rows)[k], or k without `rows`), with room for
// all of them reserved from the text of the first 64 rather than growing (and copying) the text
// as it lengthens.
template <typename Write>
void append_rows_reserved(std::string& out, std::size_t n, const std::vector<std::size_t>* rows,
                          Write write) {
  auto row_at = [rows](std::size_t k) { return rows ? (*rows)[k] : k; };
  const std::size_t sample = std::min<std::size_t>(n, 64);
  const std::size_t before = out.size();
  for (std::size_t k = 0; k < sample; ++k) write(out, row_at(k));
  if (sample < n) {
    const std::size_t rest = (out.size() - before) / sample * (n - sample);
    reserve_text(out, out.size() + rest + rest / 8);
  }
  for (std::size_t k = sample; k < n; ++k) write(out, row_at(k));
}

}  // namespace interloper::detail
