#include "workload/chakra/gpipe_trace.h"

#include <string>

namespace safs {

namespace {

// Appends nodes to one rank with ids in issue order.
class RankWriter {
 public:
  explicit RankWriter(ChakraRank& rank) : rank_(rank) {}

  std::uint64_t compute(const std::string& name, std::uint64_t us,
                        std::vector<std::uint64_t> data_deps) {
    ChakraNode& n = add(name, ChakraNodeType::kCompute, std::move(data_deps));
    n.duration_micros = us;
    if (last_compute_) n.ctrl_deps.push_back(last_compute_);
    last_compute_ = n.id;
    return n.id;
  }
  std::uint64_t send(const std::string& name, int dst, std::int64_t tag, std::int64_t bytes,
                     std::uint64_t after) {
    ChakraNode& n = add(name, ChakraNodeType::kSend, {after});
    n.comm_dst = dst;
    n.comm_tag = tag;
    n.comm_size = bytes;
    return n.id;
  }
  std::uint64_t recv(const std::string& name, int src, std::int64_t tag, std::int64_t bytes) {
    ChakraNode& n = add(name, ChakraNodeType::kRecv, {});
    n.comm_src = src;
    n.comm_tag = tag;
    n.comm_size = bytes;
    return n.id;
  }
  void all_reduce(std::int64_t bytes) {
    ChakraNode& n = add("all_reduce_grads", ChakraNodeType::kCollective, {last_compute_});
    n.comm_type = static_cast<std::int64_t>(ChakraCollective::kAllReduce);
    n.comm_size = bytes;
  }

 private:
  ChakraNode& add(const std::string& name, ChakraNodeType type, std::vector<std::uint64_t> deps) {
    ChakraNode& n = rank_.nodes.emplace_back();
    n.id = rank_.nodes.size();  // from 1, as the converters start
    n.name = name;
    n.type = static_cast<int>(type);
    for (const std::uint64_t d : deps) {
      if (d) n.data_deps.push_back(d);
    }
    return n;
  }

  ChakraRank& rank_;
  std::uint64_t last_compute_ = 0;  // 0: none yet
};

}  // namespace

std::vector<ChakraRank> gpipe_trace(const GpipeTraceOptions& o) {
  std::vector<ChakraRank> ranks(o.stages);
  const int last = o.stages - 1;
  for (int s = 0; s < o.stages; ++s) {
    ranks[s].path = "rank " + std::to_string(s);
    ranks[s].version = "1.0.0";
    RankWriter w(ranks[s]);
    std::vector<std::uint64_t> forward(o.microbatches);
    for (int m = 0; m < o.microbatches; ++m) {
      const std::string mb = " mb" + std::to_string(m);
      const std::uint64_t input = s > 0 ? w.recv("recv_act" + mb, s - 1, m, o.activation_bytes) : 0;
      forward[m] = w.compute("forward" + mb, o.forward_us, {input});
      if (s < last) w.send("send_act" + mb, s + 1, m, o.activation_bytes, forward[m]);
    }
    // Gradients use tags after the activations' so the two never pair.
    for (int m = o.microbatches - 1; m >= 0; --m) {
      const std::string mb = " mb" + std::to_string(m);
      const std::int64_t tag = o.microbatches + m;
      const std::uint64_t grad =
          s < last ? w.recv("recv_grad" + mb, s + 1, tag, o.activation_bytes) : 0;
      const std::uint64_t backward = w.compute("backward" + mb, o.backward_us, {forward[m], grad});
      if (s > 0) w.send("send_grad" + mb, s - 1, tag, o.activation_bytes, backward);
    }
    if (o.allreduce_bytes > 0) w.all_reduce(o.allreduce_bytes);
  }
  return ranks;
}

}  // namespace safs
