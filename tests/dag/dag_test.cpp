// DAG: wiring checks, topological order, destinations and selection.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "interloper/interloper.hpp"

namespace {

using namespace std::chrono;

il::Table nothing(il::ExecutionContext&) { return il::Table(); }

il::Asset asset(std::string name, std::vector<std::string> deps = {}) {
  il::Asset a(std::move(name), nothing);
  a.deps(std::move(deps));
  return a;
}

std::vector<std::string> names(const std::vector<const il::Asset*>& assets) {
  std::vector<std::string> out;
  for (const il::Asset* a : assets) out.push_back(a->name());
  return out;
}

std::string dag_error(std::vector<il::Source> sources, std::vector<il::Asset> loose = {}) {
  try {
    il::DAG dag(std::move(sources), std::move(loose));
  } catch (const il::DagError& e) {
    return e.what();
  }
  return "";
}

TEST(DAG, TopologicalOrderKeepsDeclarationOrderForTies) {
  il::Source s("s");
  s.add(asset("report", {"clean", "extra"}));
  s.add(asset("raw"));
  s.add(asset("clean", {"raw"}));
  s.add(asset("extra"));
  il::DAG dag({s});
  EXPECT_EQ(names(dag.order()), (std::vector<std::string>{"raw", "clean", "extra", "report"}));
  EXPECT_EQ(dag.size(), 4u);
  EXPECT_EQ(names(dag.upstream("report")), (std::vector<std::string>{"clean", "extra"}));
  EXPECT_EQ(names(dag.downstream("raw")), (std::vector<std::string>{"clean"}));
  EXPECT_THROW(dag.asset("nope"), il::DagError);
  EXPECT_EQ(dag.find("nope"), nullptr);
}

TEST(DAG, UnknownDependencyIsNamed) {
  il::Source s("s");
  s.add(asset("b", {"x"}));
  EXPECT_EQ(dag_error({s}), "asset 'b' depends on unknown asset 'x'");
}

TEST(DAG, DuplicateNamesAcrossSources) {
  il::Source a("a");
  a.add(asset("same"));
  il::Source b("b");
  b.add(asset("same"));
  const std::string message = dag_error({a, b});
  EXPECT_NE(message.find("'same'"), std::string::npos) << message;
  EXPECT_NE(message.find("'a'"), std::string::npos) << message;
  EXPECT_NE(message.find("'b'"), std::string::npos) << message;
  EXPECT_NE(dag_error({a}, {asset("same")}), "");
}

TEST(DAG, CycleIsNamedInOrder) {
  il::Source s("s");
  s.add(asset("a", {"b"}));
  s.add(asset("b", {"a"}));
  s.add(asset("c", {"a"}));
  EXPECT_EQ(dag_error({s}), "dependency cycle: a -> b -> a");

  il::Source three("t");
  three.add(asset("start"));
  three.add(asset("x", {"start", "z"}));
  three.add(asset("y", {"x"}));
  three.add(asset("z", {"y"}));
  EXPECT_EQ(dag_error({three}), "dependency cycle: x -> y -> z -> x");

  il::Source self("self");
  self.add(asset("me", {"me"}));
  EXPECT_EQ(dag_error({self}), "dependency cycle: me -> me");
}

TEST(DAG, ErrorsNameTheDeclarationAtFault) {
  il::Source s("s");
  s.add(asset("a"));
  s.add(asset("b", {"a", "x"}));
  try {
    il::DAG dag({s});
    FAIL();
  } catch (const il::DagError& e) {
    EXPECT_EQ(e.asset(), "b");
    EXPECT_EQ(e.dependency(), "x");
  }
  il::Source loop("l");
  loop.add(asset("p", {"r"}));
  loop.add(asset("q", {"p"}));
  loop.add(asset("r", {"q"}));
  try {
    il::DAG dag({loop});
    FAIL();
  } catch (const il::DagError& e) {
    EXPECT_STREQ(e.what(), "dependency cycle: p -> q -> r -> p");
    EXPECT_EQ(e.asset(), "p");  // p depends on r: the edge that closes the cycle
    EXPECT_EQ(e.dependency(), "r");
  }
}

// Graph algorithms are iterative and linear: a chain of 10^5 assets builds and answers by name,
// and a cycle through 50,000 assets is reported without exhausting the stack.
TEST(DAG, LongChainsAndLongCycles) {
  constexpr int kChain = 100000;
  il::Source chain("c");
  for (int i = 0; i < kChain; ++i) {
    chain.add(asset("a" + std::to_string(i),
                    i == 0 ? std::vector<std::string>{} : std::vector<std::string>{"a" + std::to_string(i - 1)}));
  }
  il::DAG dag({chain});
  ASSERT_EQ(dag.size(), static_cast<std::size_t>(kChain));
  EXPECT_EQ(dag.order().front()->name(), "a0");
  EXPECT_EQ(dag.order().back()->name(), "a99999");
  for (int i = 1; i < kChain; i += 997) {
    EXPECT_EQ(names(dag.upstream("a" + std::to_string(i))),
              std::vector<std::string>{"a" + std::to_string(i - 1)});
  }
  il::DAG tail = dag.select({"a99999"}, true);
  EXPECT_EQ(tail.size(), static_cast<std::size_t>(kChain));

  constexpr int kCycle = 50000;
  il::Source cycle("k");
  for (int i = 0; i < kCycle; ++i) {
    cycle.add(asset("n" + std::to_string(i), {"n" + std::to_string((i + 1) % kCycle)}));
  }
  const std::string message = dag_error({cycle});
  EXPECT_EQ(message.rfind("dependency cycle: 50000 assets: ", 0), 0u) << message;
  EXPECT_NE(message.find("(49989 more)"), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u) << message;
}

TEST(DAG, AnyTwoTimeGranularitiesMayBeWired) {
  const std::vector<il::TimeGranularity> all = {
      il::TimeGranularity::HOUR,  il::TimeGranularity::DAY,     il::TimeGranularity::WEEK,
      il::TimeGranularity::MONTH, il::TimeGranularity::QUARTER, il::TimeGranularity::YEAR};
  for (il::TimeGranularity up : all) {
    for (il::TimeGranularity down : all) {
      il::Source s("s");
      s.add(asset("up")).partitioning(il::TimePartitionConfig("t", {.granularity = up}));
      s.add(asset("down", {"up"}))
          .partitioning(il::TimePartitionConfig("date", {.granularity = down}));
      EXPECT_EQ(dag_error({s}), "") << up << " -> " << down;
    }
  }
}

TEST(DAG, TimeAndListEdgesAreRejectedNamingBothSides) {
  il::Source s("s");
  s.add(asset("daily")).partitioning(il::TimePartitionConfig("date"));
  s.add(asset("regional", {"daily"})).partitioning(il::ListPartitionConfig("region", {"eu", "us"}));
  std::string message = dag_error({s});
  EXPECT_EQ(message,
            "asset 'regional' (partitioned "
            "{\"kind\":\"list\",\"column\":\"region\",\"values\":[\"eu\",\"us\"],"
            "\"allow_window\":false}) depends on asset 'daily' (partitioned "
            "{\"kind\":\"time\",\"column\":\"date\",\"granularity\":\"day\","
            "\"allow_window\":false,\"start\":null}): time and list partitionings cannot be "
            "mapped");

  il::Source reverse("r");
  reverse.add(asset("regional")).partitioning(il::ListPartitionConfig("region", {"eu", "us"}));
  reverse.add(asset("daily", {"regional"})).partitioning(il::TimePartitionConfig("date"));
  message = dag_error({reverse});
  EXPECT_NE(message.find("asset 'daily'"), std::string::npos) << message;
  EXPECT_NE(message.find("asset 'regional'"), std::string::npos) << message;
}

TEST(DAG, ListEdgesNeedTheSameList) {
  auto wire = [](il::ListPartitionConfig up, il::ListPartitionConfig down) {
    il::Source s("s");
    s.add(asset("up")).partitioning(up);
    s.add(asset("down", {"up"})).partitioning(down);
    return dag_error({s});
  };
  EXPECT_EQ(wire(il::ListPartitionConfig("region", {"eu", "us"}),
                 il::ListPartitionConfig("region", {"eu", "us"})),
            "");
  for (const std::string& message : {wire(il::ListPartitionConfig("region", {"eu", "us"}),
                                          il::ListPartitionConfig("region", {"us", "eu"})),
                                     wire(il::ListPartitionConfig("region", {"eu", "us"}),
                                          il::ListPartitionConfig("region", {"eu", "us", "apac"})),
                                     wire(il::ListPartitionConfig("region", {"eu", "us"}),
                                          il::ListPartitionConfig("market", {"eu", "us"}))}) {
    EXPECT_NE(message.find("asset 'down' (partitioned {\"kind\":\"list\""), std::string::npos)
        << message;
    EXPECT_NE(message.find("depends on asset 'up' (partitioned {\"kind\":\"list\""),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("the two partitionings differ"), std::string::npos) << message;
  }

  // Partitioned upstream, unpartitioned downstream (and the reverse) are fine.
  il::Source mixed("m");
  mixed.add(asset("daily")).partitioning(il::TimePartitionConfig("date"));
  mixed.add(asset("summary", {"daily"}));
  mixed.add(asset("regional", {"summary"}))
      .partitioning(il::ListPartitionConfig("region", {"eu", "us"}));
  EXPECT_EQ(dag_error({mixed}), "");
}

TEST(DAG, DestinationOfPrefersTheAssetsOwn) {
  auto shared = std::make_shared<il::MemoryDestination>();
  auto own = std::make_shared<il::MemoryDestination>();
  il::Source s("s", shared);
  s.add(asset("a"));
  s.add(asset("b")).destination(own);
  il::DAG dag({s}, {asset("loose")});
  EXPECT_EQ(dag.destination_of(dag.asset("a")), shared.get());
  EXPECT_EQ(dag.destination_of(dag.asset("b")), own.get());
  EXPECT_EQ(dag.destination_of(dag.asset("loose")), nullptr);
  EXPECT_EQ(dag.loose_assets().size(), 1u);
}

TEST(DAG, SelectWithAndWithoutUpstream) {
  auto destination = std::make_shared<il::MemoryDestination>();
  il::Source s("s", destination);
  s.add(asset("raw"));
  s.add(asset("clean", {"raw"}));
  s.add(asset("report", {"clean"}));
  s.add(asset("other"));
  il::DAG dag({s});

  il::DAG only = dag.select({"report"});
  EXPECT_EQ(names(only.order()), std::vector<std::string>{"report"});
  EXPECT_EQ(only.external_names(), std::vector<std::string>{"clean"});
  ASSERT_NE(only.external("clean"), nullptr);
  EXPECT_EQ(only.destination_of(*only.external("clean")), destination.get());

  il::DAG chain = dag.select({"report"}, true);
  EXPECT_EQ(names(chain.order()), (std::vector<std::string>{"raw", "clean", "report"}));
  EXPECT_TRUE(chain.external_names().empty());
  EXPECT_THROW(dag.select({"nope"}), il::DagError);

  // Copies are independent of the original.
  il::DAG copy = chain;
  EXPECT_EQ(names(copy.order()), names(chain.order()));
  EXPECT_NE(copy.order().front(), chain.order().front());
}

TEST(DAG, AnAssetMayReadItsOwnEarlierPartitionsOnly) {
  const il::TimePartitionConfig daily("date");
  il::Source s("s");
  s.add(asset("events")).partitioning(daily);
  s.add(asset("balances", {"events"}))
      .partitioning(daily)
      .dep("balances", il::DepMapping::offset(-1))
      .dep("events", il::DepMapping::window(-6, 0));
  il::DAG dag({s});
  EXPECT_EQ(names(dag.order()), (std::vector<std::string>{"events", "balances"}));
  EXPECT_EQ(names(dag.upstream("balances")), std::vector<std::string>{"events"});
  EXPECT_TRUE(dag.downstream("balances").empty());
  EXPECT_EQ(dag.asset("balances").mapping("balances"), il::DepMapping::offset(-1));
  EXPECT_EQ(dag.asset("balances").mapping("events"), il::DepMapping::window(-6, 0));

  for (const auto& m : {il::DepMapping::offset(0), il::DepMapping::window(-6, 0),
                        il::DepMapping::offset(1), il::DepMapping::all()}) {
    il::Source bad("s");
    bad.add(asset("b")).partitioning(daily).dep("b", m);
    EXPECT_EQ(dag_error({bad}),
              "asset 'b': dependency 'b' (" + m.to_string() +
                  "): a dependency on itself must read earlier partitions only (a negative "
                  "offset, or a window ending below 0), or it is a cycle; " +
                  m.to_string() + " is not");
  }
}

TEST(DAG, AWindowNeedsTimeOnBothEnds) {
  const il::ListPartitionConfig regions("region", {"eu", "us"});
  il::Source s("s");
  s.add(asset("sales")).partitioning(regions);
  s.add(asset("totals")).partitioning(regions).dep("sales", il::DepMapping::offset(-1));
  EXPECT_EQ(dag_error({s}),
            "asset 'totals': dependency 'sales' (offset -1): offset -1 counts periods of time: "
            "both assets must be partitioned by time");
  il::Source u("u");
  u.add(asset("fx"));
  u.add(asset("report")).partitioning(il::TimePartitionConfig("date")).dep("fx",
                                                                          il::DepMapping::all());
  EXPECT_EQ(dag_error({u}), "");
  il::Source unknown("s");
  unknown.add(asset("a")).dep("nope", il::DepMapping::offset(-1));
  EXPECT_EQ(dag_error({unknown}), "asset 'a' depends on unknown asset 'nope'");
}

}  // namespace
