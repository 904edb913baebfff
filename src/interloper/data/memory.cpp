// Room for large buffers (see memory.hpp).
#include "interloper/data/memory.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace interloper::detail {

void advise_huge_pages(const void* data, std::size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
  if (bytes < 4 * huge) return;
  const auto at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + huge - 1) & ~(huge - 1);
  const std::uintptr_t end = (at + bytes) & ~(huge - 1);
  // Advice only: a kernel without transparent huge pages refuses it, and that is fine.
  if (begin < end) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

void prefault(const void* data, std::size_t bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
  constexpr std::uintptr_t page = 4096;
  if (bytes < (std::size_t{1} << 20)) return;
  const auto at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + page - 1) & ~(page - 1);
  const std::uintptr_t end = (at + bytes) & ~(page - 1);
  if (begin < end) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)data;
  (void)bytes;
#endif
}

void reserve_text(std::string& s, std::size_t bytes) {
  if (bytes <= s.capacity()) return;
  s.reserve(bytes);
  advise_huge_pages(s.data(), s.capacity());
}

}  // namespace interloper::detail
