#include "transport/safs/safs_transport.h"

#include <algorithm>
#include <string>

#include "transport/common/new_packet.h"
#include "transport/safs/safs_receiver_agent.h"
#include "transport/safs/safs_sender_agent.h"

namespace safs {

SafsTransport::SafsTransport(TransportEnv& env, const WindowConfig& window,
                             const SafsConfig& config, std::unique_ptr<CongestionControl> control)
    : WindowTransport(env, window, std::move(control)), config_(config) {
  handle_at(safs_header::kGrant, Side::kSender);
  handle_at(safs_header::kMeta, Side::kReceiver);
  handle_at(safs_header::kReport, Side::kReceiver);
  handle_at(safs_header::kAnnounce, Side::kHost);
  handle_at(safs_header::kPlannedGrant, Side::kHost);
  handle_at(safs_header::kStreamGrant, Side::kHost);
  config_.blind_budget.packet_bytes = env.mtu_bytes;
  for (int h = 0; h < env.net.num_hosts(); ++h) {
    senders_.push_back(std::make_unique<SenderAgent>(*this, h));
    core::ReceiverConfig rc = config_.receiver;
    rc.allocator.link_bps = static_cast<double>(env.net.nic(h).link().rate_bps);
    receivers_.push_back(std::make_unique<ReceiverAgent>(*this, h, rc));
  }
}

SafsTransport::~SafsTransport() = default;

void SafsTransport::on_sender_start(SenderFlow& flow) { sender_agent(flow).on_start(flow); }

WindowTransport::SendGate SafsTransport::send_gate(SenderFlow& flow) {
  return sender_agent(flow).gate(flow);
}

void SafsTransport::on_segment_sent(SenderFlow& flow, Packet& packet) {
  sender_agent(flow).on_segment_sent(flow, packet);
}

void SafsTransport::on_deadline_changed(SenderFlow& flow) {
  sender_agent(flow).on_deadline_changed(flow);
}

void SafsTransport::on_sender_complete(SenderFlow& flow) { sender_agent(flow).on_complete(flow); }

void SafsTransport::on_sender_message(SenderFlow& flow, const Packet& packet) {
  if (packet.message_type == safs_header::kGrant) sender_agent(flow).on_grant(flow, packet);
}

void SafsTransport::on_ack_arrived(SenderFlow& flow, const Packet& ack) {
  if (safs_header::ack_carries_grant(ack)) sender_agent(flow).on_grant(flow, ack);
}

void SafsTransport::on_ack_built(ReceiverFlow& flow, Packet& ack) {
  receiver_agent(flow).on_ack_built(flow, ack);
}

bool SafsTransport::extension_idle(const SenderFlow& flow) const {
  return sender_agent(flow).holds_no_reference(flow);
}

void SafsTransport::on_receiver_start(ReceiverFlow& flow) { receiver_agent(flow).on_start(flow); }

void SafsTransport::on_segment_received(ReceiverFlow& flow, const Packet& packet, bool first_copy) {
  receiver_agent(flow).on_segment(flow, packet, first_copy);
}

void SafsTransport::on_receiver_complete(ReceiverFlow& flow) {
  receiver_agent(flow).on_complete(flow);
}

void SafsTransport::on_receiver_message(ReceiverFlow& flow, const Packet& packet) {
  ReceiverAgent& agent = receiver_agent(flow);
  if (packet.message_type == safs_header::kMeta) {
    agent.on_meta(flow, packet);
  } else if (packet.message_type == safs_header::kReport) {
    agent.on_report(flow, packet);
  }
}

void SafsTransport::announce_flow(const FlowSpec& planned) {
  if (config_.announce_ahead) senders_[planned.src]->announce(planned);
}

std::vector<MechanismCount> SafsTransport::mechanism_stats() const {
  std::vector<MechanismCount> counts;
  if (config_.announce_ahead) {
    MechanismCount received{"announcements"}, infeasible{"announcements_infeasible"},
        dropped{"announcements_dropped"}, given_up{"announcements_given_up"},
        on_plans{"flows_on_plans"}, warned_late{"announced_warned_late"},
        warned_on_time{"announced_warned_on_time"}, unwarned_late{"announced_unwarned_late"},
        unwarned_on_time{"announced_unwarned_on_time"};
    for (const auto& receiver : receivers_) {
      const core::ReceiverScheduler& scheduler = receiver->scheduler();
      received.value += scheduler.announcements_received();
      infeasible.value += scheduler.announcements_infeasible();
      dropped.value += scheduler.announcements_dropped();
      given_up.value += scheduler.announcements_given_up();
      const core::AnnouncedOutcomes& o = scheduler.announced_outcomes();
      warned_late.value += o.warned_late;
      warned_on_time.value += o.warned_on_time;
      unwarned_late.value += o.unwarned_late;
      unwarned_on_time.value += o.unwarned_on_time;
    }
    for (const auto& sender : senders_) on_plans.value += sender->flows_on_plans();
    counts.insert(counts.end(), {received, infeasible, dropped, given_up, on_plans, warned_late,
                                 warned_on_time, unwarned_late, unwarned_on_time});
  }
  if (config_.grant_carrier_wait_ps > 0) {
    MechanismCount carried{"grants_on_acks"}, waited{"grants_after_waiting"},
        decreases{"decreases_held_for_acks"}, not_sent{"held_grants_not_sent"},
        longest_ns{"longest_grant_hold_ns"};
    for (const auto& receiver : receivers_) {
      carried.value += receiver->grants_on_acks();
      waited.value += receiver->grants_after_waiting();
      decreases.value += receiver->decreases_held();
      not_sent.value += receiver->held_grants_not_sent();
      longest_ns.value = std::max<std::uint64_t>(
          longest_ns.value, static_cast<std::uint64_t>(receiver->longest_hold_ps() / kPsPerNs));
    }
    counts.insert(counts.end(), {carried, waited, decreases, not_sent, longest_ns});
  }
  if (config_.report_grant_reasons) {
    core::GrantCounts sum;
    for (const auto& receiver : receivers_) {
      const core::GrantCounts& c = receiver->scheduler().grant_counts();
      for (std::size_t r = 0; r < core::kGrantReasons; ++r) {
        sum.urgent[r] += c.urgent[r];
        sum.background[r] += c.background[r];
      }
    }
    for (const bool urgent : {true, false}) {
      for (std::size_t r = 0; r < core::kGrantReasons; ++r) {
        const char* reason = core::grant_reason_name(static_cast<core::GrantReason>(r));
        counts.push_back({std::string(urgent ? "grants_urgent_" : "grants_background_") + reason,
                          urgent ? sum.urgent[r] : sum.background[r]});
      }
    }
  }
  return counts;
}

void SafsTransport::on_host_message(const Packet& packet) {
  const auto host = static_cast<std::size_t>(packet.dst_host);
  if (packet.message_type == safs_header::kAnnounce) {
    receivers_[host]->on_announce(packet);
  } else if (packet.message_type == safs_header::kPlannedGrant) {
    senders_[host]->on_planned_grant(packet);
  } else if (packet.message_type == safs_header::kStreamGrant) {
    senders_[host]->on_stream_grant(packet);
  }
}

const Route& SafsTransport::host_route(int from, int to) {
  const auto key = std::make_pair(from, to);
  auto it = host_routes_.find(key);
  if (it == host_routes_.end()) {
    it = host_routes_.emplace(key, env().net.route(from, to, kHostMessageFlowId)).first;
  }
  return it->second;
}

Packet& SafsTransport::new_host_message(int from, int to, std::uint8_t message_type) {
  FlowSpec between;
  between.id = kHostMessageFlowId;
  between.src = from;
  between.dst = to;
  return new_control_packet(env(), between, host_route(from, to), false, message_type,
                            config_.control_priority);
}

void SafsTransport::send_host_message(Packet& packet) {
  std::uint64_t no_flow_count = 0;  // the flow does not exist yet: only the totals count it
  count_control(mutable_stats(), packet, false, no_flow_count);
  forward(packet);
}

std::uint8_t SafsTransport::ack_priority(const ReceiverFlow& flow, const Packet& data) const {
  return std::max(ack_class_priority(flow.spec), data.priority);
}

}  // namespace safs
