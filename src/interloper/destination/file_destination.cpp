// FileDestination: an object destination over the local-file blob store, one file per object
// under the root (ROOT/SOURCE/ASSET/COLUMN=KEY/data.jsonl). A file is replaced the durable way
// (blob/local_store.cpp): a temporary file beside it, fsynced, renamed over the old one, the
// directory fsynced; so a reader (or a crash) sees the old or the new file, never a mix. Keys
// become directory names by escape_key (path_key.cpp).
#include <fmt/format.h>

#include <filesystem>

#include "interloper/blob/stores.hpp"
#include "interloper/destination.hpp"
#include "interloper/destination/object_core.hpp"

namespace interloper {

FileDestination::FileDestination(std::string root, Format format)
    : root_(std::move(root)), format_(format) {
  set_core(std::make_unique<Core>(blob::local_store(root_), format, "file destination"));
}

FileDestination::~FileDestination() = default;

std::string FileDestination::url() const {
  std::string root = std::filesystem::absolute(root_).lexically_normal().string();
  return fmt::format("file://{}?format={}", root, format_ == Format::csv ? "csv" : "jsonl");
}

}  // namespace interloper
