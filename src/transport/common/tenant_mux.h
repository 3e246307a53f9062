// Mixed tenants: two transports on one network, chosen per flow class. The
// workload's urgent flows run on the main transport and its background flows
// on the background one, e.g. SAFS next to legacy DCTCP or Reno that obeys no
// grant: the incremental-deployment case.
//
// The mux is each host's sink and NIC source in the network; the children
// hand it their endpoints (TransportEnv::attach) instead of attaching to the
// network themselves. Arriving packets go to the child that owns the packet's
// flow; the NIC pulls from the two children in turn. Control packets the
// children push into the NIC queue, and their wakes of the NIC, go to the
// network's port directly, as they do for a transport alone.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "transport/transport.h"

namespace safs {

class TenantMux final : public Transport, private HostAttacher {
 public:
  using MakeTransport = std::function<std::unique_ptr<Transport>(TransportEnv&)>;

  // Builds the two children on copies of `env` (the run's). The main child
  // keeps env.seed; the background child gets background_seed(env.seed), so
  // neither draws the other's random numbers.
  TenantMux(const TransportEnv& env, const MakeTransport& make_main,
            const MakeTransport& make_background);
  ~TenantMux() override;

  static std::uint64_t background_seed(std::uint64_t run_seed);

  void start_flow(const FlowSpec& flow) override;
  TransportStats stats() const override;  // both children's, summed
  std::uint64_t delivered_bytes(std::uint32_t flow_id) const override;
  FlowCounters flow_counters(std::uint32_t flow_id) const override;
  std::size_t live_flows() const override;  // both children's
  void update_deadline(std::uint32_t flow_id, TimePs deadline_ps) override;
  // Announced transfers are the workload's (the main tenant's); so are the
  // host messages that carry them (kHostMessageFlowId).
  void announce_flow(const FlowSpec& planned) override;
  std::vector<MechanismCount> mechanism_stats() const override;  // both children's, summed
  void free_spare_memory() override;

  // The child that runs flows of class `c`, for tests and reports.
  const Transport& transport_of(FlowClass c) const { return *children_[tenant_of(c)]; }

 private:
  class HostEndpoint;
  enum Tenant : std::uint8_t { kMain = 0, kBackground = 1, kNotStarted = 2 };
  static constexpr std::size_t kTenants = 2;

  static Tenant tenant_of(FlowClass c) { return c == FlowClass::kBackground ? kBackground : kMain; }
  // The tenant of a started flow, or kNotStarted.
  Tenant tenant_of_flow(std::uint32_t flow_id) const {
    return flow_id < flow_tenant_.size() ? flow_tenant_[flow_id] : kNotStarted;
  }
  void attach_host(int host, PacketSink* receiver, PacketSource* source) override;

  std::array<TransportEnv, kTenants> child_env_;  // outlive the children
  std::vector<std::unique_ptr<HostEndpoint>> hosts_;
  std::array<std::unique_ptr<Transport>, kTenants> children_;
  Tenant building_ = kMain;  // the child whose endpoints attach_host receives
  // Per flow id (ids are dense), the tenant that started it: one byte a
  // flow, kept for the run (a released flow's packets are all gone, so none
  // asks for it again; the byte is what remains).
  std::vector<Tenant> flow_tenant_;
};

}  // namespace safs
