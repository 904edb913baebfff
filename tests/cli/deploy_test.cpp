// The deployment files in deploy/ cannot meet a cluster here, so they are held to what can be
// checked: the manifests parse, the worker's command line is one the binary accepts and runs
// against a real queue, the example pipeline loads, and the container's runtime packages cover
// every library the binary links.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "destination/storage_fixtures.hpp"
#include "support/cli_process.hpp"
#include "support/postgres.hpp"

namespace fs = std::filesystem;
using interloper::testing::Outcome;
using interloper::testing::run_interloper;

namespace {

const fs::path kDeploy = fs::path(IL_TEST_SOURCE_DIR) / "deploy";

std::vector<YAML::Node> documents(const fs::path& file) { return YAML::LoadAllFromFile(file); }

YAML::Node worker_container() {
  YAML::Node deployment = documents(kDeploy / "kubernetes" / "worker.yaml").at(0);
  return deployment["spec"]["template"]["spec"]["containers"][0];
}

// The worker's arguments with Kubernetes' $(NAME) references replaced from `values`.
std::vector<std::string> worker_args(const std::map<std::string, std::string>& values) {
  std::vector<std::string> out;
  for (const auto& arg : worker_container()["args"]) {
    std::string text = arg.as<std::string>();
    for (const auto& [name, value] : values) {
      text = std::regex_replace(text, std::regex("\\$\\(" + name + "\\)"), value);
    }
    out.push_back(text);
  }
  return out;
}

TEST(Deploy, ManifestsParseAndNameWhatTheyUse) {
  for (const auto& entry : fs::directory_iterator(kDeploy / "kubernetes")) {
    for (const YAML::Node& doc : documents(entry.path())) {
      EXPECT_TRUE(doc["apiVersion"] && doc["kind"] && doc["metadata"]["name"]) << entry.path();
    }
  }
  YAML::Node spec = documents(kDeploy / "kubernetes" / "worker.yaml").at(0)["spec"];
  EXPECT_EQ(spec["selector"]["matchLabels"]["app.kubernetes.io/component"].as<std::string>(),
            spec["template"]["metadata"]["labels"]["app.kubernetes.io/component"].as<std::string>());
  // A stopping worker finishes its tasks: the grace period must be far longer than a lease.
  EXPECT_GE(spec["template"]["spec"]["terminationGracePeriodSeconds"].as<int>(), 300);
  std::set<std::string> env;
  for (const auto& var : worker_container()["env"]) env.insert(var["name"].as<std::string>());
  EXPECT_TRUE(env.count("IL_QUEUE_URL"));
  YAML::Node secret = documents(kDeploy / "kubernetes" / "secret.example.yaml").at(0);
  for (const auto& var : worker_container()["env"]) {
    std::string key = var["valueFrom"]["secretKeyRef"]["key"].as<std::string>();
    EXPECT_TRUE(secret["stringData"][key]) << "the example secret lacks " << key;
  }
}

// The lines a shell command prints.
std::vector<std::string> output_of(const std::string& command) {
  std::vector<std::string> lines;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return lines;
  char line[1024];
  while (std::fgets(line, sizeof line, pipe)) {
    std::string text(line);
    text.erase(text.find_last_not_of("\n") + 1);
    lines.push_back(text);
  }
  ::pclose(pipe);
  return lines;
}

TEST(Deploy, TheDockerfileShipsEveryLibraryTheBinaryLinks) {
  std::ifstream in(kDeploy / "Dockerfile");
  std::stringstream text;
  text << in.rdbuf();
  const std::string dockerfile = text.str();
  EXPECT_NE(dockerfile.find("FROM debian:12 AS build"), std::string::npos);
  EXPECT_NE(dockerfile.find("FROM debian:12-slim"), std::string::npos);
  // Each shared library the binary names, where the loader finds it, and the Debian package
  // that owns that file.
  const std::string binary = interloper::testing::interloper_binary();
  std::set<std::string> needed;
  for (const std::string& line : output_of("readelf -d " + binary)) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex("Shared library: \\[(.*)\\]"))) {
      needed.insert(m[1]);
    }
  }
  ASSERT_FALSE(needed.empty());
  // The base image has libc, libgcc and libstdc++; the sanitizer runtimes belong to test
  // builds, never to the image's release build.
  const std::regex exempt("^(libc6|libgcc-s1|libstdc\\+\\+6|libasan[0-9]+|libubsan[0-9]+)$");
  for (const std::string& line : output_of("ldd " + binary)) {
    std::smatch m;
    if (!std::regex_search(line, m, std::regex("^\\s*(\\S+) => (/\\S+)")) || !needed.count(m[1])) {
      continue;
    }
    const std::string library = m[1];
    // dpkg knows a file by the path its package ships, which after the /usr merge may be the
    // loader's path or the resolved one without /usr.
    const std::string resolved = fs::canonical(m[2].str()).string();
    std::vector<std::string> owner;
    for (const std::string& path : {m[2].str(), resolved, resolved.substr(4)}) {
      owner = output_of("dpkg -S '" + path + "' 2>/dev/null | cut -d: -f1");
      if (!owner.empty()) break;
    }
    if (owner.empty() && m[2].str().rfind("/opt/interloper-duckdb/", 0) == 0) {
      // DuckDB is no Debian package: the runtime image copies it from the build stage.
      EXPECT_NE(dockerfile.find("COPY --from=build " + m[2].str()), std::string::npos)
          << library << " is not copied into the runtime image";
      continue;
    }
    ASSERT_FALSE(owner.empty()) << "no package owns " << m[2];
    const std::string& package = owner.front();
    if (std::regex_match(package, exempt)) continue;
    EXPECT_TRUE(std::regex_search(dockerfile, std::regex("\\s" + package + "(\\s|$)")))
        << library << " comes from " << package << ", which the runtime image does not install";
  }
}

class DeployWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    YAML::Node config = documents(kDeploy / "kubernetes" / "pipeline.example.yaml").at(0);
    std::ofstream(dir_.path() / "pipeline.yaml") << config["data"]["pipeline.yaml"].as<std::string>();
    env_ = {{"IL_WAREHOUSE_URL", "sqlite://" + (dir_.path() / "warehouse.db").string()},
            {"IL_STORE_URL", (dir_.path() / "state.db").string()}};
  }
  // The manifest's path of the pipeline, here in the test's directory.
  std::vector<std::string> local(std::vector<std::string> args) const {
    for (auto& arg : args) {
      if (arg == "/etc/interloper/pipeline.yaml") arg = (dir_.path() / "pipeline.yaml").string();
    }
    return args;
  }

  interloper::testing::TempDir dir_;
  std::vector<std::pair<std::string, std::string>> env_;
};

TEST_F(DeployWorker, TheReadinessProbeChecksTheExamplePipeline) {
  std::vector<std::string> probe;
  for (const auto& arg : worker_container()["readinessProbe"]["exec"]["command"]) {
    probe.push_back(arg.as<std::string>());
  }
  ASSERT_EQ(probe.at(0), "interloper");
  probe.erase(probe.begin());
  Outcome checked = run_interloper(local(probe), dir_.path().string(), env_);
  EXPECT_EQ(checked.code, 0) << checked.err;
}

TEST_F(DeployWorker, TheManifestsWorkerCommandDrainsARealQueue) {
  IL_REQUIRE_POSTGRES(url);
  const std::string queue = url + "?schema=il_deploy_queue";
  Outcome enqueued = run_interloper({"backfill", (dir_.path() / "pipeline.yaml").string(),
                                     "--window", "2026-11-01..2026-11-03", "--queue", queue},
                                    dir_.path().string(), env_);
  ASSERT_EQ(enqueued.code, 0) << enqueued.err;
  std::vector<std::string> args = local(worker_args({{"IL_QUEUE_URL", queue}}));
  ASSERT_EQ(args.at(0), "worker");
  args.push_back("--exit-when-idle");
  Outcome worked = run_interloper(args, dir_.path().string(), env_);
  EXPECT_EQ(worked.code, 0) << worked.err;
  Outcome status = run_interloper({"status", (dir_.path() / "pipeline.yaml").string()},
                                  dir_.path().string(), env_);
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("3"), std::string::npos) << status.out;
}

}  // namespace
