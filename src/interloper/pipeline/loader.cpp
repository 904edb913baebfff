// A pipeline file as a whole: its sources and their assets, the checks only a pipeline can
// make, the DAG built from the declarations, and the jobs.
#include "interloper/pipeline/loader.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "interloper/pipeline/jobs.hpp"

namespace interloper::pipeline {

namespace {

// What a YAML asset computes, as the text its definition fingerprint covers: the command's
// arguments as written and its output format, or the query. Parts are length-prefixed.
std::string definition_text(const AssetDefinition& def) {
  std::string text;
  auto part = [&text](std::string_view piece) {
    text += std::to_string(piece.size());
    text += ':';
    text += piece;
  };
  part(def.body);
  if (def.body == "command") {
    for (const std::string& arg : def.command) part(arg);
    part(def.format);
  } else if (def.body == "python") {
    part(def.python);
  } else {
    part(def.sql);
  }
  return text;
}

}  // namespace

namespace fs = std::filesystem;

// The directory relative paths in the file resolve against: the directory of the file itself,
// after following the symbolic links that lead to it, so a pipeline reached through a link runs
// exactly as it does from where it lives. Directories above the file are left as spelled.
std::string file_directory(const std::string& path) {
  std::error_code ec;
  fs::path file = fs::absolute(path, ec);
  for (int hops = 0; hops < 40 && fs::is_symlink(file, ec); ++hops) {
    fs::path target = fs::read_symlink(file, ec);
    if (ec) break;
    file = target.is_absolute() ? target : file.parent_path() / target;
  }
  std::string directory = file.parent_path().lexically_normal().string();
  if (directory.size() > 1 && directory.back() == '/') directory.pop_back();
  return directory;
}

// What only a pipeline knows about its graph: an sql asset reads its dependencies inside its own
// database. Every other graph check (unknown names, partitioned edges, cycles) is the DAG's;
// load() maps its errors to the declaration at fault.
void Loader::check_graph() const {
  for (std::size_t a = 0; a < assets_.size(); ++a) {
    const AssetDefinition& def = definitions_[a];
    if (def.body != "sql") continue;
    for (std::size_t i = 0; i < def.deps.size(); ++i) {
      const std::string& dep = def.deps[i];
      auto found = asset_index_.find(dep);
      if (found == asset_index_.end()) continue;  // the DAG reports it
      const AssetDefinition& upstream = definitions_[found->second];
      if (upstream.destination_url != def.destination_url) {
        fail(assets_[a].dep_nodes[i],
             fmt::format("sql asset '{}' reads '{}' from {}, but '{}' is stored in {}", def.name,
                         dep, def.destination_url, dep, upstream.destination_url));
      }
    }
  }
}

// Fails at the declaration a DagError is about: the dependency entry when it names one, else
// the asset's name, else the list of sources.
void Loader::fail_graph(const DagError& e, const yaml::Node& sources) const {
  auto found = asset_index_.find(e.asset());
  if (found == asset_index_.end()) fail(sources, e.what());
  const AssetSpec& spec = assets_[found->second];
  const std::vector<std::string>& deps = definitions_[found->second].deps;
  for (std::size_t i = 0; i < deps.size(); ++i) {
    if (deps[i] == e.dependency()) fail(spec.dep_nodes[i], e.what());
  }
  fail(spec.name_node, e.what());
}

std::unique_ptr<Pipeline::State> Loader::load(const std::optional<std::string>& text) {
  std::string contents;
  if (text) {
    contents = *text;
  } else {
    // A file is read in one piece, its size known up front (a pipeline may be megabytes); a
    // pipe or other stream, to its end.
    std::ifstream in(path_, std::ios::binary);
    std::error_code ec;
    const std::uintmax_t size = fs::is_regular_file(path_, ec) ? fs::file_size(path_, ec) : 0;
    if (in && !ec && size > 0) {
      contents.resize(size);
      in.read(contents.data(), static_cast<std::streamsize>(size));
      contents.resize(static_cast<std::size_t>(in.gcount()));
      if (!in.bad()) in.clear();  // a file that shrank meanwhile ends sooner
    } else if (in) {
      std::ostringstream read;
      read << in.rdbuf();
      contents = std::move(read).str();
    }
    if (!in || in.bad()) fail_at(1, 1, "cannot read the pipeline file");
  }
  try {
    document_ = std::make_unique<yaml::Document>(contents);
  } catch (const yaml::SyntaxError& e) {
    fail_at(e.mark.line + 1, e.mark.column + 1, e.message);
  }
  const yaml::Node root = document_->root();
  if (!root || root.is_null()) fail_at(1, 1, "the pipeline file is empty");
  check_keys(root, "pipeline", {"destination", "store", "sources", "jobs"});
  auto state = std::make_unique<Pipeline::State>();
  state->path = path_;
  state->directory = directory_;
  std::shared_ptr<Destination> default_destination = destination(root["destination"]);
  state->destination_url = default_destination->url();
  state->store_path = store_path(root["store"]);

  const yaml::Node sources = root["sources"];
  if (!sources) fail(root, "the pipeline has no 'sources'");
  if (!sources.is_sequence() || sources.size() == 0) {
    fail(sources, "'sources' must be a non-empty list");
  }
  std::vector<SourceSpec> source_specs = read_sources(sources, default_destination, *state);
  check_graph();

  std::vector<Source> dag_sources;
  dag_sources.reserve(source_specs.size());
  for (const auto& source : source_specs) dag_sources.push_back(declare(source));
  try {
    state->dag = std::make_unique<DAG>(std::move(dag_sources));
  } catch (const DagError& e) {
    fail_graph(e, sources);
  } catch (const Error& e) {
    fail(sources, e.what());
  }
  state->jobs = pipeline::read_jobs(root["jobs"], path_, *state->dag);
  state->definitions = std::move(definitions_);
  state->definition_index = std::move(asset_index_);
  return state;
}

// A source of the DAG with the assets read for it.
Source Loader::declare(const SourceSpec& source) {
  Source built(source.name, source.destination);
  built.description(source.description);
  built.reserve(source.assets.size());
  for (std::size_t index : source.assets) {
    AssetSpec& spec = assets_[index];
    const AssetDefinition& def = definitions_[index];
    Asset& asset = built.asset(def.name, compute(spec, def));
    if (spec.partitioning) asset.partitioning(*spec.partitioning);
    asset.deps(def.deps);
    for (std::size_t i = 0; i < def.deps.size(); ++i) {
      if (!def.mappings[i].is_overlap()) asset.dep(def.deps[i], def.mappings[i]);
    }
    asset.enabled(def.enabled);
    if (!def.schema.empty()) asset.schema(def.schema);
    asset.min_rows(def.min_rows);
    asset.definition(definition_text(def));
    if (!def.version.empty()) asset.version(def.version);
    asset.adopt(def.adopt);
    asset.require_upstream(def.require_upstream);
    asset.description(spec.description);
    if (spec.destination != source.destination) asset.destination(spec.destination);
  }
  return built;
}

// The sources in file order, each with its assets read; records each source's destination.
std::vector<SourceSpec> Loader::read_sources(
    const yaml::Node& sources, const std::shared_ptr<Destination>& default_destination,
    Pipeline::State& state) {
  std::vector<SourceSpec> source_specs;
  for (const auto& node : sources) {
    check_keys(node, "source", {"name", "description", "destination", "assets"});
    SourceSpec source;
    if (!node["name"]) fail(node, "source needs a 'name'");
    source.name = scalar(node["name"], "source name");
    if (source.name.empty()) fail(node["name"], "source name must not be empty");
    for (const auto& other : source_specs) {
      if (other.name == source.name) {
        fail(node["name"], fmt::format("duplicate source name '{}'", source.name));
      }
    }
    if (node["description"]) source.description = description(node["description"]);
    source.destination =
        node["destination"] ? destination(node["destination"]) : default_destination;
    const yaml::Node assets = node["assets"];
    if (!assets) fail(node, fmt::format("source '{}' has no 'assets'", source.name));
    if (!assets.is_sequence()) fail(assets, "'assets' must be a list");
    assets_.reserve(assets_.size() + assets.size());
    definitions_.reserve(assets_.size() + assets.size());
    asset_index_.reserve(assets_.size() + assets.size());
    source.assets.reserve(assets.size());
    for (const auto& asset : assets) {
      source.assets.push_back(assets_.size());
      read_asset(asset, source);
    }
    state.source_destinations[source.name] = source.destination;
    source_specs.push_back(std::move(source));
  }
  return source_specs;
}

// The function that computes an asset: its command run without a shell, its sql run in its
// destination with the dependencies it reads there, or what the PythonResolver made. Takes the
// spec's resolved arguments.
ComputeFn Loader::compute(AssetSpec& spec, const AssetDefinition& def) const {
  if (def.body == "python") return std::move(spec.python);
  if (def.body == "command") {
    pipeline::CommandAsset command{.argv = std::move(spec.argv),
                                   .working_directory = directory_,
                                   .csv = spec.csv,
                                   .timeout_seconds = spec.timeout,
                                   .max_output = spec.max_output,
                                   .inputs = def.deps,
                                   .read = {.schema = def.schema}};
    // Only the time partition column turns date-shaped text into dates by default.
    if (spec.partitioning) {
      if (const std::optional<TimeAxis> axis = spec.partitioning->time_axis()) {
        command.read.time_column = axis->column;
      }
    }
    return pipeline::command_compute(std::move(command));
  }
  pipeline::SqlAsset sql{.sql = def.sql,
                         .source = def.source,
                         .deps = {},
                         .destination = spec.destination,
                         .timeout_seconds = spec.timeout,
                         .own_columns = {}};
  for (const auto& dep : def.deps) {
    auto found = asset_index_.find(dep);
    if (found == asset_index_.end()) continue;  // the DAG reports the unknown name
    const AssetDefinition& upstream = definitions_[found->second];
    sql.deps.push_back({upstream.source, upstream.name, nullptr});
  }
  if (spec.partitioning) sql.own_columns.push_back(spec.partitioning->column());
  for (const Field& field : def.schema.fields()) sql.own_columns.push_back(field.name);
  return pipeline::sql_compute(std::move(sql));
}

}  // namespace interloper::pipeline
