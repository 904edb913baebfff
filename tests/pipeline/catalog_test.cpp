// The catalog of a pipeline or of a DAG in code: descriptions of sources and assets in its JSON
// and text forms.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "interloper/interloper.hpp"

namespace {

using json = nlohmann::json;

il::Table nothing(il::ExecutionContext&) { return {}; }

TEST(Catalog, TextShowsEachSourcesDescriptionOnceAndEachAssetsUnderIt) {
  const il::Pipeline pipeline = il::Pipeline::parse(
      "sources:\n"
      "  - name: shop\n"
      "    description: The web shop's order API\n"
      "    destination: memory://\n"
      "    assets:\n"
      "      - name: orders\n"
      "        description: |\n"
      "          One row per order placed,\n"
      "          by day of placing.\n"
      "        partitioning: {kind: time, column: date}\n"
      "        command: [/bin/true]\n"
      "      - name: refunds\n"
      "        command: [/bin/true]\n"
      "  - name: planning\n"
      "    destination: memory://\n"
      "    assets:\n"
      "      - name: targets\n"
      "        description: Targets per region\n"
      "        command: [/bin/true]\n",
      "/nowhere/pipeline.yaml");
  EXPECT_EQ(il::catalog_text(il::catalog(pipeline.dag(), &pipeline, false)),
            "source shop: The web shop's order API\n"
            "orders  shop  day by date, command\n"
            "  description One row per order placed,\n"
            "              by day of placing.\n"
            "  destination memory://\n"
            "refunds  shop  unpartitioned, command\n"
            "  destination memory://\n"
            "targets  planning  unpartitioned, command\n"
            "  description Targets per region\n"
            "  destination memory://\n");
}

TEST(Catalog, DescriptionsSetInCodeAreInTheCatalog) {
  il::Source ads("ads");
  ads.description("Ad platform exports");
  ads.asset("clicks", nothing).description("Clicks per campaign and day");
  ads.asset("spend", nothing);
  il::Asset loose("loose", nothing);
  loose.description("Outside any source");
  const il::DAG dag({ads}, {loose});
  const json entries = json::parse(il::catalog_json(il::catalog(dag, nullptr, false)));
  ASSERT_EQ(entries.size(), 3u);
  for (const json& entry : entries) {
    const std::string name = entry["name"];
    if (name == "clicks") {
      EXPECT_EQ(entry["description"], "Clicks per campaign and day");
      EXPECT_EQ(entry["source_description"], "Ad platform exports");
    } else if (name == "spend") {
      EXPECT_TRUE(entry["description"].is_null()) << entry;
      EXPECT_EQ(entry["source_description"], "Ad platform exports");
    } else {
      EXPECT_EQ(entry["description"], "Outside any source");
      EXPECT_TRUE(entry["source_description"].is_null()) << entry;
    }
  }
}

// A description is documentation: rewording it leaves stored partitions fresh.
TEST(Catalog, DescriptionIsNotPartOfTheFingerprint) {
  il::Asset plain("clicks", nothing);
  plain.definition("SELECT 1");
  il::Asset described = plain;
  described.description("Clicks per campaign and day");
  EXPECT_EQ(described.description(), "Clicks per campaign and day");
  EXPECT_EQ(il::Asset(described).description(), "Clicks per campaign and day");  // copied
  EXPECT_EQ(plain.definition_fingerprint(), described.definition_fingerprint());
}

}  // namespace
