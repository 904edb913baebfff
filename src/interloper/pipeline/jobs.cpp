#include "interloper/pipeline/jobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "interloper/error.hpp"
#include "interloper/partitioning.hpp"

namespace interloper::pipeline {

namespace {

class JobReader {
 public:
  JobReader(const std::string& path, const DAG& dag) : path_(path), dag_(dag) {}

  [[noreturn]] void fail_at(int line, int column, const std::string& message) const {
    throw PipelineError(fmt::format("{}:{}:{}: {}", path_, line, column, message));
  }
  [[noreturn]] void fail(const yaml::Node& node, const std::string& message) const {
    const yaml::Mark mark = node.mark();
    if (mark.line < 0) fail_at(1, 1, message);
    fail_at(mark.line + 1, mark.column + 1, message);
  }

  std::string scalar(const yaml::Node& node, std::string_view what) const {
    if (!node.is_scalar()) fail(node, fmt::format("{} must be a single value", what));
    return std::string(node.scalar());
  }

  std::int64_t integer(const yaml::Node& node, std::string_view what) const {
    const std::string text = scalar(node, what);
    std::size_t used = 0;
    std::int64_t value = 0;
    try {
      value = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != text.size()) {
      fail(node, fmt::format("{} must be a whole number, not '{}'", what, text));
    }
    return value;
  }

  void check_keys(const yaml::Node& map) const {
    static constexpr std::string_view kAllowed[] = {"name",   "cron",        "time_zone",
                                                    "assets", "downstream",  "lookback",
                                                    "offset", "granularity", "mode"};
    if (!map.is_map()) fail(map, "a job must be a mapping");
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = scalar(it->first, "a job key");
      if (std::find(std::begin(kAllowed), std::end(kAllowed), key) == std::end(kAllowed)) {
        fail(it->first, fmt::format("unknown key '{}' in job (expected one of: {})", key,
                                    fmt::join(kAllowed, ", ")));
      }
      if (!seen.insert(key).second) fail(it->first, fmt::format("duplicate key '{}' in job", key));
    }
  }

  CronSchedule cron(const yaml::Node& node) const {
    const std::string text = scalar(node, "cron");
    try {
      return CronSchedule::parse(text);
    } catch (const CronSyntaxError& e) {
      // Point at the field: past the opening quote of a quoted scalar, then into the text.
      const yaml::Mark mark = node.mark();
      const int quote = node.quoted() ? 1 : 0;
      fail_at(mark.line + 1, mark.column + 1 + quote + static_cast<int>(e.position()), e.what());
    }
  }

  // The named assets (or every asset of a named source), with their dependents when asked,
  // in the DAG's order.
  std::vector<std::string> assets(const yaml::Node& node, bool downstream,
                                  const std::string& job) const {
    if (!node) fail_at(line_, column_, fmt::format("job '{}' needs 'assets'", job));
    if (!node.is_sequence() || node.size() == 0) {
      fail(node, "'assets' must be a non-empty list of asset or source names");
    }
    std::set<std::string> chosen;
    for (const auto& item : node) {
      const std::string name = scalar(item, "an asset name");
      if (dag_.find(name) != nullptr) {
        chosen.insert(name);
        continue;
      }
      bool source = false;
      for (const Source& s : dag_.sources()) {
        if (s.name() != name) continue;
        source = true;
        for (const Asset& a : s.assets()) chosen.insert(a.name());
      }
      if (!source)
        fail(item, fmt::format("job '{}' names unknown asset or source '{}'", job, name));
    }
    if (downstream) {
      std::vector<std::string> todo(chosen.begin(), chosen.end());
      while (!todo.empty()) {
        const std::string name = todo.back();
        todo.pop_back();
        for (const Asset* d : dag_.downstream(name)) {
          if (chosen.insert(d->name()).second) todo.push_back(d->name());
        }
      }
    }
    std::vector<std::string> out;
    for (const Asset* a : dag_.order()) {
      if (chosen.count(a->name()) != 0) out.push_back(a->name());
    }
    if (out.empty()) fail(node, fmt::format("job '{}' names no assets", job));
    return out;
  }

  Job job(const yaml::Node& node) {
    check_keys(node);
    line_ = node.mark().line + 1;
    column_ = node.mark().column + 1;
    if (!node["name"]) fail(node, "job needs a 'name'");
    const std::string name = scalar(node["name"], "job name");
    if (name.empty()) fail(node["name"], "job name must not be empty");
    if (!names_.insert(name).second)
      fail(node["name"], fmt::format("duplicate job name '{}'", name));
    if (!node["cron"]) fail(node, fmt::format("job '{}' needs a 'cron' expression", name));
    Job job(name, cron(node["cron"]));
    read_when(node, job);
    bool downstream = false;
    if (const yaml::Node d = node["downstream"]) {
      const std::string text = scalar(d, "downstream");
      if (text != "true" && text != "false") {
        fail(d, fmt::format("downstream must be true or false, not '{}'", text));
      }
      downstream = text == "true";
    }
    job.assets = assets(node["assets"], downstream, name);
    read_granularity(node, job);
    return job;
  }

 private:
  // time_zone, lookback, offset and mode: when a fire runs and over how many partitions.
  void read_when(const yaml::Node& node, Job& job) const {
    if (const yaml::Node zone = node["time_zone"]) {
      job.time_zone = scalar(zone, "time_zone");
      try {
        (void)to_local(TimePoint(), job.time_zone);
      } catch (const std::invalid_argument&) {
        fail(zone, fmt::format("unknown time zone '{}' in job '{}'", job.time_zone, job.name));
      }
    }
    if (const yaml::Node n = node["lookback"]) {
      job.lookback = integer(n, "lookback");
      if (job.lookback < 1)
        fail(n, fmt::format("lookback must be at least 1, got {}", job.lookback));
    }
    if (const yaml::Node n = node["offset"]) {
      job.offset = integer(n, "offset");
      if (job.offset < 0) fail(n, fmt::format("offset must not be negative, got {}", job.offset));
    }
    if (const yaml::Node m = node["mode"]) {
      const std::string text = scalar(m, "mode");
      if (text == "materialize") {
        job.mode = Job::Mode::materialize;
      } else if (text != "backfill") {
        fail(m, fmt::format("mode must be backfill or materialize, not '{}'", text));
      }
    }
  }

  // Every asset is time-partitioned; they share the job's granularity (its own, or theirs when
  // it names none), and no window starts before the latest of their starts.
  void read_granularity(const yaml::Node& node, Job& job) const {
    std::optional<TimeGranularity> shared;
    bool mixed = false;
    std::vector<std::pair<std::string, TimeGranularity>> granularities;
    for (const std::string& asset : job.assets) {
      const PartitionConfig* config = dag_.asset(asset).partitioning();
      const std::optional<TimeAxis> axis = config != nullptr ? config->time_axis() : std::nullopt;
      if (!axis) {
        fail(node["assets"], fmt::format("job '{}' runs asset '{}', which is not time-partitioned",
                                         job.name, asset));
      }
      granularities.emplace_back(asset, axis->granularity);
      if (shared && *shared != axis->granularity) mixed = true;
      shared = axis->granularity;
      if (axis->start) {
        const TimePoint s = axis->granularity.truncate(*axis->start);
        job.start = job.start ? std::max(*job.start, s) : s;
      }
      if (job.mode == Job::Mode::materialize && !config->allow_window() && job.lookback > 1) {
        fail(node["mode"], fmt::format("job '{}' materializes {} partitions at once, but asset "
                                       "'{}' does not allow windows",
                                       job.name, job.lookback, asset));
      }
    }
    const yaml::Node g = node["granularity"];
    if (!g && mixed) {
      std::string list;
      for (const auto& [asset, own] : granularities) {
        list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", asset, own.name());
      }
      fail(node["assets"],
           fmt::format("job '{}' runs assets of different granularities: {}", job.name, list));
    }
    if (!g) {
      job.granularity = *shared;
      return;
    }
    const std::string text = scalar(g, "granularity");
    try {
      job.granularity = TimeGranularity::from_name(text);
    } catch (const std::invalid_argument&) {
      fail(g, fmt::format("unknown granularity '{}' (expected hour, day, week, month, quarter "
                          "or year)",
                          text));
    }
    for (const auto& [asset, own] : granularities) {
      if (own != job.granularity) {
        fail(g, fmt::format("job '{}' runs {} partitions, but asset '{}' is {}-partitioned",
                            job.name, text, asset, own.name()));
      }
    }
  }

  const std::string& path_;
  const DAG& dag_;
  std::set<std::string> names_;
  int line_ = 1;
  int column_ = 1;
};

}  // namespace

std::vector<Job> read_jobs(const yaml::Node& node, const std::string& path, const DAG& dag) {
  std::vector<Job> jobs;
  if (!node || node.is_null()) return jobs;
  JobReader reader(path, dag);
  if (!node.is_sequence()) reader.fail(node, "'jobs' must be a list");
  for (const auto& item : node) jobs.push_back(reader.job(item));
  return jobs;
}

}  // namespace interloper::pipeline
