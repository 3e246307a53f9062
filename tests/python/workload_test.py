"""safs.Workload: a workload written in Python runs inside the simulation.
Flows chained from on_flow_done give the same flows.csv as the built-in
[[bulk]] chain; timers start flows on time; a callback's exception stops
the run and reaches the caller."""

import sys
import unittest

from safs_test_support import import_safs_or_skip, run_python

safs = import_safs_or_skip()

TOPOLOGY = {"topology": {"kind": "star", "hosts": 3}}


class Chain(safs.Workload):
    """`count` flows of `size` bytes from host 1 to host 0, each started
    when the one before completes."""

    def __init__(self, count, size):
        self.count, self.size, self.done = count, size, []

    def on_start(self, ctx):
        ctx.launch(1, 0, size_bytes=self.size)

    def on_flow_done(self, ctx, flow):
        self.done.append(flow)
        if len(self.done) < self.count:
            ctx.launch(1, 0, size_bytes=self.size)


class PythonWorkload(unittest.TestCase):
    def test_a_chain_equals_the_bulk_chain(self):
        chain = Chain(3, 1_000_000)
        run = safs.Scenario(TOPOLOGY).run(workloads=[chain])
        bulk = safs.Scenario(
            {**TOPOLOGY, "bulk": [{"src": 1, "dst": 0, "size_bytes": 1_000_000, "count": 3}]}
        ).run()
        self.assertEqual(run.files["flows.csv"], bulk.files["flows.csv"])
        self.assertEqual([f["id"] for f in chain.done], [0, 1, 2])
        self.assertEqual(chain.done[1]["start_us"], chain.done[0]["finish_us"])
        self.assertEqual(run.summary["flows"]["completed"], 3)

    def test_timers_and_deadlines(self):
        class Later(safs.Workload):
            def on_start(self, ctx):
                self.hosts = ctx.hosts
                ctx.after(50, self.send)

            def send(self, ctx):
                self.at_us = ctx.now_us
                ctx.launch(2, 0, size_bytes=10_000, deadline_us=200, urgent=True)

        later = Later()
        run = safs.Scenario(TOPOLOGY).set("transport.name", "safs").run(workloads=[later])
        self.assertEqual(later.hosts, 3)
        self.assertEqual(later.at_us, 50)
        row = run.files["flows.csv"].splitlines()[1].split(",")
        self.assertEqual(row[1:5], ["2", "0", "10000", "0.000050000"])
        self.assertEqual(row[9:12], ["0.000200000", "true", "urgent"])

    def test_runs_beside_the_scenarios_flows(self):
        scenario = {**TOPOLOGY, "flows": [{"src": 2, "dst": 0, "size_bytes": 500_000}]}
        run = safs.Scenario(scenario).run(workloads=[Chain(2, 200_000)])
        sizes = [line.split(",")[3] for line in run.files["flows.csv"].splitlines()[1:]]
        self.assertEqual(sizes, ["500000", "200000", "200000"])  # listed flows take ids first

    def test_a_callbacks_exception_stops_the_run(self):
        class Boom(Chain):
            def on_flow_done(self, ctx, flow):
                raise RuntimeError("boom at flow %d" % flow["id"])

        with self.assertRaisesRegex(RuntimeError, "boom at flow 0"):
            safs.Scenario(TOPOLOGY).run(workloads=[Boom(3, 1000)])

        class BadHost(safs.Workload):
            def on_start(self, ctx):
                ctx.launch(1, 7, size_bytes=1000)

        with self.assertRaisesRegex(ValueError, "host 7 is out of range"):
            safs.Scenario(TOPOLOGY).run(workloads=[BadHost()])

        class FarTimer(safs.Workload):  # fired at once when now + delay wrapped
            def on_start(self, ctx):
                ctx.after(1e13, lambda ctx: None)

        with self.assertRaisesRegex(ValueError, "after: delay_us"):
            safs.Scenario(TOPOLOGY).run(workloads=[FarTimer()])

    def test_launch_and_after_name_their_arguments(self):
        # NaN, inf and 1e300 deadlines said "must be later than now" (the
        # microseconds wrapped); bools were taken as 1; a callback that is
        # not callable failed only when its timer fired.
        cases = [
            (lambda ctx: ctx.launch(1, 0, size_bytes=10, deadline_us=float("nan")),
             ValueError, "launch: deadline_us must be 0 to 1e12"),
            (lambda ctx: ctx.launch(1, 0, size_bytes=10, deadline_us=1e300),
             ValueError, "launch: deadline_us must be 0 to 1e12"),
            (lambda ctx: ctx.launch(1, 0, size_bytes=True), TypeError, "launch: size_bytes"),
            (lambda ctx: ctx.launch(True, 0, size_bytes=10), TypeError, "launch: src"),
            (lambda ctx: ctx.launch(1, 0, size_bytes=10, urgent=None), TypeError,
             "launch: urgent"),
            (lambda ctx: ctx.launch(1, 0, size_bytes=-1), ValueError, "launch: size_bytes"),
            (lambda ctx: ctx.after(10, 5), TypeError, "after: callback: expected a callable"),
            (lambda ctx: ctx.after(True, lambda c: None), TypeError, "after: delay_us"),
        ]
        for call, error, message in cases:
            class Bad(safs.Workload):
                def on_start(self, ctx):
                    call(ctx)

            with self.assertRaisesRegex(error, message):
                safs.Scenario(TOPOLOGY).run(workloads=[Bad()])

    def test_a_timer_rearmed_forever_holds_no_memory_per_firing(self):
        # Each fired timer was kept for the whole run, about 130 bytes each.
        result = run_python("""
            import resource, safs
            class Tick(safs.Workload):
                def __init__(self, n): self.n = n
                def on_start(self, ctx): ctx.after(0.001, self.tick)
                def tick(self, ctx):
                    self.n -= 1
                    if self.n: ctx.after(0.001, self.tick)
            def peak_kib(n):
                safs.Scenario({"topology": {"kind": "star", "hosts": 3}}).run(workloads=[Tick(n)])
                return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            before = peak_kib(1000)
            print(peak_kib(300_000) - before)
        """)
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        self.assertLess(int(result.stdout), 8 * 1024, "KiB of peak memory for 300 000 firings")

    def test_workloads_must_be_a_list_of_workloads(self):
        # Entries that were not Workloads were skipped; None and a single
        # Workload failed with messages that did not name `workloads`.
        s = safs.Scenario({**TOPOLOGY, "flows": [{"src": 1, "dst": 0, "size_bytes": 1000}]})
        for bad, named in [([1, "abc"], r"workloads\[0\].*int"),
                           ([safs.Workload(), None], r"workloads\[1\].*NoneType"),
                           ("ab", "workloads.*str"), (None, "workloads.*NoneType"),
                           (safs.Workload(), r"workloads.*\[workload\]")]:
            with self.assertRaisesRegex(TypeError, named):
                s.run(workloads=bad)
        self.assertEqual(s.run(workloads=(safs.Workload(),)).summary["flows"]["completed"], 1)

    def test_a_context_kept_past_its_run(self):
        class Keep(safs.Workload):
            def on_start(self, ctx):
                self.ctx = ctx

        keep = Keep()
        safs.Scenario({**TOPOLOGY, "flows": [{"src": 1, "dst": 0, "size_bytes": 1000}]}).run(
            workloads=[keep]
        )
        with self.assertRaisesRegex(ValueError, "run has ended"):
            keep.ctx.now_us


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
