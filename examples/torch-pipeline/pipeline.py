"""One stage of a pipeline-parallel transformer, as a process of its own.

A small transformer (`--layers` TransformerEncoderLayers per stage, hidden
`--hidden`, `--sequence` tokens: 0.5 MiB activations with the defaults) is
trained with the GPipe, 1F1B or ZB-H1 schedule (schedules.py); activations
go forward and input gradients back through torch.distributed, over one of

  safs            the "safs" backend (safs.torch), each send hinted with its
                  no-bubble deadline: when the consumer op starts in the
                  plan (schedules.plan, from the ops' measured durations),
                  moved by how late the sender runs, updated after each op
  safs-fresh      the same with a new data connection per tensor (its
                  handshake and slow start each time) instead of reusing
                  the last one to that peer: what reuse is worth
  safs-paced      the same as safs with the contention fallback off: every
                  send paced at its grant even when someone else fills the
                  bottleneck (docs/runtime.md, "Contention fallback")
  safs-asap       the same as safs, each send due at once (slack 0): served
                  earliest first at line rate instead of just in time for
                  the plan, which the stages may run ahead of
  safs-ahead      the same as safs, each send announced to its receiver
                  when the op producing it starts (safs.torch.announce:
                  its size, the op's planned end, the consumer's deadline),
                  so it starts under a grant planned for it (docs/runtime.md,
                  "Transfers announced ahead")
  safs-edf        the same as safs with each receiver serving every urgent
                  send earliest deadline first at line rate, never just in
                  time (safs.torch.options(urgent_first=True))
  safs-parallel   the same as safs with tensors started together on a
                  contended path each on a connection of its own, instead
                  of one following another on one connection
                  (safs.torch.options(one_connection=False))
  gloo-preposted  gloo with every receive of an iteration posted at its
                  start (the strongest plain baseline)
  gloo            gloo with each receive posted when its op needs it

Each rank writes a JSON file: per iteration the iteration time, its bubble
(time not computing), exposed communication (time waiting for a tensor),
each tensor sent (kind, micro-batch, when isend was called) and each wait
for one (kind, micro-batch, when the wait began and ended; CLOCK_MONOTONIC,
which the stages' namespaces on one host share, so report.py can time a
transfer from one rank's isend to the other's receive), and for safs the
deadline misses and control bytes; and the last
iteration's ops (start, end) for the sim-to-real check (to_scenario.py).

Run by run.sh; alone: python3 pipeline.py --rank R --stages S --master HOST:PORT ...
"""

import argparse
import json
import sys
import time

import torch
import torch.distributed as dist

import schedules

COMMS = ("safs", "safs-fresh", "safs-paced", "safs-asap", "safs-ahead", "safs-edf",
         "safs-parallel", "safs-ownrate", "gloo-preposted", "gloo")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--stages", type=int, default=2)
    p.add_argument("--schedule", choices=schedules.SCHEDULES, default="1f1b")
    p.add_argument("--comm", choices=COMMS, default="safs")
    p.add_argument("--microbatches", type=int, default=8)
    p.add_argument("--iterations", type=int, default=4, help="measured, after one warm-up")
    p.add_argument("--layers", type=int, default=1)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--sequence", type=int, default=512)
    p.add_argument("--link-mbit", type=float, default=1000.0,
                   help="the bottleneck's rate, for the plan's transfer time")
    p.add_argument("--queue-kb", type=int, default=0,
                   help="the bottleneck's FIFO in KB, recorded (0: the testbed's 1000 packets)")
    p.add_argument("--unpaced-connections", type=int, choices=(0, 1), default=1,
                   help="SAFS's unpaced sends take a connection the kernel never paced")
    p.add_argument("--master", required=True, help="HOST:PORT of rank 0's rendezvous store")
    p.add_argument("--out", required=True, help="JSON file this rank writes")
    a = p.parse_args(argv)
    if not 2 <= a.stages <= 8 or not 0 <= a.rank < a.stages:
        p.error(f"--stages {a.stages} --rank {a.rank}: expected 2..8 stages and a rank below them")
    for name in ("microbatches", "iterations", "layers", "hidden", "sequence"):
        if getattr(a, name) < 1:
            p.error(f"--{name}: expected a positive whole number")
    if not 0 < a.link_mbit <= 1e7:  # NaN fails too
        p.error(f"--link-mbit {a.link_mbit}: expected a rate above 0 and at most 1e7 Mbit/s")
    if a.microbatches >= 100000:  # gradients' tags start at 100000 (Stage.tag)
        p.error(f"--microbatches {a.microbatches}: expected fewer than 100000")
    host, colon, port = a.master.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        p.error(f"--master {a.master!r}: expected HOST:PORT")
    if a.queue_kb < 0:
        p.error("--queue-kb: expected 0 (the testbed's 1000 packets) or a positive number of KB")
    return a


class Stage:
    def __init__(self, a):
        self.a = a
        self.last = a.rank == a.stages - 1
        torch.manual_seed(1000 + a.rank)
        layer = lambda: torch.nn.TransformerEncoderLayer(  # noqa: E731
            a.hidden, 4, 4 * a.hidden, dropout=0.0, batch_first=True)
        self.model = torch.nn.Sequential(*[layer() for _ in range(a.layers)])
        self.params = list(self.model.parameters())
        self.shape = (1, a.sequence, a.hidden)
        self.nbytes = a.sequence * a.hidden * 4
        self.ops = schedules.stage_ops(a.schedule, a.stages, a.microbatches, a.rank)
        self.durations = {"F": 0.0, "B": 0.0, "W": 0.0, "BW": 0.0}
        self.transfer_s = self.nbytes * 8 / (a.link_mbit * 1e6)

    # Tags: activations of micro-batch i use tag i, gradients 100000 + i.
    def tag(self, kind, mb):
        return mb if kind == "F" else 100000 + mb

    def iteration(self, record_ops):
        a = self.a
        inputs, outputs, grads_in = {}, {}, {}
        recvs = {}

        def post(kind, mb):
            buf = torch.empty(self.shape)
            src = a.rank - 1 if kind == "F" else a.rank + 1
            recvs[(kind, mb)] = (dist.irecv(buf, src=src, tag=self.tag(kind, mb)), buf)

        needs = [(k, mb) for k, mb in self.ops
                 if (k == "F" and a.rank > 0) or (k in ("B", "BW") and not self.last)]
        need_set = set(needs)
        plan = schedules.plan(a.schedule, a.stages, a.microbatches, self.durations, self.transfer_s)
        dist.barrier()
        t0 = time.monotonic_ns()
        cpu0, main_cpu0 = time.process_time(), time.thread_time()
        if a.comm != "gloo":
            for k, mb in needs:
                post(k, mb)
        waited_s = busy_s = 0.0
        pending_sends, log, sends, waits = [], [], [], []
        measured = {k: [] for k in self.durations}
        late_s = 0.0
        for kind, mb in self.ops:
            if (kind, mb) in need_set:
                if a.comm == "gloo":
                    post(kind, mb)
                w0 = time.monotonic_ns()
                work, buf = recvs.pop((kind, mb))
                work.wait()
                w1 = time.monotonic_ns()
                waited_s += (w1 - w0) / 1e9
                waits.append([kind, mb, w0, w1])
                if kind == "F":
                    inputs[mb] = buf.requires_grad_(True)
                else:
                    grads_in[mb] = buf
            start = time.monotonic_ns()
            if a.comm == "safs-ahead":
                self.announce(kind, mb, plan, t0, late_s, start)
            send = self.compute(kind, mb, inputs, outputs, grads_in)
            end = time.monotonic_ns()
            busy_s += (end - start) / 1e9
            measured[kind].append((end - start) / 1e9)
            log.append({"kind": kind, "mb": mb, "start_s": (start - t0) / 1e9, "end_s": (end - t0) / 1e9})
            # How late this stage runs against the plan: its consumers will be too.
            planned_end = plan[(a.rank, kind, mb)] + self.durations[kind]
            late_s = max(0.0, (end - t0) / 1e9 - planned_end) if any(self.durations.values()) else 0.0
            if send is not None:
                sends.append([kind, mb, time.monotonic_ns()])
                pending_sends.append(self.send(kind, mb, send, plan, t0, late_s))
            if a.safs:
                import safs.torch as st
                for work, consumer in pending_sends:
                    if not work.is_completed() and consumer is not None:
                        st.update(work, deadline_ns=t0 + int((consumer + late_s) * 1e9))
        drain0 = time.monotonic_ns()
        for work, _ in pending_sends:
            work.wait()
        drain1 = time.monotonic_ns()
        dist.barrier()
        iteration_s = (time.monotonic_ns() - t0) / 1e9
        risks = self.risks(sends) if a.safs else []
        for k, values in measured.items():
            if values:
                self.durations[k] = sum(values) / len(values)
        # Where the bubble goes besides waiting for tensors: waiting at the
        # end for this stage's own sends to complete (SAFS: the receiver's
        # Done; gloo: the bytes written) and the closing barrier; and the CPU
        # time of this thread (the ops, Python, the calls into the transport)
        # and of the process's other threads (the transport's).
        result = {"iteration_s": iteration_s, "bubble_s": iteration_s - busy_s,
                  "exposed_comm_s": waited_s, "sends": sends, "waits": waits,
                  "send_drain_s": (drain1 - drain0) / 1e9,
                  "barrier_s": iteration_s - (drain1 - t0) / 1e9,
                  "cpu_s": time.process_time() - cpu0, "main_cpu_s": time.thread_time() - main_cpu0,
                  "busy_s": busy_s}
        if a.safs:
            result["risks"] = risks
        if record_ops:
            result["ops"] = log
        return result

    def risks(self, sends):
        """This iteration's sends reported at risk (safs.torch.risks(); all of
        them have ended, so no report of theirs is still to come), each as
        [kind, micro-batch, reported at (monotonic ns), projected lateness
        (ns), planned]: the first report of its flow, and the receiver's
        warning of its plan (planned: safs-ahead only, before the send
        existed; no projection)."""
        import safs.torch as st
        kind_of = {self.tag(kind, mb): (kind, mb) for kind, mb, _ in sends}
        first = {}
        for risk in st.risks():
            key = (risk["tag"], risk["planned"])
            if risk["tag"] in kind_of and key not in first:
                first[key] = [*kind_of[risk["tag"]], risk["reported_at_ns"],
                              risk["projected_lateness_ns"], risk["planned"]]
        return list(first.values())

    def compute(self, kind, mb, inputs, outputs, grads_in):
        """Runs one op; returns the tensor to send, if any."""
        if kind == "F":
            x = inputs.get(mb)
            if x is None:  # the first stage makes its micro-batch
                g = torch.Generator().manual_seed(mb)
                x = torch.randn(self.shape, generator=g)
                inputs[mb] = x
            y = self.model(x)
            outputs[mb] = y
            return None if self.last else y.detach().contiguous()
        y, x = outputs[mb], inputs[mb]
        if self.last:
            loss = y.pow(2).mean()
            y, grad = loss, None
        else:
            grad = grads_in[mb]
        if kind == "BW":
            torch.autograd.backward(y, grad)
            for p in self.params:
                p.grad = None  # no optimizer step: each iteration is alike
            return x.grad.contiguous() if x.requires_grad else None
        if kind == "B":
            if not x.requires_grad:
                return None
            (gx,) = torch.autograd.grad(y, [x], grad, retain_graph=True)
            return gx.contiguous()
        torch.autograd.grad(y, self.params, grad)  # W
        return None

    def consumer_start(self, kind, mb, plan):
        """When the op consuming this op's tensor starts in the plan (None:
        no consumer, or no durations measured yet)."""
        consumer = schedules.consumer_of(kind, self.a.stages, self.a.rank, self.a.schedule)
        if consumer is None or not any(self.durations.values()):
            return None
        return plan[(consumer[0], consumer[1], mb)]

    def announce(self, kind, mb, plan, t0, late_s, now_ns):
        """Tells the receiver of the tensor this op will send, as it starts."""
        a = self.a
        sends = (kind == "F" and not self.last) or (kind in ("B", "BW") and a.rank > 0)
        when = self.consumer_start(kind, mb, plan)
        if not sends or when is None:
            return
        import safs.torch as st
        st.announce(self.nbytes, a.rank + 1 if kind == "F" else a.rank - 1, self.tag(kind, mb),
                    starts_in_ns=int(self.durations[kind] * 1e9),
                    deadline_ns=max(now_ns, t0 + int((when + late_s) * 1e9)))

    def send(self, kind, mb, tensor, plan, t0, late_s):
        a = self.a
        dst = a.rank + 1 if kind == "F" else a.rank - 1
        when = self.consumer_start(kind, mb, plan)
        if a.comm == "safs-asap":
            import safs.torch as st
            st.hint(self.tag(kind, mb), slack_ns=0)
            return dist.isend(tensor, dst=dst, tag=self.tag(kind, mb)), None  # never moved
        if a.safs and when is not None:
            import safs.torch as st
            st.hint(self.tag(kind, mb), deadline_ns=t0 + int((when + late_s) * 1e9))
        return dist.isend(tensor, dst=dst, tag=self.tag(kind, mb)), when


def tcp_setting(name):
    """One of this host's (namespace's) TCP settings, e.g. its default
    congestion control: every connection of the run has it, the
    competitor's too (run.sh, CC and TCP_IDLE_RESTART)."""
    try:
        with open(f"/proc/sys/net/ipv4/{name}") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def main(argv):
    a = parse_args(argv)
    a.safs = a.comm.startswith("safs")
    torch.set_num_threads(1)
    host, port = a.master.rsplit(":", 1)
    if a.safs:
        import safs.torch as st
        st.options(quiet=True, reuse_connections=(a.comm != "safs-fresh"),
                   contention_fallback=(a.comm != "safs-paced"),
                   urgent_first=(a.comm == "safs-edf"),
                   one_connection=(a.comm != "safs-parallel"),
                   judge_by_path_rate=(a.comm != "safs-ownrate"),
                   unpaced_connections=bool(a.unpaced_connections))
    dist.init_process_group("safs" if a.safs else "gloo",
                            init_method=f"tcp://{host}:{port}", rank=a.rank, world_size=a.stages)
    stage = Stage(a)
    stage.iteration(record_ops=False)  # warm-up: measures the op durations
    before = None
    group = dist.distributed_c10d._get_default_group()
    if a.safs:
        import safs.torch as st
        before = st.stats()
        background_before = group.background_bytes
        calls_before = group.endpoint.loop_calls
    t_measured = time.monotonic()
    iterations = [stage.iteration(record_ops=(i == a.iterations - 1)) for i in range(a.iterations)]
    measured_s = time.monotonic() - t_measured
    report = {"rank": a.rank, "stages": a.stages, "schedule": a.schedule, "comm": a.comm,
              "unpaced_connections": a.unpaced_connections,
              "microbatches": a.microbatches, "message_bytes": stage.nbytes,
              "durations_s": stage.durations, "link_mbit": a.link_mbit, "queue_kb": a.queue_kb,
              "iterations": iterations,
              "measured_s": measured_s, "tcp_congestion_control": tcp_setting("tcp_congestion_control"),
              "tcp_slow_start_after_idle": tcp_setting("tcp_slow_start_after_idle")}
    if before is not None:
        after = st.stats()
        report["deadline_misses"] = after["deadline_misses"] - before["deadline_misses"]
        # Its sends projected to miss their deadlines (docs/runtime.md, "Risk").
        report["risk_reports"] = after["risk_reports"] - before["risk_reports"]
        report["control_bytes"] = (after["control_bytes_sent"] - before["control_bytes_sent"]
                                   + after["control_bytes_received"] - before["control_bytes_received"])
        report["data_connections_opened"] = (after["data_connections_opened"]
                                             - before["data_connections_opened"])
        # Sends that waited to follow an earlier one on its connection
        # (docs/runtime.md, "Contention fallback").
        report["flows_followed"] = after["flows_followed"] - before["flows_followed"]
        # Sends announced ahead, and those that started under their plan.
        report["plans_sent"] = after["plans_sent"] - before["plans_sent"]
        report["flows_on_plans"] = after["flows_on_plans"] - before["flows_on_plans"]
        # As a receiver: its planned flows judged at their last byte, by
        # whether their plan was warned of and whether they ended late.
        for key in ("plans_warned_late", "plans_warned_on_time", "plans_unwarned_late",
                    "plans_unwarned_on_time"):
            report[key] = after[key] - before[key]
        # Times its paths were found contended (docs/runtime.md, "Contention fallback").
        report["contended_paths"] = after["contended_paths"] - before["contended_paths"]
        # Times its receiver turned to EDF at line rate while its flows fell
        # short on a full downlink (docs/runtime.md, "Namespace testbed").
        report["shortfall_episodes"] = after["shortfall_episodes"] - before["shortfall_episodes"]
        # What its granted sends delivered against their grants, per 20 ms
        # window: counts by tenths of the grant, then above it; windows with
        # a retransmission and with a queue; the largest queue (whole run).
        report["grant_delivery_windows"] = [
            x - y for x, y in zip(after["grant_delivery_windows"], before["grant_delivery_windows"])]
        report["lossy_windows"] = after["lossy_windows"] - before["lossy_windows"]
        report["queued_windows"] = after["queued_windows"] - before["queued_windows"]
        report["max_queue_delay_ns"] = after["max_queue_delay_ns"]
        # Calls from Python into the endpoint's thread (Endpoint.loop_calls).
        report["loop_calls"] = group.endpoint.loop_calls - calls_before
        # Background taken by this rank's endpoint while measuring.
        report["background_bytes"] = group.background_bytes - background_before
    dist.destroy_process_group()
    with open(a.out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
