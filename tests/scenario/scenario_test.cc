// Scenario files: values land where they should; every mistake is reported
// with file, line and key.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "scenario/reference.h"
#include "scenario/scenario.h"
#include "support/experiments.h"
#include "workload/compute/compute_graph.h"
#include "workload/inference/inference_workload.h"

namespace safs {
namespace {

const char* kValid = R"(
[simulation]
seed = 9
stop_ms = 5

[topology]
kind = "leaf_spine"
hosts_per_leaf = 4
leaves = 2
spines = 2
oversubscription = 2.0
link_gbps = 100
link_delay_us = 0.5

[network]
mtu_bytes = 1500
ecn_threshold_bytes = 30000

[transport]
name = "dctcp"
[transport.dctcp]
shift_g = 5

[[flows]]
src = 0
dst = 7
size_bytes = 1000
start_us = 2.5
deadline_us = 100
class = "urgent"

[[flows]]
src = 3
dst = 1
size_bytes = 20
)";

TEST(Scenario, ParsesEveryKindOfKey) {
  const ExperimentConfig c = parse_scenario(kValid, "valid.toml");
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.stop_ps, 5 * kPsPerMs);
  EXPECT_EQ(c.topology.kind, TopologyKind::kLeafSpine);
  EXPECT_EQ(c.topology.num_hosts(), 8);
  EXPECT_EQ(c.topology.host_link.rate_bps, 100'000'000'000u);
  EXPECT_EQ(c.topology.host_link.delay_ps, 500'000);
  // 4 hosts * 100 G / (2 spines * 2.0) = 100 G per uplink.
  EXPECT_EQ(c.topology.fabric_link.rate_bps, 100'000'000'000u);
  EXPECT_EQ(c.mtu_bytes, 1500u);
  EXPECT_EQ(c.network.switches.ecn_threshold_bytes, 30000u);
  EXPECT_EQ(std::get<std::int64_t>(c.transport_params.at("shift_g")), 5);
  ASSERT_EQ(testing::listed_flows(c).size(), 2u);
  EXPECT_EQ(testing::listed_flows(c)[0].start_ps, 2'500'000);
  EXPECT_EQ(testing::listed_flows(c)[0].deadline_ps, 100 * kPsPerUs);
  EXPECT_EQ(testing::listed_flows(c)[0].flow_class, FlowClass::kUrgent);
  EXPECT_EQ(testing::listed_flows(c)[1].id, 1u);
  EXPECT_FALSE(testing::listed_flows(c)[1].has_deadline());
  EXPECT_EQ(testing::listed_flows(c)[1].flow_class, FlowClass::kBackground);
}

TEST(Scenario, DefaultsComeFromTheSchema) {
  const ExperimentConfig c = parse_scenario("", "empty.toml");
  EXPECT_EQ(c.topology.kind, TopologyKind::kStar);
  EXPECT_EQ(c.topology.hosts, 16);
  EXPECT_EQ(c.mtu_bytes, 4096u);
  EXPECT_EQ(c.transport, "dctcp");
  EXPECT_EQ(c.topology.host_link.delay_ps, kPsPerUs);
}

TEST(Scenario, OverridesReplaceFileValues) {
  const ExperimentConfig c = parse_scenario(
      kValid, "valid.toml", {"simulation.seed=4", "transport.name=reno", "network.mtu_bytes=9000"});
  EXPECT_EQ(c.seed, 4u);
  EXPECT_EQ(c.transport, "reno");
  EXPECT_EQ(c.mtu_bytes, 9000u);
}

// Expects a ScenarioError whose message contains every fragment.
void expect_error(const std::string& text, const std::vector<std::string>& fragments,
                  const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(text, "bad.toml", overrides);
    FAIL() << "no error for:\n" << text;
  } catch (const ScenarioError& e) {
    for (const std::string& f : fragments) {
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message '" << e.what() << "' lacks '" << f << "'";
    }
  }
}

TEST(Scenario, UnknownKeyNamesLineAndSuggests) {
  expect_error(
      "[topology]\nkind = \"star\"\nlink_gpbs = 10\n",
      {"bad.toml:3", "topology.link_gpbs", "unknown key", "did you mean 'topology.link_gbps'"});
}

TEST(Scenario, UnknownTableIsAnError) {
  expect_error("[topolgy]\nhosts = 3\n", {"bad.toml:1", "topolgy", "did you mean 'topology'"});
}

// A quoted dotted key is a key of that name, which no table has: read as
// the schema path it spells, it would pass and never be used.
TEST(Scenario, QuotedDottedKeyIsAnError) {
  expect_error("\"simulation.seed\" = 7\n",
               {"bad.toml:1", "simulation.seed", "a key with '.', '[' or ']' in its name"});
  expect_error("[topology]\n\"flows[0]\" = 1\n", {"bad.toml:2", "topology.flows[0]"});
}

// A value where a table goes says so, not "unknown key; did you mean" itself.
TEST(Scenario, ValueWhereATableGoesNamesTheTable) {
  expect_error("topology = 5\n", {"bad.toml:1", "topology", "expected a table ([topology])"});
  expect_error("[flows]\nsrc = 1\n",
               {"bad.toml:1", "flows", "expected an array of tables ([[flows]])"});
}

TEST(Scenario, WrongTypeNamesExpectedType) {
  expect_error("[topology]\nhosts = \"many\"\n",
               {"bad.toml:2", "topology.hosts", "expected integer"});
  expect_error("[network]\nmtu_bytes = 1500.5\n",
               {"bad.toml:2", "network.mtu_bytes", "expected integer"});
}

TEST(Scenario, BooleanAndEnumKeysAreTyped) {
  const ExperimentConfig c = parse_scenario(
      "[transport]\nname = \"safs\"\n[transport.safs]\nurgent_first = true\n", "typed.toml");
  EXPECT_EQ(std::get<bool>(c.transport_params.at("urgent_first")), true);
  // 0 and 1 still mean false and true; other integers and words do not.
  EXPECT_NO_THROW(parse_scenario("[transport.safs]\nbackground_srpt = 1\n", "typed.toml"));
  expect_error("[transport.safs]\nurgent_first = 2\n",
               {"bad.toml:2", "transport.safs.urgent_first", "expected boolean"});
  expect_error("[transport.homa]\ndynamic_window = \"yes\"\n",
               {"bad.toml:2", "transport.homa.dynamic_window", "expected boolean"});
  expect_error("[topology]\nkind = \"ring\"\n",
               {"bad.toml:2", "topology.kind", "not one of: star, leaf_spine, fat_tree"});
}

// This round's SAFS keys: announcements ahead, background streams and
// coordinated senders.
TEST(Scenario, AnnounceAndStreamKeysRejectBadValues) {
  expect_error("[transport.safs]\nuplink_by_deadline = \"edf\"\n",
               {"bad.toml:2", "transport.safs.uplink_by_deadline", "expected boolean"});
  expect_error("[transport.safs]\nreport_keeps_cap = 3\n",
               {"bad.toml:2", "transport.safs.report_keeps_cap", "expected boolean"});
  expect_error("[transport.safs]\nannounce_ahead = \"yes\"\n",
               {"bad.toml:2", "transport.safs.announce_ahead", "expected boolean"});
  expect_error("[transport.safs]\nbackground_streams = 2\n",
               {"bad.toml:2", "transport.safs.background_streams", "expected boolean"});
  expect_error("[transport.safs]\nannounce_lead_us = -3\n",
               {"bad.toml:2", "transport.safs.announce_lead_us", "expected a value in"});
}

TEST(Scenario, IntegerBeyondADoubleIsReportedForANumberKey) {
  expect_error("[topology]\nlink_gbps = 9007199254740993\n",
               {"bad.toml:2", "topology.link_gbps", "beyond 2^53"});
  // Up to 2^53 an integer is an exact number, then checked against the range.
  expect_error("[topology]\nlink_gbps = 9007199254740992\n",
               {"bad.toml:2", "topology.link_gbps", "expected a value in"});
}

TEST(Scenario, OverlongCdfPathNamesTheKey) {
  expect_error("[[poisson]]\nload = 0.5\nmax_flows = 1\ncdf = \"" + std::string(5000, 'x') + "\"\n",
               {"bad.toml:4", "poisson[0].cdf", "cannot be read"});
}

// A key of tens of thousands of dotted parts made a table tree the TOML
// library walked by recursion until the process died.
TEST(Scenario, KeyOfThousandsOfPartsIsRefusedBeforeParsing) {
  std::string parts;
  for (int i = 0; i < 50000; ++i) parts += "a.";
  expect_error("[topology]\nkind = \"star\"\n[" + parts + "b]\n", {"bad.toml:3", "dotted parts"});
  expect_error(parts + "b = 1\n", {"bad.toml:1", "dotted parts"});
  expect_error("[topology]\nx = { " + parts + "b = 1 }\n", {"bad.toml:2", "dotted parts"});
  expect_error("[topology]\nhosts = 4\n", {"--set topology.kind:1", "dotted parts"},
               {"topology.kind={" + parts + "b=1}"});
  // Dots in strings and comments are no key's: a list of 40 dotted names, a
  // comment with '=' in it.
  std::string names;
  for (int i = 0; i < 40; ++i) names += "\"urgent.m" + std::to_string(i) + "\", ";
  EXPECT_NO_THROW(
      parse_scenario("[topology]\nhosts = 4\n[[flows]]\nsrc = 1\ndst = 0\n"
                     "size_bytes = 1000\n[sweep]\nmetrics = [\n" +
                         names + " # every column; p99 = a.b.c.d.e.f.g.h\n]\n",
                     "good.toml"));
}

// Each factor of a pipeline transfer in range, their product past 2^64: it
// wrapped to a transfer of 18 EB with a negative ideal FCT.
TEST(Scenario, PipelineTransferBeyondTheFlowBoundIsRefused) {
  expect_error(
      "[topology]\nhosts = 4\n[pipeline]\nstages = 2\nhidden = 1000000000\n"
      "sequence = 1000000000\n",
      {"pipeline.hidden", "is 2e+18 bytes per transfer; expected at most 1e15"});
}

TEST(Scenario, NegativeRateIsOutOfRange) {
  expect_error("[topology]\nlink_gbps = -100\n",
               {"bad.toml:2", "topology.link_gbps", "expected a value in"});
}

TEST(Scenario, BulkPeriodMustBeANonNegativeTime) {
  const std::string chain = "[[bulk]]\nsrc = 1\ndst = 0\nsize_bytes = 10\n";
  expect_error(chain + "period_us = -5\n",
               {"bad.toml:5", "bulk[0].period_us", "expected a value in"});
  expect_error(chain + "period_us = \"x\"\n",
               {"bad.toml:5", "bulk[0].period_us", "expected number"});
}

TEST(Scenario, HostOutOfRange) {
  expect_error("[topology]\nhosts = 4\n[[flows]]\nsrc = 0\ndst = 4\nsize_bytes = 10\n",
               {"bad.toml:5", "flows[0].dst", "out of range", "4 hosts"});
}

TEST(Scenario, FlowToItself) {
  expect_error("[[flows]]\nsrc = 2\ndst = 2\nsize_bytes = 10\n",
               {"bad.toml:3", "flows[0].dst", "its own host"});
}

TEST(Scenario, MissingRequiredFlowKey) {
  expect_error("[[flows]]\nsrc = 2\ndst = 3\n", {"flows[0].size_bytes", "missing"});
}

TEST(Scenario, DeadlineBeforeStart) {
  expect_error("[[flows]]\nsrc = 0\ndst = 1\nsize_bytes = 5\nstart_us = 10\ndeadline_us = 5\n",
               {"bad.toml:6", "flows[0].deadline_us"});
}

TEST(Scenario, KeyOfAnotherTopologyKind) {
  expect_error("[topology]\nkind = \"star\"\nk = 8\n", {"bad.toml:3", "topology.k", "fat_tree"});
}

TEST(Scenario, OddFatTreeRadix) {
  expect_error("[topology]\nkind = \"fat_tree\"\nk = 5\n", {"bad.toml:3", "topology.k", "even"});
}

TEST(Scenario, UnknownTransportListsChoices) {
  expect_error("[transport]\nname = \"quic\"\n", {"bad.toml:2", "transport.name", "dctcp"});
}

TEST(Scenario, ParametersForAnotherTransportAreCheckedButUnused) {
  const ExperimentConfig c =
      parse_scenario("[transport]\nname = \"reno\"\n[transport.dctcp]\nshift_g = 3\n", "ok.toml");
  EXPECT_TRUE(c.transport_params.empty());
  expect_error("[transport]\nname = \"reno\"\n[transport.dctcp]\nshift_g = 30\n",
               {"bad.toml:4", "transport.dctcp.shift_g", "expected a value in"});
}

TEST(Scenario, BackgroundTransportReadsItsOwnTable) {
  const ExperimentConfig c = parse_scenario(
      "[transport]\nname = \"safs\"\nbackground = \"reno\"\n[transport.safs]\n"
      "urgent_first = true\n[transport.reno]\ninitial_cwnd_packets = 4\n",
      "mixed.toml");
  EXPECT_TRUE(c.mixed_tenants());
  EXPECT_EQ(c.background_transport, "reno");
  EXPECT_EQ(c.transport_params.count("urgent_first"), 1u);
  EXPECT_EQ(c.transport_params.count("initial_cwnd_packets"), 0u);
  EXPECT_EQ(c.background_transport_params.count("initial_cwnd_packets"), 1u);
  EXPECT_EQ(c.background_transport_params.count("urgent_first"), 0u);
  expect_error("[transport]\nbackground = \"reno\"\n[transport.reno]\nrto_min_us = 0\n",
               {"bad.toml:4", "transport.reno.rto_min_us", "expected a value in"});
}

TEST(Scenario, BackgroundEqualToNameOrEmptyIsOneTransport) {
  for (const char* background : {"\"dctcp\"", "\"\""}) {
    const ExperimentConfig c = parse_scenario(
        std::string("[transport]\nname = \"dctcp\"\nbackground = ") + background + "\n",
        "one.toml");
    EXPECT_FALSE(c.mixed_tenants()) << background;
    EXPECT_TRUE(c.background_transport.empty()) << background;
    EXPECT_TRUE(c.background_transport_params.empty()) << background;
  }
}

TEST(Scenario, TransportOverrideSetsNameOnly) {
  const ExperimentConfig c = parse_scenario("[transport]\nname = \"safs\"\nbackground = \"reno\"\n",
                                            "cli.toml", {"transport.name=\"dctcp\""});
  EXPECT_EQ(c.transport, "dctcp");
  EXPECT_EQ(c.background_transport, "reno");
}

TEST(Scenario, UnknownBackgroundTransportSuggests) {
  expect_error("[transport]\nname = \"safs\"\nbackground = \"rneo\"\n",
               {"bad.toml:3", "transport.background", "did you mean 'reno'?"});
}

TEST(Scenario, OverrideForTheBackgroundTransportIsUsed) {
  ScenarioNotes notes;
  const ExperimentConfig c = parse_scenario("[transport]\nbackground = \"reno\"\n", "bg.toml",
                                            {"transport.reno.initial_cwnd_packets=4"}, &notes);
  EXPECT_EQ(c.background_transport_params.count("initial_cwnd_packets"), 1u);
  EXPECT_TRUE(notes.warnings.empty());
}

TEST(Scenario, OverridesReachArrayEntries) {
  const ExperimentConfig c = parse_scenario(kValid, "valid.toml", {"flows[1].size_bytes=777"});
  EXPECT_EQ(testing::listed_flows(c)[1].size_bytes, 777u);
  EXPECT_EQ(testing::listed_flows(c)[0].size_bytes, 1000u);
  expect_error(kValid, {"no entry flows[5]"}, {"flows[5].size_bytes=1"});
  expect_error(kValid, {"expected name[index]"}, {"flows[x].size_bytes=1"});
}

TEST(Scenario, BadOverrideIsReported) {
  expect_error("", {"--set topology.hosts", "expected integer"}, {"topology.hosts=lots"});
  expect_error("", {"topology.bogus", "unknown key"}, {"topology.bogus=1"});
}

TEST(Scenario, SyntaxErrorNamesLineAndColumn) {
  expect_error("[topology]\nhosts = = 3\n", {"bad.toml:2:"});
}

TEST(Scenario, ReferenceDocMatchesTheSchema) {
  std::ifstream in(std::string(SAFS_SOURCE_DIR) + "/docs/scenario-format.md");
  ASSERT_TRUE(in) << "docs/scenario-format.md is missing";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), scenario_reference_markdown())
      << "regenerate with: build/bin/safs-sim reference > docs/scenario-format.md";
}

TEST(Scenario, ShippedScenariosValidate) {
  for (const char* file :
       {"scenarios/examples/incast.toml", "scenarios/micro/incast.toml",
        "scenarios/micro/workload-fct.toml", "scenarios/paper/zb-training.toml",
        "scenarios/paper/incast-micro.toml", "scenarios/paper/afd-16a2f.toml",
        "scenarios/eval/multi-job-fabric.toml", "bench/fattree-afd-alone.toml"}) {
    EXPECT_NO_THROW(load_scenario(std::string(SAFS_SOURCE_DIR) + "/" + file)) << file;
  }
}

// The 1024-GPU benchmark: eight training jobs numbered in file order, each
// on the four hosts its entry lists, and the AFD job on its listed hosts.
TEST(Scenario, MultiJobBenchmarkHasItsJobs) {
  const ExperimentConfig c =
      load_scenario(std::string(SAFS_SOURCE_DIR) + "/bench/fattree-multi-job.toml");
  EXPECT_EQ(c.topology.num_hosts(), 1024);
  const std::vector<const ComputeGraph*> jobs = c.workloads.all<ComputeGraph>();
  ASSERT_EQ(jobs.size(), 8u);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    EXPECT_EQ(jobs[j]->job, static_cast<int>(j));
    int gpus = 0;
    for (const auto& order : jobs[j]->gpu_order) gpus += order.empty() ? 0 : 1;
    EXPECT_EQ(gpus, 4) << "job " << j;
  }
  const InferenceWorkload* afd = c.workloads.find<InferenceWorkload>();
  ASSERT_NE(afd, nullptr);
  EXPECT_EQ(afd->afd.attention_hosts, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(afd->afd.ffn_hosts, std::vector<int>{576});
  EXPECT_EQ(afd->prefill_hosts, (std::vector<int>{640, 704, 768, 832}));
  EXPECT_EQ(afd->bulk_hosts, std::vector<int>{577});
}

}  // namespace
}  // namespace safs

namespace safs {
namespace {

// [inference]: what the loader refuses, and where it points.
TEST(ScenarioInference, SendersMustCarryTheBackgroundLoad) {
  expect_error("[topology]\nhosts = 24\n[inference]\nprefill_hosts = 4\nkv_load = 0.3\n",
               {"bad.toml:5", "inference.kv_load", "1.20", "prefill_hosts"});
}

TEST(ScenarioInference, TooFewHosts) {
  expect_error("[topology]\nhosts = 20\n[inference]\n", {"bad.toml:3", "inference", "28 hosts"});
}

TEST(ScenarioInference, TokenRangeNamesTheKeyThatIsSet) {
  expect_error("[topology]\nhosts = 28\n[inference]\noutput_tokens_min = 60\n",
               {"bad.toml:4", "inference.output_tokens_max", "at least output_tokens_min (60)"});
}

TEST(ScenarioInference, ZeroComputeNeedsAnExplicitArrivalRate) {
  expect_error(
      "[topology]\nhosts = 28\n[inference]\nattention_fixed_us = 0\nattention_per_token_us = 0\n"
      "attention_per_context_token_ns = 0\nffn_fixed_us = 0\nffn_per_token_us = 0\n"
      "sample_us = 0\n",
      {"bad.toml:3", "inference", "arrivals_per_s"});
}

TEST(ScenarioInference, NotTogetherWithAPipeline) {
  expect_error("[topology]\nhosts = 28\n[pipeline]\n[inference]\n",
               {"bad.toml:4", "inference", "[pipeline]"});
}

}  // namespace
}  // namespace safs
