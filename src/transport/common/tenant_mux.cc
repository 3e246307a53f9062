#include "transport/common/tenant_mux.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/rng.h"
#include "net/network.h"

namespace safs {

// One host as the network sees it: the sink of its arriving packets and the
// source of its NIC, over the two children's endpoints of the host.
class TenantMux::HostEndpoint final : public PacketSink, public PacketSource {
 public:
  HostEndpoint(const TenantMux& mux, int host) : mux_(mux), host_(host) {}

  void set_child(Tenant tenant, PacketSink* receiver, PacketSource* source) {
    receivers_[tenant] = receiver;
    sources_[tenant] = source;
  }
  bool complete() const {
    return receivers_[kMain] != nullptr && receivers_[kBackground] != nullptr;
  }

  void receive(Packet& packet) override {
    const Tenant tenant =
        packet.flow_id == kHostMessageFlowId ? kMain : mux_.tenant_of_flow(packet.flow_id);
    if (tenant == kNotStarted) {
      throw std::logic_error("host " + std::to_string(host_) + ": packet of flow " +
                             std::to_string(packet.flow_id) + ", which no tenant started");
    }
    receivers_[tenant]->receive(packet);
  }

  // Round robin over the tenants, like two sockets sharing one NIC queue:
  // each pull asks first the tenant that did not send last, so neither
  // tenant's share of the NIC starves the other; a tenant with nothing to
  // send now is skipped (it wakes the NIC when it has a packet).
  Packet* pull_packet() override {
    for (std::size_t i = 0; i < kTenants; ++i) {
      const std::size_t tenant = (next_ + i) % kTenants;
      if (sources_[tenant] == nullptr) continue;
      if (Packet* packet = sources_[tenant]->pull_packet()) {
        next_ = (tenant + 1) % kTenants;
        return packet;
      }
    }
    return nullptr;
  }
  // Each child wakes the NIC itself when it has a packet.
  bool idle() const override {
    return std::all_of(sources_.begin(), sources_.end(), [](const PacketSource* source) {
      return source == nullptr || source->idle();
    });
  }

 private:
  const TenantMux& mux_;
  int host_;
  std::array<PacketSink*, kTenants> receivers_{};
  std::array<PacketSource*, kTenants> sources_{};
  std::size_t next_ = kMain;  // the tenant asked first at the next pull
};

namespace {

TransportEnv child_env(const TransportEnv& env, std::uint64_t seed, HostAttacher& attach) {
  TransportEnv child = env;
  child.seed = seed;
  child.attach = &attach;
  return child;
}

}  // namespace

std::uint64_t TenantMux::background_seed(std::uint64_t run_seed) {
  return mix_keys(run_seed, stable_hash("background tenant"));
}

TenantMux::TenantMux(const TransportEnv& env, const MakeTransport& make_main,
                     const MakeTransport& make_background)
    : child_env_{child_env(env, env.seed, *this),
                 child_env(env, background_seed(env.seed), *this)} {
  // Attached before the children are built: a child may compute routes in
  // its constructor, and a route ends at the receiving host's sink.
  for (int h = 0; h < env.net.num_hosts(); ++h) {
    hosts_.push_back(std::make_unique<HostEndpoint>(*this, h));
    env.net.attach_host(h, hosts_.back().get(), hosts_.back().get());
  }
  building_ = kMain;
  children_[kMain] = make_main(child_env_[kMain]);
  building_ = kBackground;
  children_[kBackground] = make_background(child_env_[kBackground]);
  for (const auto& host : hosts_) {
    if (!host->complete()) {
      throw std::logic_error("tenant mux: a transport did not attach an endpoint to every host");
    }
  }
}

TenantMux::~TenantMux() = default;

void TenantMux::attach_host(int host, PacketSink* receiver, PacketSource* source) {
  hosts_.at(static_cast<std::size_t>(host))->set_child(building_, receiver, source);
}

void TenantMux::start_flow(const FlowSpec& flow) {
  if (flow_tenant_.size() <= flow.id) flow_tenant_.resize(flow.id + 1, kNotStarted);
  const Tenant tenant = tenant_of(flow.flow_class);
  flow_tenant_[flow.id] = tenant;
  children_[tenant]->start_flow(flow);
}

void TenantMux::announce_flow(const FlowSpec& planned) {
  if (tenant_of(planned.flow_class) == kMain) children_[kMain]->announce_flow(planned);
}

// Both tenants' counts, summed by name (the background tenant may be SAFS too).
std::vector<MechanismCount> TenantMux::mechanism_stats() const {
  std::vector<MechanismCount> counts = children_[kMain]->mechanism_stats();
  for (const MechanismCount& c : children_[kBackground]->mechanism_stats()) {
    const auto same = std::find_if(counts.begin(), counts.end(),
                                   [&](const MechanismCount& m) { return m.name == c.name; });
    if (same != counts.end()) {
      same->value += c.value;
    } else {
      counts.push_back(c);
    }
  }
  return counts;
}

void TenantMux::free_spare_memory() {
  for (const auto& child : children_) child->free_spare_memory();
}

TransportStats TenantMux::stats() const {
  TransportStats sum;
  for (const auto& child : children_) sum += child->stats();
  return sum;
}

std::size_t TenantMux::live_flows() const {
  return children_[kMain]->live_flows() + children_[kBackground]->live_flows();
}

std::uint64_t TenantMux::delivered_bytes(std::uint32_t flow_id) const {
  const Tenant tenant = tenant_of_flow(flow_id);
  return tenant == kNotStarted ? 0 : children_[tenant]->delivered_bytes(flow_id);
}

FlowCounters TenantMux::flow_counters(std::uint32_t flow_id) const {
  const Tenant tenant = tenant_of_flow(flow_id);
  return tenant == kNotStarted ? FlowCounters{} : children_[tenant]->flow_counters(flow_id);
}

// A flow not started yet has no state in either child, which would ignore
// the update alike.
void TenantMux::update_deadline(std::uint32_t flow_id, TimePs deadline_ps) {
  const Tenant tenant = tenant_of_flow(flow_id);
  if (tenant != kNotStarted) children_[tenant]->update_deadline(flow_id, deadline_ps);
}

}  // namespace safs
