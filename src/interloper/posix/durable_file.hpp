// Durable files: what a crash or a concurrent reader can rely on when a file is replaced.
//
// A file is replaced by writing a temporary file beside it (".NAME.tmp-PID-N"), fsyncing it,
// renaming it over the old one and fsyncing the directory, so a reader (or a crash) sees the old
// or the new file, never a mix:
//
//   posix::make_dirs(dir);
//   posix::remove_stale_temps(dir);            // left by writers that died before renaming
//   posix::replace_file(dir / "_schema.json", text);
//   posix::fsync_dir(dir);                     // the rename itself survives a crash
//
// Every function throws DestinationError naming the path and the system's reason when the
// operating system refuses; none keeps a descriptor open after it returns. Thread-safe: temporary
// names are unique per process and call.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace interloper::posix {

// Creates `dir` and its missing parents.
void make_dirs(const std::filesystem::path& dir);

// Writes `bytes` to `path` (created or truncated) and fsyncs it; the caller renames it into place.
void write_synced(const std::filesystem::path& path, std::string_view bytes);

// Appends `bytes` to `path` (creating it), opening and closing it each time so that a caller
// appending to thousands of files never holds thousands of descriptors. Not fsynced.
void append_to(const std::filesystem::path& path, std::string_view bytes);

// Flushes `path`'s contents to the disk.
void fsync_file(const std::filesystem::path& path);

// Flushes `dir`'s entries to the disk, so renames and removals in it survive a crash.
void fsync_dir(const std::filesystem::path& dir);

// Renames `from` over `to` atomically (same file system).
void rename_over(const std::filesystem::path& from, const std::filesystem::path& to);

// Removes `path` if it exists, ignoring failures: for temporary files on the way out of an error.
void remove_quietly(const std::filesystem::path& path) noexcept;

// The contents of `path`, or nullopt when it does not exist.
std::optional<std::string> read_file(const std::filesystem::path& path);

// A fresh temporary name beside `target`: ".NAME.tmp-PID-N" in the same directory.
std::filesystem::path temp_beside(const std::filesystem::path& target);

// Removes the temporary files in `dir` left by writers that died before renaming them. A file
// whose writer is this process or any live process may still be renamed, so it stays. A missing
// or unreadable `dir` is not an error: there is nothing to clean.
void remove_stale_temps(const std::filesystem::path& dir);

// Replaces `target` atomically with `bytes` through a synced temporary file beside it, which is
// removed when anything fails. The directory fsync is left to the caller, who may batch it.
void replace_file(const std::filesystem::path& target, std::string_view bytes);

}  // namespace interloper::posix
