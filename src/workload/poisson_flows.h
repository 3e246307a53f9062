// Open-loop background traffic: flows with sizes drawn from a CDF file,
// arriving as a Poisson process at a target load, between chosen host sets.
// Load is the offered load on each sender's link (the usual all-to-all
// definition: every sender injects load x its link rate) or, with
// per_receiver, on each receiver's link. Wire overhead counts (PIAS scales
// by 1500/1460 likewise): the rate is load x C / (8 x mean wire bytes).
// One random stream per generator: adding one never shifts another's draws.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/flow.h"
#include "engine/rng.h"
#include "engine/simulator.h"
#include "workload/flow_size_cdf.h"
#include "workload/workload.h"

namespace safs {

struct PoissonSpec {
  std::string cdf_path;
  double load = 0.5;
  bool per_receiver = false;
  std::vector<int> senders;    // empty: every host
  std::vector<int> receivers;  // empty: every host
  TimePs start_ps = 0;
  TimePs stop_ps = kTimeNever;  // no arrivals after this
  std::uint64_t max_flows = 0;  // 0: no limit
  FlowClass flow_class = FlowClass::kBackground;
  double deadline_factor =
      0;                 // > 0: deadline = start + factor x ideal FCT (D2TCP's synthetic deadlines)
  bool measured = true;  // the run waits for these flows
};

// One generator per spec; its random stream is the next the run hands out.
std::unique_ptr<Workload> make_workload(const PoissonSpec& spec, WorkloadHost& host);
std::string describe_workload(const PoissonSpec& spec);

class PoissonFlows final : public Workload, public EventHandler {
 public:
  // `launch` starts a flow (the caller assigns its id).
  using Launch = std::function<void(const FlowSpec&)>;
  PoissonFlows(Simulator& sim, const PoissonSpec& spec, FlowSizeCdf cdf, int num_hosts,
               double link_bps, std::uint32_t mtu_bytes, std::uint32_t header_bytes,
               std::uint64_t seed, std::uint64_t index, Launch launch,
               std::function<void()> on_finished);

  void arm() override;
  void handle_event(EventId id) override;
  bool measured() const override { return spec_.measured; }
  bool finished() const override { return finished_; }
  double arrivals_per_second() const { return rate_per_s_; }

 private:
  void finish();

  Simulator& sim_;
  PoissonSpec spec_;
  FlowSizeCdf cdf_;
  std::vector<int> senders_, receivers_;
  Rng rng_;
  double rate_per_s_ = 0;
  Launch launch_;
  std::function<void()> on_finished_;
  TimePs next_ps_ = 0;
  std::uint64_t launched_ = 0;
  bool finished_ = false;
};

}  // namespace safs
