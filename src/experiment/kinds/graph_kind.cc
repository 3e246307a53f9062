// [graph]: a compute graph written out op by op ([[graph.op]]) and transfer
// by transfer ([[graph.transfer]]), run as the pipeline kind runs its
// schedule: GPUs run their ops in the order listed, transfers are measured
// urgent flows with no-bubble timestamps from the plan.
#include <algorithm>

#include "experiment/workload_kind.h"
#include "workload/compute/compute_graph.h"
#include "workload/compute/compute_workload.h"
#include "workload/csv_text.h"

namespace safs {

namespace {

KnobTable<ComputeOp> op_knobs() {
  KnobTable<ComputeOp> t;
  t.integer("gpu", "host index", SAFS_FIELD(gpu), 0, 65535,
            "[graph]: a compute graph written out. Each [[graph.op]] is one op; the host (GPU) "
            "it runs on. A GPU runs its ops in the order they are listed.")
      .required();
  t.time("duration_us", "us", kPsPerUs, SAFS_FIELD(duration_ps), 0, 1e12,
         "How long the op computes (before op jitter).")
      .required();
  t.text("label", SAFS_FIELD(label),
         "Name in ops.csv and traces; empty = \"op N\", N its index in the list. No commas, "
         "quotes or control characters (ops.csv is plain CSV).");
  return t;
}

// [[graph.transfer]] as written: a source host only for a transfer without
// a producer (the others leave from the producer's GPU).
struct TransferOptions {
  int producer = 0;
  int consumer = 0;
  std::uint64_t size_bytes = 0;
  int src = -1;  // none
};

KnobTable<TransferOptions> transfer_knobs() {
  KnobTable<TransferOptions> t;
  t.integer("producer", "op index", SAFS_FIELD(producer), -1, 1e9,
            "The op whose end starts the transfer (its index among the [[graph.op]] tables, "
            "from 0), or -1: the transfer starts with the computation, from host `src` (an "
            "input there from the start).")
      .required();
  t.integer("consumer", "op index", SAFS_FIELD(consumer), 0, 1e9,
            "The op that waits for the transfer; it runs on another GPU than the producer.")
      .required();
  t.integer("size_bytes", "bytes", SAFS_FIELD(size_bytes), 1, 1e15,
            "Bytes the transfer moves, as one urgent flow from the producer's GPU to the "
            "consumer's, with the no-bubble timestamp of the consumer.")
      .required();
  t.integer("src", "host index", SAFS_FIELD(src), 0, 65535,
            "The sending host of a transfer with producer = -1, and only of one (the default, "
            "-1, is none).");
  return t;
}

std::vector<KeySpec> graph_keys() {
  std::vector<KeySpec> keys = op_knobs().describe("op[].");
  for (KeySpec& spec : transfer_knobs().describe("transfer[].")) keys.push_back(std::move(spec));
  return keys;
}

// "op 3 (F1)", or "op 3" when it has the default label.
std::string op_name(const ComputeGraph& graph, int op) {
  const std::string name = "op " + std::to_string(op);
  const std::string& label = graph.ops[static_cast<std::size_t>(op)].label;
  return label == name ? name : name + " (" + label + ")";
}

// Runs the per-GPU orders without time; if they stall, says where each
// stalled GPU waits and for which producer.
void check_orders(const SectionReader& section, const ComputeGraph& graph) {
  std::vector<bool> done(graph.ops.size(), false);
  std::vector<std::size_t> next(graph.gpu_order.size(), 0);
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (std::size_t g = 0; g < graph.gpu_order.size(); ++g) {
      const std::vector<int>& order = graph.gpu_order[g];
      while (next[g] < order.size()) {
        const ComputeOp& op = graph.ops[static_cast<std::size_t>(order[next[g]])];
        if (!std::all_of(op.inputs.begin(), op.inputs.end(), [&](int t) {
              const int producer = graph.transfers[static_cast<std::size_t>(t)].producer;
              return producer < 0 || done[static_cast<std::size_t>(producer)];
            })) {
          break;
        }
        done[static_cast<std::size_t>(order[next[g]++])] = true;
        progressed = true;
      }
    }
  }
  std::string stalls;
  for (std::size_t g = 0; g < graph.gpu_order.size(); ++g) {
    if (next[g] == graph.gpu_order[g].size()) continue;
    const int op = graph.gpu_order[g][next[g]];
    for (const int t : graph.ops[static_cast<std::size_t>(op)].inputs) {
      const int producer = graph.transfers[static_cast<std::size_t>(t)].producer;
      if (producer < 0 || done[static_cast<std::size_t>(producer)]) continue;
      stalls += std::string(stalls.empty() ? "" : "; ") + "gpu " + std::to_string(g) +
                " waits at " + op_name(graph, op) + " for transfer " + std::to_string(t) +
                " from " + op_name(graph, producer);
      break;
    }
  }
  if (!stalls.empty()) section.fail("", "the per-GPU orders deadlock: " + stalls);
}

void read_graph(const SectionReader& section, const FileResolver&, ExperimentConfig& config) {
  const int hosts = config.topology.num_hosts();
  ComputeGraph graph;
  const auto ops = section.tables("op");
  if (ops.empty()) section.fail("", "needs at least one [[graph.op]]");
  for (const auto& entry : ops) {
    ComputeOp op = op_knobs().read(*entry);
    check_host(*entry, "gpu", op.gpu, hosts);
    // ops.csv writes labels as they are: Chakra's are cleaned for it
    // (chakra_graph.cc), a label written out is refused instead.
    if (std::any_of(op.label.begin(), op.label.end(), breaks_csv_field)) {
      entry->fail("label",
                  "expected no commas, quotes or control characters (ops.csv is plain "
                  "CSV)");
    }
    if (op.label.empty()) op.label = "op " + std::to_string(graph.ops.size());
    graph.add_op(op.gpu, op.duration_ps, op.label);
  }
  const int op_count = static_cast<int>(graph.ops.size());
  for (const auto& entry : section.tables("transfer")) {
    const TransferOptions t = transfer_knobs().read(*entry);
    for (const auto& [key, op] : {std::pair{"producer", t.producer}, {"consumer", t.consumer}}) {
      if (op >= op_count) {
        entry->fail(key, "op " + std::to_string(op) + " does not exist (" +
                             std::to_string(op_count) + " ops)");
      }
    }
    const bool initial = t.producer < 0;
    if (initial != entry->has("src")) {
      entry->fail_near("src", "producer",
                       initial ? "a transfer without a producer (-1) needs a src host"
                               : "src is for a transfer without a producer (producer = -1); "
                                 "this one leaves from its producer's GPU");
    }
    if (initial) check_host(*entry, "src", t.src, hosts);
    const int gpu = initial ? t.src : graph.ops[static_cast<std::size_t>(t.producer)].gpu;
    if (graph.ops[static_cast<std::size_t>(t.consumer)].gpu == gpu) {
      entry->fail(
          "consumer",
          op_name(graph, t.consumer) + " runs on gpu " + std::to_string(gpu) + " like " +
              (initial ? "the transfer's src" : "its producer " + op_name(graph, t.producer)) +
              "; a transfer must cross GPUs (order ops on one GPU by listing them)");
    }
    graph.add_transfer(t.producer, t.consumer, t.size_bytes, t.src);
  }
  check_orders(section, graph);
  // No op can start later than all durations end to end: within a quarter
  // of int64 picoseconds, no planned time wraps (compute_graph.cc).
  double total_ps = 0;
  for (const ComputeOp& op : graph.ops) total_ps += static_cast<double>(op.duration_ps);
  if (total_ps > static_cast<double>(kTimeNever / 4)) {
    section.fail("", "the ops' durations add up to " + std::to_string(total_ps / 1e12) +
                         " s, past what simulated time holds (about 26 days)");
  }
  add_compute_job(section, std::move(graph), config);
}

}  // namespace

WorkloadKind graph_kind() { return {"graph", SectionForm::kTable, graph_keys(), read_graph}; }

}  // namespace safs
