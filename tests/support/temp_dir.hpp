// A fresh directory under the system temporary directory for one test, removed with it.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace interloper::testing {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "il-test") {
    std::string pattern =
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string operator/(std::string_view name) const { return (path_ / name).string(); }

  // Writes `text` to `name` below the directory, creating its parents; `executable` makes it
  // a program the tests can run.
  std::filesystem::path write(const std::string& name, const std::string& text,
                              bool executable = false) const {
    std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    if (executable) {
      std::filesystem::permissions(file, std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add);
    }
    return file;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace interloper::testing
