// The pipeline loader, internal to the pipeline layer. A Loader reads a pipeline file into
// declarations of sources and assets, each kept beside the YAML node it came from so that any
// later mistake is reported at its file:line:col, then builds the DAG from them.
//   fields.cpp        the values a file spells: scalars, URLs, partitionings, schemas
//   asset_reader.cpp  one asset's declaration and its body (command, sql or python)
//   loader.cpp        the file as a whole: sources, graph checks, the DAG and the jobs
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "interloper/dag.hpp"
#include "interloper/pipeline.hpp"
#include "interloper/pipeline/assets.hpp"
#include "interloper/pipeline/yaml_tree.hpp"

namespace interloper {

struct Pipeline::State {
  std::string path;
  std::string directory;
  std::string store_path;
  std::string destination_url;
  std::map<std::string, std::shared_ptr<Destination>> source_destinations;
  std::vector<AssetDefinition> definitions;
  std::unordered_map<std::string, std::size_t> definition_index;  // name -> position
  std::unique_ptr<DAG> dag;
  std::vector<Job> jobs;
};

namespace pipeline {

// The resolver set_python_resolver() installed (empty when none). It outlives every static, so
// that a resolver holding interpreter objects is never destroyed after the interpreter.
const PythonResolver& python_resolver();

// The start of `text` on one line, for messages.
std::string one_line_excerpt(std::string_view text);

// One asset as read from the file, before the DAG is built, beside its AssetDefinition (at the
// same position in Loader::definitions_).
struct AssetSpec {
  yaml::Node name_node;
  yaml::Node deps_node;
  std::vector<yaml::Node> dep_nodes;
  yaml::Node sql_node;
  ComputeFn python;  // what the PythonResolver made of a `python:` body
  std::unique_ptr<PartitionConfig> partitioning;
  std::vector<std::string> argv;  // resolved program path
  bool csv = false;
  double timeout = 0;
  std::uint64_t max_output = pipeline::kDefaultMaxOutput;
  std::shared_ptr<Destination> destination;
  std::string description;
};

struct SourceSpec {
  std::string name;
  std::string description;
  std::shared_ptr<Destination> destination;
  std::vector<std::size_t> assets;  // indexes into Loader::assets
};

// The directory relative paths in the file resolve against: the directory of the file itself,
// after following the symbolic links that lead to it, so a pipeline reached through a link runs
// exactly as it does from where it lives. Directories above the file are left as spelled.
std::string file_directory(const std::string& path);

class Loader {
 public:
  explicit Loader(std::string path) : path_(std::move(path)) { directory_ = file_directory(path_); }

  // Reads the file, or `text` when given.
  std::unique_ptr<Pipeline::State> load(const std::optional<std::string>& text = std::nullopt);

 private:
  [[noreturn]] void fail_at(int line, int column, const std::string& message) const {
    throw PipelineError(fmt::format("{}:{}:{}: {}", path_, line, column, message));
  }
  [[noreturn]] void fail(const yaml::Node& node, const std::string& message) const {
    yaml::Mark mark = node.mark();
    if (mark.line < 0) fail_at(1, 1, message);
    fail_at(mark.line + 1, mark.column + 1, message);
  }

  void check_keys(const yaml::Node& map, std::string_view what,
                  std::initializer_list<std::string_view> allowed) const;
  std::string scalar(const yaml::Node& node, std::string_view what) const;
  bool boolean(const yaml::Node& node, std::string_view what) const;
  std::string description(const yaml::Node& node) const;
  std::uint64_t byte_size(const yaml::Node& node, std::string_view what) const;
  std::string expand_env(const yaml::Node& node, std::string_view what) const;
  std::string resolve_path(const std::string& path) const;
  std::string store_path(const yaml::Node& node) const;
  std::shared_ptr<Destination> destination(const yaml::Node& node);
  std::unique_ptr<PartitionConfig> partitioning(const yaml::Node& node) const;
  Schema declared_schema(const yaml::Node& node, const PartitionConfig* partitioning) const;
  std::int64_t min_rows(const yaml::Node& asset) const;
  nlohmann::ordered_json time_definition(const yaml::Node& node) const;
  nlohmann::ordered_json list_definition(const yaml::Node& node) const;
  void check_list_value(const yaml::Node& node, const std::string& value) const;
  void read_asset(const yaml::Node& node, const SourceSpec& source);
  // One entry of `deps:` (a name, or a map with `asset` and its mapping).
  void read_dependency(const yaml::Node& node, AssetSpec& spec, AssetDefinition& def) const;
  void read_command(const yaml::Node& node, AssetSpec& spec, AssetDefinition& def);
  // One argument of a command as written, its placeholders checked against the asset.
  std::string command_argument(const yaml::Node& arg, const AssetSpec& spec,
                               const AssetDefinition& def) const;
  // Fails when two dependencies would be given in the same input variable.
  void check_input_variables(const AssetSpec& spec, const AssetDefinition& def) const;
  void read_sql(const yaml::Node& node, const SourceSpec& source, AssetSpec& spec,
                AssetDefinition& def);
  void read_python(const yaml::Node& node, AssetSpec& spec, AssetDefinition& def) const;
  // Keys of a body other than `body` that do not apply to it fail.
  void refuse_keys(const yaml::Node& node, std::string_view body,
                   std::initializer_list<std::string_view> keys) const;
  double timeout(const yaml::Node& node, const std::string& asset) const;
  std::vector<SourceSpec> read_sources(const yaml::Node& sources,
                                       const std::shared_ptr<Destination>& default_destination,
                                       Pipeline::State& state);
  ComputeFn compute(AssetSpec& spec, const AssetDefinition& def) const;
  Source declare(const SourceSpec& source);
  void check_graph() const;
  [[noreturn]] void fail_graph(const DagError& e, const yaml::Node& sources) const;

  std::string path_;
  std::string directory_;
  std::map<std::string, std::shared_ptr<Destination>> destinations_by_url_;
  std::vector<AssetSpec> assets_;
  std::vector<AssetDefinition> definitions_;                  // of assets_, position by position
  std::unordered_map<std::string, std::size_t> asset_index_;  // name -> position in assets_
  std::unordered_map<std::string, std::string> programs_;     // command's program -> resolved
  std::unique_ptr<yaml::Document> document_;  // the nodes every declaration points into
};

}  // namespace pipeline
}  // namespace interloper
