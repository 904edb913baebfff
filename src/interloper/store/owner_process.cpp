#include "interloper/store/owner_process.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace interloper::detail {

namespace {

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "";
  for (char& c : host) {
    if (c == ' ') c = '_';
  }
  return host;
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

// The state letter and start time (field 3 and 22 of /proc/PID/stat); "" when no such process.
std::pair<char, std::string> stat_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(in, line)) return {'\0', ""};
  // The command name (field 2) is in parentheses and may hold spaces: read after the last ')'.
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return {'\0', ""};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  if (fields.size() < 20) return {'\0', ""};
  return {fields[0].empty() ? '\0' : fields[0][0], fields[19]};
}

std::vector<std::string> words(std::string_view token) {
  std::vector<std::string> out;
  std::istringstream in{std::string(token)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace

const std::string& this_process() {
  static const std::string token = [] {
    const std::string pid = std::to_string(::getpid());
    const std::string boot = boot_id();
    const std::string start = stat_of(pid).second;
    const std::string host = host_name();
    if (boot.empty() || start.empty() || host.empty()) return std::string();
    return fmt::format("{} {} {} {}", host, pid, boot, start);
  }();
  return token;
}

ProcessState process_state(std::string_view token) {
  const std::vector<std::string> w = words(token);
  if (w.size() != 4 || this_process().empty() || w[0] != host_name() || w[2] != boot_id()) {
    return ProcessState::unknown;
  }
  const auto [state, start] = stat_of(w[1]);
  if (start.empty() || state == 'Z' || state == 'X' || start != w[3]) return ProcessState::dead;
  return ProcessState::running;
}

std::string process_words(std::string_view token) {
  const std::vector<std::string> w = words(token);
  if (w.size() != 4) return "an unknown process";
  return fmt::format("process {} on host {}", w[1], w[0]);
}

}  // namespace interloper::detail
