// Pipeline: a loaded pipeline file, what it declares and the DAG built from it.
#include "interloper/pipeline.hpp"

#include "interloper/pipeline/loader.hpp"

namespace interloper {

using pipeline::Loader;

namespace {
PythonResolver& resolver() {
  static PythonResolver* installed = new PythonResolver();  // never destroyed: see loader.hpp
  return *installed;
}
}  // namespace

void set_python_resolver(PythonResolver r) { resolver() = std::move(r); }

const PythonResolver& pipeline::python_resolver() { return resolver(); }

Pipeline Pipeline::load(const std::string& path) { return Pipeline(Loader(path).load()); }

Pipeline Pipeline::parse(const std::string& yaml, const std::string& path) {
  return Pipeline(Loader(path).load(yaml));
}

Pipeline::Pipeline(std::unique_ptr<State> state) : state_(std::move(state)) {}
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;
Pipeline::~Pipeline() = default;

const DAG& Pipeline::dag() const { return *state_->dag; }
const std::string& Pipeline::path() const { return state_->path; }
const std::string& Pipeline::directory() const { return state_->directory; }
std::string Pipeline::store_path() const { return state_->store_path; }
const std::string& Pipeline::destination_url() const { return state_->destination_url; }

std::shared_ptr<Destination> Pipeline::source_destination(const std::string& source) const {
  auto it = state_->source_destinations.find(source);
  return it == state_->source_destinations.end() ? nullptr : it->second;
}

const std::vector<AssetDefinition>& Pipeline::definitions() const { return state_->definitions; }

const std::vector<Job>& Pipeline::jobs() const { return state_->jobs; }

const AssetDefinition* Pipeline::definition(const std::string& asset) const {
  auto it = state_->definition_index.find(asset);
  return it == state_->definition_index.end() ? nullptr : &state_->definitions[it->second];
}

}  // namespace interloper
