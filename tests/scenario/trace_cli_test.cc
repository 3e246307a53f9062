// `safs-sim run --trace`: what the timeline holds, how it is bounded, and
// that tracing changes no result.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include <sys/wait.h>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kZb = std::string(SAFS_SOURCE_DIR) + "/scenarios/paper/zb-training.toml";
const std::string kAfd = std::string(SAFS_SOURCE_DIR) + "/scenarios/paper/afd-16a2f.toml";

// ZB-H1 over SAFS, shrunk to about 10 ms: 4 stages, 4 microbatches, 8 MiB
// transfers, one background flow into every stage host.
const std::string kTinyPipeline =
    kZb +
    " --quiet --force --set pipeline.microbatches=4 --set pipeline.forward_ms=0.1"
    " --set pipeline.backward_ms=0.1 --set pipeline.weight_ms=0.1 --set pipeline.hidden=1024"
    " --set pipeline.background_flows_per_stage=1 --set topology.hosts=8";

fs::path temp(const std::string& name) {
  // ctest runs tests in parallel: names per test.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return safs::testing::process_temp_dir() / ("safs-trace-" + test + "-" + name);
}

int run_cli(const std::string& args) {
  const std::string command =
      std::string(SAFS_SIM_PATH) + " " + args + " >" + temp("log").string() + " 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// summary.json without what depends on the machine or the command line
// rather than the run.
std::string summary_without_wall(const fs::path& path) {
  json summary = json::parse(read_text(path));
  for (const char* key :
       {"wall_s", "setup_wall_s", "run_wall_s", "events_per_s", "peak_rss_mib", "provenance"})
    summary.erase(key);
  return summary.dump(1);
}

json trace_events(const fs::path& path) { return json::parse(read_text(path)).at("traceEvents"); }

std::size_t count(const json& events, const std::string& phase, const std::string& category) {
  std::size_t n = 0;
  for (const json& e : events) {
    if (e["ph"] == phase && e.value("cat", "") == category) ++n;
  }
  return n;
}

TEST(TraceCli, PipelineTraceHasOpsBubblesFlowsGrantsAndQueues) {
  const fs::path trace = temp("trace.json");
  ASSERT_EQ(run_cli("run " + kTinyPipeline + " --out " + temp("out").string() + " --trace " +
                    trace.string()),
            0)
      << read_text(temp("log"));
  const json events = trace_events(trace);
  EXPECT_EQ(count(events, "X", "op"), 48u);  // 4 stages x 4 microbatches x (F, B, W)
  EXPECT_GT(count(events, "X", "bubble"), 0u);
  EXPECT_GT(count(events, "X", "urgent"), 0u);      // pipeline transfers
  EXPECT_GT(count(events, "X", "background"), 0u);  // the background flows
  EXPECT_EQ(count(events, "i", "deadline"), count(events, "X", "urgent"));
  EXPECT_GT(count(events, "i", "grant"), 0u);
  EXPECT_GT(count(events, "C", ""), 0u);
  std::set<std::string> threads;
  for (const json& e : events) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"]);
    if (e["ph"] == "X" && e["cat"] == "bubble") {
      EXPECT_EQ(e["name"], "bubble");
    }
  }
  EXPECT_TRUE(threads.count("compute (ops, bubbles)"));
  EXPECT_TRUE(threads.count("grants sent"));
  EXPECT_TRUE(threads.count("flows in, lane 0"));
}

// The trace draws the bubble account summary.json reports: per GPU, its
// bubble slices (waits before ops and the idle after its last op) add up to
// compute.gpus[].bubble_s, to the picosecond. DCTCP with background flows,
// so that inputs arrive late.
TEST(TraceCli, BubbleSlicesAddUpToTheSummarysBubbles) {
  const fs::path out = temp("out");
  const fs::path trace = temp("trace.json");
  ASSERT_EQ(run_cli("run " + kTinyPipeline + " --transport dctcp --out " + out.string() +
                    " --trace " + trace.string() + " --trace-max-events 100000000"),
            0)
      << read_text(temp("log"));
  std::map<int, double> slice_us;  // by pid (host + 1)
  std::size_t after_last_op = 0;
  for (const json& e : trace_events(trace)) {
    if (e["ph"] != "X" || e.value("cat", "") != "bubble") continue;
    slice_us[e["pid"].get<int>()] += e["dur"].get<double>();
    if (e["args"].contains("after")) ++after_last_op;
  }
  const json gpus = json::parse(read_text(out / "summary.json"))["compute"]["gpus"];
  ASSERT_EQ(gpus.size(), 4u);
  double bubbles_s = 0;
  for (const json& gpu : gpus) {
    const double bubble_s = gpu["bubble_s"].get<double>();
    EXPECT_NEAR(slice_us[gpu["gpu"].get<int>() + 1] * 1e-6, bubble_s, 1e-12) << gpu.dump();
    bubbles_s += bubble_s;
  }
  EXPECT_GT(bubbles_s, 0.0);
  EXPECT_GE(after_last_op, 1u);  // at least the GPUs that end before the makespan
}

TEST(TraceCli, TracingLeavesResultsIdentical) {
  const fs::path plain = temp("plain");
  const fs::path traced = temp("traced");
  ASSERT_EQ(run_cli("run " + kTinyPipeline + " --queue-sample-us 1 --out " + plain.string()), 0);
  ASSERT_EQ(run_cli("run " + kTinyPipeline + " --queue-sample-us 1 --out " + traced.string() +
                    " --trace " + temp("trace.json").string() + " --trace-ports switches"),
            0)
      << read_text(temp("log"));
  for (const char* file : {"flows.csv", "ops.csv", "queues.csv"}) {
    EXPECT_EQ(read_text(plain / file), read_text(traced / file)) << file;
  }
  EXPECT_EQ(summary_without_wall(plain / "summary.json"),
            summary_without_wall(traced / "summary.json"));
  // The trace itself is as deterministic as the run.
  ASSERT_EQ(run_cli("run " + kTinyPipeline + " --out " + traced.string() + " --trace " +
                    temp("again.json").string() + " --trace-ports switches"),
            0);
  EXPECT_EQ(read_text(temp("trace.json")), read_text(temp("again.json")));
}

TEST(TraceCli, WindowAndCapBoundTheTrace) {
  const fs::path windowed = temp("window.json");
  ASSERT_EQ(run_cli("run " + kTinyPipeline + " --out " + temp("out").string() + " --trace " +
                    windowed.string() + " --trace-from-ms 2 --trace-to-ms 4"),
            0)
      << read_text(temp("log"));
  std::size_t timed = 0;
  for (const json& e : trace_events(windowed)) {
    if (!e.contains("ts")) continue;
    ++timed;
    const double start_us = e["ts"];
    const double end_us = start_us + e.value("dur", 0.0);
    EXPECT_LE(start_us, 4000.0) << e.dump();
    EXPECT_GE(end_us, 2000.0) << e.dump();
  }
  EXPECT_GT(timed, 0u);

  const fs::path capped = temp("capped.json");
  ASSERT_EQ(run_cli("run " + kTinyPipeline + " --out " + temp("out").string() + " --trace " +
                    capped.string() + " --trace-max-events 100"),
            0);
  const json trace = json::parse(read_text(capped));
  EXPECT_LE(trace["otherData"]["events"].get<int>(), 100);
  EXPECT_TRUE(trace["otherData"]["truncated"].get<bool>());
  const json& note = trace["traceEvents"].back();
  EXPECT_EQ(note["name"], "trace truncated");
  // Complete up to the cut: nothing starts after it.
  for (const json& e : trace["traceEvents"]) {
    if (e.contains("ts")) {
      EXPECT_LE(e["ts"].get<double>(), note["ts"].get<double>()) << e.dump();
    }
  }
}

TEST(TraceCli, InferenceTraceHasTheOpsOfEveryStep) {
  const fs::path trace = temp("trace.json");
  ASSERT_EQ(run_cli("run " + kAfd +
                    " --quiet --force --set inference.attention_instances=2"
                    " --set inference.ffn_instances=1 --set inference.layers=2"
                    " --set inference.measured_requests=5 --set inference.warmup_requests=1"
                    " --set inference.prefill_hosts=0 --set inference.bulk_hosts=0"
                    " --set topology.hosts=3 --out " +
                    temp("out").string() + " --trace " + trace.string()),
            0)
      << read_text(temp("log"));
  const json events = trace_events(trace);
  std::set<int> steps;
  for (const json& e : events) {
    if (e["ph"] == "X" && e["cat"] == "op") steps.insert(e["args"]["step"].get<int>());
  }
  const std::size_t decode_steps =
      json::parse(read_text(temp("out") / "summary.json"))["inference"]["steps"];
  EXPECT_EQ(steps.size(), decode_steps);
  EXPECT_GT(count(events, "i", "deadline"), 0u);
}

TEST(TraceCli, UnknownPortExitsTwo) {
  EXPECT_EQ(run_cli("run " + kTinyPipeline + " --out " + temp("out").string() + " --trace " +
                    temp("trace.json").string() + " --trace-ports 'switch->nowhere'"),
            2);
}

}  // namespace
