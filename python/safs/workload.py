"""Workloads written in Python: their callbacks run inside the simulation.

Subclass ``safs.Workload`` and give instances to ``Scenario.run(workloads=[...])``;
they run beside the scenario's own workloads (its flows, its graph). The run
calls ``on_start(ctx)`` at time 0, and ``on_flow_done(ctx, flow)`` when a
flow the workload launched completes; ``ctx`` (a ``safs.WorkloadContext``)
launches flows (``ctx.launch``), sets timers (``ctx.after``) and tells the
time (``ctx.now_us``). A workload is finished when nothing of its own is
pending, no flow in flight and no timer set; the run waits for it and for
the flows it launched, which are measured flows in flows.csv like any other.

    class Chain(safs.Workload):
        "One 1 MB flow after the other from host 1 to host 0, three in all."
        def __init__(self):
            self.left = 3
        def on_start(self, ctx):
            ctx.launch(1, 0, size_bytes=1_000_000)
        def on_flow_done(self, ctx, flow):
            self.left -= 1
            if self.left:
                ctx.launch(1, 0, size_bytes=1_000_000)

The callbacks run with the GIL held and the simulation paused; the first
exception one raises stops the run and is raised by ``Scenario.run``. The
simulation is deterministic as long as the callbacks are.
"""

from safs._sim import WorkloadContext

__all__ = ["Workload", "WorkloadContext"]


class Workload:
    """Base class of a Python workload; override the callbacks you need."""

    def on_start(self, ctx):
        """Called once, at time 0, before any event of the run."""

    def on_flow_done(self, ctx, flow):
        """Called when a flow this workload launched completes. `flow` is a
        dict: ``id``, ``src``, ``dst``, ``size_bytes``, ``start_us``,
        ``finish_us``."""
