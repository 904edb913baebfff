// The local-file BlobStore: durable puts through posix/durable_file.hpp.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "interloper/blob/stores.hpp"
#include "interloper/error.hpp"
#include "interloper/posix/durable_file.hpp"

namespace interloper::blob {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t write_bytes = std::size_t{1} << 20;  // a writer's buffer, at most

// A writer's temporary file (".NAME.tmp-PID-N", see posix::temp_beside): never a blob.
bool is_temp(const std::string& filename) {
  return !filename.empty() && filename[0] == '.' && filename.find(".tmp-") != std::string::npos;
}

class LocalStore final : public BlobStore {
 public:
  explicit LocalStore(const fs::path& root) : root_(root.lexically_normal()) {
    if (!root_.has_filename() && root_.has_parent_path()) root_ = root_.parent_path();
  }

  std::string locate(std::string_view name) const override { return path(name).string(); }
  std::size_t read_ahead() const override { return 0; }
  bool keeps_metadata() const override { return false; }

  std::optional<std::string> get(std::string_view name) override {
    return posix::read_file(path(name));
  }

  bool get_chunks(std::string_view name,
                  const std::function<void(std::string_view)>& consume) override {
    const fs::path file = path(name);
    errno = 0;
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      // The failed open's errno, not a later exists(), which races with a writer's rename.
      if (errno == ENOENT) return false;
      fail("cannot read", file);
    }
    std::string chunk(std::size_t{1} << 16, '\0');
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      const auto got = static_cast<std::size_t>(in.gcount());
      if (got > 0) consume(std::string_view(chunk).substr(0, got));
    }
    if (in.bad()) fail("cannot read", file);
    return true;
  }

  std::optional<BlobHead> head(std::string_view name) override {
    std::error_code ec;
    const auto size = fs::file_size(path(name), ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory) return std::nullopt;
      fail("cannot read", path(name), ec);
    }
    return BlobHead{static_cast<std::int64_t>(size), {}};
  }

  std::vector<BlobInfo> list(std::string_view prefix) override {
    const auto slash = prefix.rfind('/');
    const std::string folder(slash == std::string_view::npos ? "" : prefix.substr(0, slash + 1));
    std::vector<BlobInfo> out;
    walk(folder, std::string(prefix.substr(folder.size())), out);
    std::sort(out.begin(), out.end(),
              [](const BlobInfo& a, const BlobInfo& b) { return a.name < b.name; });
    return out;
  }

  // One listing of the prefix's folder, then a look at LEAF in each matching folder.
  std::vector<BlobInfo> list_leaves(std::string_view prefix, std::string_view leaf) override {
    const auto slash = prefix.rfind('/');
    const std::string folder(slash == std::string_view::npos ? "" : prefix.substr(0, slash + 1));
    const std::string start(prefix.substr(folder.size()));
    std::vector<BlobInfo> out;
    std::error_code ec;
    fs::directory_iterator it(path(folder), ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory)
        return out;
      fail("cannot list", path(folder), ec);
    }
    for (const auto& entry : it) {
      const std::string filename = entry.path().filename().string();
      if (!filename.starts_with(start) || !entry.is_directory(ec)) continue;
      const auto size = fs::file_size(entry.path() / leaf, ec);
      if (!ec)
        out.push_back(
            {folder + filename + "/" + std::string(leaf), static_cast<std::int64_t>(size), {}});
    }
    std::sort(out.begin(), out.end(),
              [](const BlobInfo& a, const BlobInfo& b) { return a.name < b.name; });
    return out;
  }

  std::unique_ptr<BlobWriter> open_put(std::string_view name) override {
    return std::make_unique<Writer>(path(name));
  }

  bool put_if_absent(std::string_view name, std::string_view bytes, const Metadata&) override {
    const fs::path target = path(name);
    const std::vector<fs::path> created = make_parents(target);
    const fs::path temp = posix::temp_beside(target);
    try {
      posix::write_synced(temp, bytes);
      // link() refuses an existing name: the check and the put are one step.
      const bool linked = ::link(temp.c_str(), target.c_str()) == 0;
      if (!linked && errno != EEXIST) fail("cannot create", target);
      posix::remove_quietly(temp);
      if (linked) sync_dirs(target, created);
      return linked;
    } catch (...) {
      posix::remove_quietly(temp);
      throw;
    }
  }

  void remove(const std::vector<std::string>& names) override {
    std::vector<fs::path> dirs;
    for (const std::string& name : names) {
      const fs::path file = path(name);
      if (::unlink(file.c_str()) != 0 && errno != ENOENT) fail("cannot remove", file);
      dirs.push_back(file.parent_path());
    }
    std::sort(dirs.begin(), dirs.end());
    dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
    for (const fs::path& dir : dirs) prune(dir);
  }

  void tidy(std::string_view folder) override { posix::remove_stale_temps(path(folder)); }

  std::string tag(std::string_view name) override {
    Fnv1a64 hash;
    if (!get_chunks(name, [&](std::string_view chunk) { hash.add(chunk); })) {
      throw DestinationError(fmt::format("'{}': no such file", locate(name)));
    }
    return hash.tag();
  }

 private:
  [[noreturn]] static void fail(std::string_view what, const fs::path& file,
                                std::error_code ec = {}) {
    throw DestinationError(
        fmt::format("{} '{}': {}", what, file.string(), ec ? ec.message() : std::strerror(errno)));
  }

  fs::path path(std::string_view name) const { return root_ / fs::path(std::string(name)); }

  // Adds the files below `folder` (a name ending with '/', or "") whose names start with
  // `start`, recursively.
  void walk(const std::string& folder, const std::string& start, std::vector<BlobInfo>& out) {
    std::error_code ec;
    fs::directory_iterator it(path(folder), ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) return;
      fail("cannot list", path(folder), ec);
    }
    for (const auto& entry : it) {
      const std::string filename = entry.path().filename().string();
      if (!filename.starts_with(start) || is_temp(filename)) continue;
      if (entry.is_directory(ec)) {
        walk(folder + filename + "/", "", out);
      } else if (entry.is_regular_file(ec)) {
        out.push_back({folder + filename, static_cast<std::int64_t>(entry.file_size(ec)), {}});
      }
    }
  }

  // Removes `dir` and its parents up to the root while they are empty, then makes the removals
  // durable.
  void prune(fs::path dir) {
    while (dir.lexically_normal() != root_ && ::rmdir(dir.c_str()) == 0) dir = dir.parent_path();
    if (fs::exists(dir)) posix::fsync_dir(dir);
  }

 public:
  // The directories above `target` that do not exist yet, created.
  static std::vector<fs::path> make_parents(const fs::path& target) {
    std::vector<fs::path> created;
    for (fs::path dir = target.parent_path(); !dir.empty() && !fs::exists(dir);
         dir = dir.parent_path()) {
      created.push_back(dir);
      if (dir == dir.parent_path()) break;
    }
    posix::make_dirs(target.parent_path());
    return created;
  }

  // Makes a rename into `target`'s directory durable, and the directories `created` for it.
  static void sync_dirs(const fs::path& target, const std::vector<fs::path>& created) {
    posix::fsync_dir(target.parent_path());
    for (const fs::path& dir : created) posix::fsync_dir(dir.parent_path());
  }

 private:
  // Bytes go to a temporary file beside the target (through a buffer); commit fsyncs it and
  // renames it over the target.
  class Writer final : public BlobWriter {
   public:
    explicit Writer(fs::path target) : target_(std::move(target)) {}
    ~Writer() override {
      if (temp_) posix::remove_quietly(*temp_);
    }

    void append(std::string_view bytes) override {
      hash_.add(bytes);
      size_ += bytes.size();
      if (buffer_.empty() && bytes.size() >= write_bytes) {
        posix::append_to(temp(), bytes);
        return;
      }
      buffer_ += bytes;
      if (buffer_.size() >= write_bytes) flush();
    }
    std::size_t size() const override { return size_; }

    void prepare() override {
      if (prepared_) return;
      flush();
      if (size_ == 0) posix::append_to(temp(), {});
      posix::fsync_file(temp());
      prepared_ = true;
    }

    std::string commit(const Metadata&) override {
      prepare();
      posix::remove_stale_temps(target_.parent_path());
      posix::rename_over(temp(), target_);
      temp_.reset();
      sync_dirs(target_, created_);
      return hash_.tag();
    }

   private:
    const fs::path& temp() {
      if (!temp_) {
        created_ = make_parents(target_);
        temp_ = posix::temp_beside(target_);
      }
      return *temp_;
    }
    void flush() {
      if (buffer_.empty()) return;
      posix::append_to(temp(), buffer_);
      buffer_.clear();
    }

    fs::path target_;
    std::optional<fs::path> temp_;
    std::vector<fs::path> created_;  // directories made for the target
    std::string buffer_;
    std::size_t size_ = 0;
    bool prepared_ = false;
    Fnv1a64 hash_;
  };

  fs::path root_;
};

}  // namespace

std::unique_ptr<BlobStore> local_store(fs::path root) { return std::make_unique<LocalStore>(root); }

}  // namespace interloper::blob
