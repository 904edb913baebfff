// Shared fixtures for the storage tests: temporary directories and sample rows.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "interloper/data.hpp"

namespace interloper::testing {

// A fresh directory under the system temporary directory, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "il-storage-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
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

 private:
  std::filesystem::path path_;
};

inline std::chrono::year_month_day day(int y, unsigned m, unsigned d) {
  return std::chrono::year{y} / std::chrono::month{m} / std::chrono::day{d};
}

inline std::chrono::sys_seconds at(int y, unsigned m, unsigned d, int hour, int minute = 0) {
  return std::chrono::sys_days(day(y, m, d)) + std::chrono::hours{hour} +
         std::chrono::minutes{minute};
}

}  // namespace interloper::testing
