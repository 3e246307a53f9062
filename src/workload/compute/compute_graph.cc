#include "workload/compute/compute_graph.h"

#include <stdexcept>

namespace safs {

int ComputeGraph::add_op(int gpu, TimePs duration_ps, std::string label) {
  if (gpu >= static_cast<int>(gpu_order.size())) gpu_order.resize(gpu + 1);
  ops.push_back({gpu, duration_ps, std::move(label), {}});
  const int id = static_cast<int>(ops.size()) - 1;
  gpu_order[gpu].push_back(id);
  return id;
}

int ComputeGraph::add_transfer(int producer, int consumer, std::uint64_t size_bytes, int src) {
  Transfer t;
  t.producer = producer;
  t.consumer = consumer;
  t.src = producer >= 0 ? ops.at(producer).gpu : src;
  t.dst = ops.at(consumer).gpu;
  t.size_bytes = size_bytes;
  transfers.push_back(t);
  const int id = static_cast<int>(transfers.size()) - 1;
  ops[consumer].inputs.push_back(id);
  return id;
}

void ComputeGraph::validate() const {
  std::vector<int> seen(ops.size(), 0);
  for (std::size_t g = 0; g < gpu_order.size(); ++g) {
    for (const int op : gpu_order[g]) {
      if (op < 0 || op >= static_cast<int>(ops.size()) || ops[op].gpu != static_cast<int>(g)) {
        throw std::invalid_argument("gpu " + std::to_string(g) + " lists op " + std::to_string(op) +
                                    " that is not its own");
      }
      ++seen[op];
    }
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (seen[i] != 1)
      throw std::invalid_argument("op " + ops[i].label + " is not ordered exactly once");
  }
  for (const Transfer& t : transfers) {
    if (t.producer < 0 && t.src < 0) {
      throw std::invalid_argument("a transfer without a producer op needs a source GPU");
    }
    if (t.src == t.dst) throw std::invalid_argument("a transfer must cross GPUs");
    if (t.size_bytes == 0) throw std::invalid_argument("a transfer must carry bytes");
  }
}

std::vector<TimePs> planned_starts(const ComputeGraph& graph, TimePs transfer_ps) {
  const std::size_t n = graph.ops.size();
  std::vector<TimePs> start(n, -1), end(n, -1);
  std::vector<std::size_t> next(graph.gpu_order.size(), 0);
  std::vector<TimePs> gpu_free(graph.gpu_order.size(), 0);
  std::size_t done = 0;
  // Repeatedly start every op whose inputs are known; orders are short, so a
  // simple fixpoint is enough.
  while (done < n) {
    bool progressed = false;
    for (std::size_t g = 0; g < graph.gpu_order.size(); ++g) {
      while (next[g] < graph.gpu_order[g].size()) {
        const int op = graph.gpu_order[g][next[g]];
        TimePs ready = gpu_free[g];
        bool inputs_known = true;
        for (const int t : graph.ops[op].inputs) {
          const int producer = graph.transfers[t].producer;
          if (producer >= 0 && end[producer] < 0) {
            inputs_known = false;
            break;
          }
          ready = std::max(ready, (producer >= 0 ? end[producer] : 0) + transfer_ps);
        }
        if (!inputs_known) break;
        // Each duration is in range, a GPU's sum of them need not be (it
        // wrapped negative and read as a deadlock).
        if (graph.ops[op].duration_ps > kTimeNever / 2 - ready) {
          throw std::invalid_argument("op " + graph.ops[op].label +
                                      ": the ops planned before it on its GPU end past what "
                                      "simulated time holds (about 53 days)");
        }
        start[op] = ready;
        end[op] = ready + graph.ops[op].duration_ps;
        gpu_free[g] = end[op];
        ++next[g];
        ++done;
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("the per-GPU orders deadlock");
  }
  return start;
}

TimePs makespan_ps(const ComputeGraph& graph, const std::vector<TimePs>& starts) {
  TimePs last = 0;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    last = std::max(last, starts[i] + graph.ops[i].duration_ps);
  }
  return last;
}

}  // namespace safs
