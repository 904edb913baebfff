// Internal: the `jobs:` list of a pipeline file, read and checked against the pipeline's DAG.
#pragma once

#include <string>
#include <vector>

#include "interloper/dag.hpp"
#include "interloper/pipeline/yaml_tree.hpp"
#include "interloper/schedule.hpp"

namespace interloper::pipeline {

// Reads `node` (absent: no jobs). Throws PipelineError "path:line:col: ..." pointing at the bad
// value: a cron field (at its column), an unknown zone, asset or source, a lookback below 1, a
// negative offset, a granularity that the assets do not share, an unknown mode.
std::vector<Job> read_jobs(const yaml::Node& node, const std::string& path, const DAG& dag);

}  // namespace interloper::pipeline
