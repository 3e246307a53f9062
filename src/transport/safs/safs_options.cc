#include "transport/safs/safs_options.h"

namespace safs {

KnobTable<SafsOptions> safs_knobs() {
  KnobTable<SafsOptions> t;
  t.include(dctcp_knobs(), SAFS_FIELD(dctcp));
  t.redoc("initial_alpha",
          "Alpha before the first window. 0 for SAFS: its flows are paced below the receiver's "
          "capacity, so a start-up burst should not halve their windows (DCTCP uses 1).");
  t.number("usable_fraction", "", SAFS_FIELD(safs.receiver.allocator.usable_fraction), 0.1, 1,
           "Share of the receiver link the grants may fill (1 - u); the rest absorbs "
           "unscheduled bytes and estimation error. Ours (background.md §5.3 suggests u = 0.05).");
  t.number("overload_usable_fraction", "",
           SAFS_FIELD(safs.receiver.allocator.overload_usable_fraction), 0.1, 1,
           "The same when the urgent set cannot all be on time: lateness is GPU idle time, so "
           "by default every bit goes to urgent work (ours; docs/safs.md).");
  t.number("background_floor_fraction", "",
           SAFS_FIELD(safs.receiver.allocator.background_floor_fraction), 0, 0.5,
           "Share of the budget reserved for background flows when any exist, so no stream of "
           "urgent work starves them forever (ours).");
  t.number("demand_margin", "", SAFS_FIELD(safs.receiver.allocator.demand.margin), 1, 3,
           "beta: ask for this much more than the bare no-bubble rate (background.md §5.2).");
  t.time("headroom_us", "us", kPsPerUs, SAFS_FIELD(safs.receiver.allocator.demand.headroom_ps), 0,
         1e6,
         "Subtracted from every flow's time left: control delay + RTT + one MTU + epsilon "
         "(background.md §5.2), sized for 100 Gbit/s leaf-spine paths.");
  t.time("rtt_us", "us", kPsPerUs, SAFS_FIELD(safs.receiver.allocator.rtt_ps), 0, 1e6,
         "RTT used for the low-slack threshold 2 RTT + R/(10 C) (background.md §5.3) and by "
         "slack_adaptive.");
  t.number("change_threshold", "", SAFS_FIELD(safs.receiver.grants.change_threshold), 0, 1,
           "theta: a grant is re-sent when the rate moves by more than this fraction "
           "(background.md §5.4).");
  t.flag("only_needed_decreases", SAFS_FIELD(safs.receiver.grants.only_needed_decreases),
         "When a reallocation's increases would take the granted rates over the budget: true, "
         "a background flow's increase takes only what is free (the rest once other changes "
         "pass theta) and only as many decreases below theta are sent as cover the rest, the "
         "largest first; false, every decrease below theta is sent (the rule before; it costs "
         "a grant per flow whenever one fair share moves). docs/safs.md.");
  t.time("lease_us", "us", kPsPerUs, SAFS_FIELD(safs.receiver.grants.validity_ps), 1, 1e7,
         "Grant validity. Longer than background.md's max(8 RTT, 100 us): decreases are sent "
         "explicitly, so the lease only bounds how long a stale rate survives a failure, and a "
         "longer one amortises control further.");
  t.time("refresh_margin_us", "us", kPsPerUs, SAFS_FIELD(safs.receiver.grants.refresh_margin_ps), 0,
         1e6, "Re-send a grant when less than this is left of its lease (about 2 RTT).");
  t.time("control_delay_us", "us", kPsPerUs, SAFS_FIELD(safs.receiver.grants.control_delay_ps), 0,
         1e6,
         "Bound on one-way grant delivery: increases wait this long after decreases (break "
         "before make).");
  t.time("reallocate_every_us", "us", kPsPerUs, SAFS_FIELD(safs.receiver.reallocate_every_ps), 1,
         1e6, "Reallocate at least this often while flows are active (demands drift).");
  t.integer("unscheduled_bytes", "bytes", SAFS_FIELD(safs.unscheduled_bytes), 0, 1e12,
            "Bytes a flow sends before its first grant; 0 = one bandwidth-delay product of its "
            "path.");
  t.number("whole_flow_blind_bdps", "", SAFS_FIELD(safs.whole_flow_blind_bdps), 1, 1e6,
           "With unscheduled_bytes = 0: an urgent flow of at most this many bandwidth-delay "
           "products goes entirely unscheduled, so its rest does not wait for a grant behind the "
           "blind bytes of flows its host started after it (background flows keep one BDP). 1: "
           "only the first BDP goes blind.");
  t.time("batch_changes_us", "us", kPsPerUs, SAFS_FIELD(safs.batch_changes_ps), 0, 1e4,
         "Arrivals, timestamp moves and sender reports at a receiver within this window share "
         "one reallocation, so a burst of N arrivals costs one round of grants, not N "
         "(completions reallocate at once).");
  t.time("grant_carrier_wait_us", "us", kPsPerUs, SAFS_FIELD(safs.grant_carrier_wait_ps), 0, 1e3,
         "0: every grant is a packet of its own. Above 0, a grant rides an ACK of its flow: at "
         "once when that flow's data moved the allocation, else the flow's next ACK when its next "
         "segment is due within this long (and no longer than control_delay_us leaves after its "
         "flight); if none comes it goes alone. docs/safs.md, \"Grants on ACKs\".");
  t.time("first_grant_wait_us", "us", kPsPerUs, SAFS_FIELD(safs.first_grant_wait_ps), 0, 1e7,
         "How long a flow that never got a grant waits before falling back to its window "
         "alone.");
  t.toggle("background_srpt", SAFS_FIELD(safs.receiver.allocator.background),
           core::BackgroundPolicy::kMaxMinFair, core::BackgroundPolicy::kShortestRemainingFirst,
           "true: background flows share leftover by shortest remaining first; false: max-min "
           "fair.");
  t.flag("urgent_first", SAFS_FIELD(safs.receiver.allocator.urgent_first),
         "false: urgent flows with slack get just their no-bubble rate and background the rest "
         "(just in time). true: leftover goes to urgent flows first, so they finish as early as "
         "EDF at line rate.");
  t.flag("slack_adaptive", SAFS_FIELD(safs.receiver.allocator.slack_adaptive),
         "true: an urgent flow whose slack is under line_rate_slack_rtts RTTs, or whose "
         "remaining bytes fit in one bandwidth-delay product, takes all it can in service order "
         "(as under urgent_first); the others get their no-bubble rate. false: every urgent "
         "flow as urgent_first says.");
  t.number("line_rate_slack_rtts", "RTTs", SAFS_FIELD(safs.receiver.allocator.line_rate_slack_rtts),
           0, 1e6,
           "With slack_adaptive: the slack, in units of rtt_us, under which an urgent flow "
           "goes at line rate.");
  t.flag("urgent_over_blind_background", SAFS_FIELD(safs.receiver.urgent_over_blind_background),
         "true: the receiver holds no room in the urgent flows' budget for blind background "
         "arrivals, which the switches serve below granted urgent data (priority 2 against 3-5), "
         "only in background's own. false: every blind arrival is held out of the whole budget "
         "(docs/safs.md, \"Urgent over blind background\").");
  t.flag("untimed_urgent", SAFS_FIELD(safs.receiver.allocator.untimed_urgent_before_background),
         "true: an urgent flow without a no-bubble timestamp (lost, or never derived) takes "
         "leftover before background, as a static priority class would serve it. false: it is "
         "scheduled as background, having no timestamp to plan against.");
  t.time("report_horizon_us", "us", kPsPerUs, SAFS_FIELD(safs.uplink_report.horizon_ps), 0, 1e6,
         "A sender reports that its uplink limits a flow only when the flows served before it "
         "hold the uplink at least this long; a shorter hold ends before the receiver could "
         "use the report. 0: report every limit.");
  t.flag("pace_reports", SAFS_FIELD(safs.uplink_report.paced),
         "true: a flow's uplink report changes at most once per report_horizon_us (later moves "
         "wait, then the latest goes), and a grant above the reported rate repeats the report "
         "only when the receiver sent it more than two control delays after the report (it had "
         "the report: it was lost). false: every move past the threshold is reported at once "
         "and any such grant repeats it (the rule before; docs/safs.md).");
  t.flag("uplink_by_deadline", SAFS_FIELD(safs.uplink_share.urgent_by_deadline),
         "true: a sender serves its urgent flows in no-bubble timestamp order (EDF). false: "
         "least slack first, an order that changes as flows drain and waits, each change a "
         "report to each receiver involved (docs/safs.md, \"Coordinated senders\").");
  t.flag("report_keeps_cap", SAFS_FIELD(safs.uplink_report.keep_cap),
         "true: a flow its uplink stops limiting is told what the uplink can give it while the "
         "flows ahead hold it past report_horizon_us, not \"no limit\" (which has its receiver "
         "grant its whole share, and the uplink limit it again); only where the cap binds (the "
         "flow's grant is at it).");
  t.flag("grant_background", SAFS_FIELD(safs.grant_background),
         "true: background flows are granted (max-min or shortest remaining first, after the "
         "urgent flows). false: they get no grants and go under their window alone at the "
         "lowest priority (the fallback's); receivers leave them out of their allocation and "
         "leave what the urgent flows do not need free for them (docs/safs.md).");
  t.flag("stream_leases", SAFS_FIELD(safs.stream_leases),
         "true: a finished urgent flow's lease stays with its stream (same sender, receiver "
         "and class) until it ends, and the stream's next transfer starts under it at once: no "
         "blind first BDP, no grant round trip. The receiver keeps the lease's rate free "
         "meanwhile.");
  t.flag("announce_ahead", SAFS_FIELD(safs.announce_ahead),
         "true: when an op starts, the sender announces each urgent transfer the op will "
         "launch (size, projected start, no-bubble timestamp) unless it will go whole blind; "
         "the receiver plans it in from announce_lead_us before its start and grants it, so it "
         "starts under that grant (no blind bytes, no grant round trip). false: a receiver "
         "learns a flow from its first packet.");
  t.time("announce_lead_us", "us", kPsPerUs, SAFS_FIELD(safs.receiver.announce_lead_ps), 0, 1e6,
         "With announce_ahead: an announced transfer enters the receiver's allocation, and is "
         "granted, this long before its projected start (its grant must reach the sender "
         "first; ours).");
  t.flag("background_streams", SAFS_FIELD(safs.background_streams),
         "true: a sender's background flows to one receiver that need grants form one stream: "
         "the receiver allocates and grants the stream as one flow, and the sender paces the "
         "stream's flows together at its rate, so background flows coming and going cost no "
         "grants and a new one starts under the stream's grant. false: every background flow "
         "is granted on its own.");
  t.flag("schedule_blind_flows", SAFS_FIELD(safs.schedule_blind_flows),
         "false: a flow its sender sends entirely blind (it fits its blind budget) is left out "
         "of the receiver's allocation, its bytes counted as blind arrivals only. true: it is "
         "allocated and granted a rate it cannot use, taken from flows that could (the rule "
         "before; docs/safs.md).");
  t.flag("rate_within_window", SAFS_FIELD(safs.rate_within_window),
         "true: a granted flow is paced at min(grant, window / smoothed RTT), so ECN marks and "
         "losses from fabric links that no receiver budgets (ECMP collisions) slow it. false: "
         "paced at its grant, the window only caps what is in flight, which it rarely reaches.");
  t.flag("learn_blind_budget", SAFS_FIELD(safs.learn_blind_budget),
         "true: a sender that lost blind bytes to a receiver caps its later flows' blind bytes "
         "there (halved at each such loss, one packet back per blind_budget_growth_us without "
         "one), so repeated incasts into a shallow buffer stop overflowing it. false: every "
         "flow sends its full blind budget.");
  t.flag("blind_cap_as_window", SAFS_FIELD(safs.blind_cap_as_window),
         "true: a learned blind cap bounds the window of a flow that would go whole blind (it "
         "still goes whole blind, clocked by its ACKs, and needs no grant). false: it bounds "
         "the flow's blind bytes, and the rest waits for a grant.");
  t.flag("report_grant_reasons", SAFS_FIELD(safs.report_grant_reasons),
         "Diagnostic. true: summary.json's transport_stats also counts the grants receivers "
         "sent, by reason, for urgent and background flows (grants_urgent_first, ..._increase, "
         "..._decrease, ..._priority, ..._resume, ..._refresh, and the same for background): "
         "where the control traffic goes. false: not reported.");
  t.number("blind_budget_decrease", "", SAFS_FIELD(safs.blind_budget.decrease_factor), 0.05, 1,
           "The learned blind cap after a loss, as a fraction of what the flow sent blind: "
           "TCP's multiplicative decrease (RFC 5681).");
  t.time("blind_budget_growth_us", "us", kPsPerUs, SAFS_FIELD(safs.blind_budget.growth_interval_ps),
         0, 1e9,
         "The learned blind cap grows back by one packet per this much time without a blind "
         "loss to the receiver; 0: never. Slow on purpose (measured on afd-shallow: "
         "docs/safs.md).");
  return t;
}

}  // namespace safs
