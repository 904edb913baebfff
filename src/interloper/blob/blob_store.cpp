// What every BlobStore shares: the defaults built on a store's own calls, and its tags.
#include "interloper/blob/blob_store.hpp"

#include <fmt/format.h>

namespace interloper::blob {

std::optional<std::string> find_meta(const Metadata& metadata, std::string_view name) {
  for (const auto& [key, value] : metadata) {
    if (key == name) return value;
  }
  return std::nullopt;
}

bool BlobStore::get_chunks(std::string_view name,
                           const std::function<void(std::string_view)>& consume) {
  auto bytes = get(name);
  if (!bytes) return false;
  consume(*bytes);
  return true;
}

std::vector<BlobInfo> BlobStore::list_leaves(std::string_view prefix, std::string_view leaf) {
  std::vector<BlobInfo> out;
  for (BlobInfo& info : list(prefix)) {
    const std::string_view rest = std::string_view(info.name).substr(prefix.size());
    const auto slash = rest.find('/');
    if (slash != std::string_view::npos && rest.substr(slash + 1) == leaf) {
      out.push_back(std::move(info));
    }
  }
  return out;
}

std::string BlobStore::put(std::string_view name, std::string_view bytes,
                           const Metadata& metadata) {
  auto writer = open_put(name);
  writer->append(bytes);
  return writer->commit(metadata);
}

std::string Fnv1a64::tag() const { return fmt::format("fnv1a64:{:016x}", hash_); }

}  // namespace interloper::blob
