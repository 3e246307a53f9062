"""examples/torch-pipeline: the schedules are what they claim (every op
once per micro-batch, 1F1B's and ZB-H1's in-flight bounds, plans without
deadlock, ZB-H1 no longer than 1F1B when B + W = fused backward), and on
loopback a two-stage pipeline runs over safs and over gloo, writes its
report, and its sim-to-real scenario predicts its iteration time. The
loopback part skips without torch."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

from safs_test_support import SOURCE_DIR, import_safs_or_skip

import_safs_or_skip()
EXAMPLE = SOURCE_DIR / "examples" / "torch-pipeline"
sys.path.insert(0, str(EXAMPLE))
import report  # noqa: E402
import schedules  # noqa: E402
import to_scenario  # noqa: E402

try:
    import torch  # noqa: F401

    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


class ScheduleTest(unittest.TestCase):
    def test_every_op_once(self):
        for schedule in schedules.SCHEDULES:
            for stages in (2, 3, 4):
                for m in (1, 3, 8):
                    for s in range(stages):
                        ops = schedules.stage_ops(schedule, stages, m, s)
                        kinds = ("F", "B", "W") if schedule == "zb-h1" else ("F", "BW")
                        self.assertEqual(sorted(ops), sorted((k, i) for k in kinds for i in range(m)))
                        self.assertEqual(len(set(ops)), len(ops))

    def test_in_flight_bounds(self):
        stages, m = 4, 8
        for s in range(stages):
            for schedule in ("1f1b", "zb-h1"):
                ops = schedules.stage_ops(schedule, stages, m, s)
                live = peak = 0
                pending_w = peak_w = 0
                for kind, _ in ops:
                    live += kind == "F"
                    live -= kind in ("B", "BW")
                    pending_w += kind == "B"
                    pending_w -= kind == "W"
                    peak, peak_w = max(peak, live), max(peak_w, pending_w)
                self.assertLessEqual(peak, stages - s, (schedule, s))
                if schedule == "zb-h1":
                    self.assertLessEqual(peak_w, stages - s, s)

    def test_plans(self):
        d = {"F": 1.0, "B": 1.0, "W": 1.0, "BW": 2.0}
        ends = {}
        for schedule in schedules.SCHEDULES:
            plan = schedules.plan(schedule, 4, 8, d, 0.0)
            self.assertEqual(len(plan), sum(len(schedules.stage_ops(schedule, 4, 8, s)) for s in range(4)))
            ends[schedule] = max(start + d[k] for (s, k, mb), start in plan.items())
        # Compute alone: 8 x (F + B + W) per stage; the bubbles on top.
        for schedule, end in ends.items():
            self.assertGreaterEqual(end, 24.0, schedule)
        self.assertLessEqual(ends["zb-h1"], ends["1f1b"])
        self.assertLessEqual(ends["1f1b"], ends["gpipe"] + 1e-9)

    def test_bad_input(self):
        with self.assertRaisesRegex(ValueError, "schedule 'zb-v'"):
            schedules.stage_ops("zb-v", 2, 4, 0)
        with self.assertRaisesRegex(ValueError, "stage 2"):
            schedules.stage_ops("1f1b", 2, 4, 2)


def read_json(path):
    with open(path) as f:
        return json.load(f)


def unused_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WaitedTransfersTest(unittest.TestCase):
    """report.waited_transfers: a wait is timed from the matching isend on the
    neighbour (activations from the rank before, gradients from the rank
    after, sent after B or BW), and short waits do not count."""

    MS = 1_000_000

    def stage(self, rank, sends, waits):
        return {"rank": rank, "iterations": [{"sends": sends, "waits": waits}]}

    def test_matches_each_wait_to_its_send(self):
        ms = self.MS
        first = self.stage(0, [["F", 0, 0], ["F", 1, 10 * ms]], [["BW", 0, 40 * ms, 52 * ms]])
        last = self.stage(1, [["BW", 0, 30 * ms]],
                          [["F", 0, 5 * ms, 25 * ms], ["F", 1, 30 * ms, 30 * ms + ms // 2]])
        seconds = sorted(report.waited_transfers([first, last]))
        # F 0: sent at 0, received at 25 ms; gradient 0: sent at 30, received
        # at 52; F 1 waited for half a millisecond only.
        self.assertEqual(seconds, [0.022, 0.025])

    def test_older_outputs_and_unmatched_waits_give_nothing(self):
        ms = self.MS
        older = {"rank": 0, "iterations": [{"bubble_s": 0.1}]}
        self.assertEqual(report.waited_transfers([older]), [])
        # A gradient waited for on the last rank has no rank after it.
        alone = self.stage(1, [], [["B", 2, 0, 5 * ms]])
        self.assertEqual(report.waited_transfers([alone]), [])


class RiskVerdictsTest(unittest.TestCase):
    """report.risk_verdicts: each send judged by its consumer's wait (late at
    1 ms or more) against its first risk report."""

    MS = 1_000_000

    def test_each_send_is_judged_by_its_consumers_wait(self):
        ms = self.MS
        # Rank 0 sends F 0..3 to rank 1; rank 1 sends the gradient of 0 back.
        # F 0: warned 5 ms before its consumer waited 10 ms (late and warned,
        # early); F 1: warned after the wait began (late, warned, not early);
        # F 2: late, never reported; F 3: reported, on time; gradient 0 on
        # time, not reported.
        first = {"rank": 0, "iterations": [{
            "sends": [["F", 0, 0], ["F", 1, 0], ["F", 2, 0], ["F", 3, 0]],
            "waits": [["BW", 0, 100 * ms, 100 * ms]],
            "risks": [["F", 0, 15 * ms, 1], ["F", 1, 32 * ms, 1], ["F", 3, 40 * ms, 1]]}]}
        last = {"rank": 1, "iterations": [{
            "sends": [["BW", 0, 90 * ms]],
            "waits": [["F", 0, 20 * ms, 30 * ms], ["F", 1, 30 * ms, 35 * ms],
                      ["F", 2, 40 * ms, 42 * ms], ["F", 3, 50 * ms, 50 * ms]],
            "risks": []}]}
        v = report.risk_verdicts([first, last])
        self.assertEqual({k: v[k] for k in v if k != "leads"},
                         {"sends": 5, "late": 3, "warned": 2, "by_plan": 0, "early": 1, "false": 1,
                          "unwarned": 1})
        self.assertEqual(sorted(v["leads"]), [-0.002, 0.005])

    def test_a_plan_warned_of_counts_from_its_warning(self):
        ms = self.MS
        # F 0: its plan warned of at 2 ms, its flow reported at 25 ms, its
        # consumer waited from 20 to 30 ms: warned early by its plan, lead
        # 18 ms. F 1: its plan warned of only after its consumer had it.
        first = {"rank": 0, "iterations": [{
            "sends": [["F", 0, 0], ["F", 1, 0]], "waits": [],
            "risks": [["F", 0, 25 * ms, 1, False], ["F", 0, 2 * ms, 0, True],
                      ["F", 1, 60 * ms, 0, True]]}]}
        last = {"rank": 1, "iterations": [{
            "sends": [], "waits": [["F", 0, 20 * ms, 30 * ms], ["F", 1, 40 * ms, 50 * ms]],
            "risks": []}]}
        v = report.risk_verdicts([first, last])
        self.assertEqual({k: v[k] for k in v if k != "leads"},
                         {"sends": 2, "late": 2, "warned": 1, "by_plan": 1, "early": 1, "false": 0,
                          "unwarned": 1})
        self.assertEqual(v["leads"], [0.018])

    def test_runs_without_reports_per_send_give_none(self):
        older = {"rank": 0, "iterations": [{"sends": [], "waits": []}]}
        self.assertIsNone(report.risk_verdicts([older]))


class ReportDirectoryTest(unittest.TestCase):
    """report.py reads a directory of any name (glob characters are not a
    pattern) and refuses one without runs."""

    def test_a_name_with_glob_characters_is_read_as_it_is(self):
        with tempfile.TemporaryDirectory() as parent:
            out = os.path.join(parent, "out[2]")
            os.mkdir(out)
            for rank in (0, 1):
                with open(os.path.join(out, f"gpipe.safs.none.1.rank{rank}.json"), "w") as f:
                    json.dump({"rank": rank, "iterations": []}, f)
            found = list(report.runs(out))
            self.assertEqual([(key, run, len(ranks)) for key, run, _, ranks in found],
                             [(("gpipe", "safs", "none"), 1, 2)])

    def test_a_safs_row_with_risk_reports_keeps_its_prediction_and_background(self):
        # A SAFS run whose stages recorded risk reports: the row still shows
        # safs-sim's prediction and the background rate (the loops over the
        # verdicts and the plans once took over the run's name and cell key).
        ms = 1_000_000
        with tempfile.TemporaryDirectory() as out:
            name = "gpipe.safs.background.1"
            for rank, sends, waits in ((0, [["F", 0, 0]], []),
                                       (1, [], [["F", 0, 5 * ms, 20 * ms]])):
                iteration = {"iteration_s": 0.5, "bubble_s": 0.1, "exposed_comm_s": 0.05,
                             "sends": sends, "waits": waits, "risks": [["F", 0, 2 * ms, 1]]}
                with open(os.path.join(out, f"{name}.rank{rank}.json"), "w") as f:
                    json.dump({"rank": rank, "iterations": [iteration], "deadline_misses": 0,
                               "control_bytes": 1000, "background_bytes": 12_500_000,
                               "measured_s": 1.0, "plans_warned_late": 0}, f)
            with open(os.path.join(out, f"{name}.sim.json"), "w") as f:
                json.dump({"measured_iteration_s": 0.5, "predicted_iteration_s": 0.55}, f)
            done = subprocess.run([sys.executable, str(EXAMPLE / "report.py"), out, "200"],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            rows = [line for line in done.stdout.splitlines() if line.startswith("| gpipe | safs")]
            self.assertEqual(rows[0], "| gpipe | safs | background | 500 [500, 500] | 100 | 50 "
                                      "| 20.0 | 100 | 0 | 2000 | +10.0% |")

    def test_runs_come_in_number_order(self):
        # Eleven runs: run 10 comes after run 9, not after run 1, in both the
        # predictions and the table of each run's bubble.
        with tempfile.TemporaryDirectory() as out:
            for run in range(1, 12):
                name = f"gpipe.gloo.none.{run}"
                for rank in (0, 1):
                    with open(os.path.join(out, f"{name}.rank{rank}.json"), "w") as f:
                        json.dump({"rank": rank, "iterations": [
                            {"iteration_s": 1.0, "bubble_s": run / 10, "exposed_comm_s": 0}]}, f)
                with open(os.path.join(out, f"{name}.sim.json"), "w") as f:
                    json.dump({"measured_iteration_s": 1.0,
                               "predicted_iteration_s": 1.0 + run / 100}, f)
            self.assertEqual([run for _, run, _, _ in report.runs(out)], list(range(1, 12)))
            done = subprocess.run([sys.executable, str(EXAMPLE / "report.py"), out, "200"],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr)
            in_order = ", ".join(f"+{run}.0%" for run in range(1, 12))
            self.assertIn(f"| {in_order} |", done.stdout)
            self.assertIn("| none | gpipe | " + " / ".join(str(run * 100) for run in range(1, 12)),
                          done.stdout)

    def test_a_directory_without_runs_exits_2(self):
        with tempfile.TemporaryDirectory() as empty:
            done = subprocess.run([sys.executable, str(EXAMPLE / "report.py"), empty, "200"],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(done.returncode, 2)
            self.assertIn("no run's *.rank0.json", done.stderr)


@unittest.skipUnless(HAVE_TORCH, "torch is not installed (scripts/setup.sh installs it)")
class TensorsScriptTest(unittest.TestCase):
    """tensors.py: per cell, the waited-for tensors' count, mean, median,
    90th percentile and largest, over every run of every directory given;
    bad input ends with exit 2 and a message."""

    def run_script(self, *args):
        return subprocess.run([sys.executable, str(EXAMPLE / "tensors.py"), *args],
                              capture_output=True, text=True, timeout=60)

    def test_one_row_per_cell_over_runs_and_directories(self):
        ms = 1_000_000
        with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
            for out, received in ((first, 20 * ms), (second, 40 * ms)):
                for rank, sends, waits in ((0, [["F", 0, 0]], []),
                                           (1, [], [["F", 0, 5 * ms, received]])):
                    with open(os.path.join(out, f"1f1b.safs.bulk.1.rank{rank}.json"), "w") as f:
                        json.dump({"rank": rank,
                                   "iterations": [{"sends": sends, "waits": waits}]}, f)
            done = self.run_script(first, second)
            self.assertEqual(done.returncode, 0, done.stderr)
            rows = [line for line in done.stdout.splitlines() if line.startswith("| 1f1b")]
            self.assertEqual(rows, ["| 1f1b | safs | bulk | 2 | 30.0 | 30.0 | 40.0 | 40.0 |"])
            # By micro-batch: every activation's isend to received, even the
            # short waits: micro-batch 0 arrived 20 and 40 ms after its isend.
            done = self.run_script("--by-microbatch", first, second)
            self.assertEqual(done.returncode, 0, done.stderr)
            rows = [line for line in done.stdout.splitlines() if line.startswith("| 1f1b")]
            self.assertEqual(rows, ["| 1f1b | safs | bulk | 30.0 |"])

    def test_the_90th_percentile_is_the_nearest_rank(self):
        # Ten waited-for tensors of 10, 20, ..., 100 ms: nine of ten at or
        # below 90 ms, so 90, not the largest.
        ms = 1_000_000
        with tempfile.TemporaryDirectory() as out:
            sends = [["F", mb, 0] for mb in range(10)]
            waits = [["F", mb, 5 * ms, (mb + 1) * 10 * ms] for mb in range(10)]
            for rank, s, w in ((0, sends, []), (1, [], waits)):
                with open(os.path.join(out, f"gpipe.safs.none.1.rank{rank}.json"), "w") as f:
                    json.dump({"rank": rank, "iterations": [{"sends": s, "waits": w}]}, f)
            done = self.run_script(out)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("| gpipe | safs | none | 10 | 55.0 | 55.0 | 90.0 | 100.0 |", done.stdout)

    def test_bad_input_exits_2(self):
        self.assertEqual(self.run_script().returncode, 2)
        self.assertEqual(self.run_script("--by-microbatch").returncode, 2)
        with tempfile.TemporaryDirectory() as empty:
            done = self.run_script(empty)
            self.assertEqual(done.returncode, 2)
            self.assertIn("no run's *.rank0.json", done.stderr)


class CompareScriptTest(unittest.TestCase):
    """compare.py: per cell found in both sets, each run's bubble, the
    means and their ratio, and the median waited-for tensor; bad input
    ends with exit 2 and a message."""

    def run_script(self, *args):
        return subprocess.run([sys.executable, str(EXAMPLE / "compare.py"), *args],
                              capture_output=True, text=True, timeout=60)

    def write_run(self, out, run, bubble_s, received_ns):
        ms = 1_000_000
        for rank, sends, waits in ((0, [["F", 0, 0]], []), (1, [], [["F", 0, 5 * ms, received_ns]])):
            with open(os.path.join(out, f"gpipe.safs.bulk.{run}.rank{rank}.json"), "w") as f:
                json.dump({"rank": rank, "iterations": [
                    {"bubble_s": bubble_s, "sends": sends, "waits": waits}]}, f)

    def test_each_run_then_means_and_ratio(self):
        ms = 1_000_000
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            self.write_run(a, 1, 0.2, 20 * ms)
            self.write_run(a, 2, 0.4, 30 * ms)
            self.write_run(b, 1, 0.15, 10 * ms)
            done = self.run_script("old", a, "--", "new", b)
            self.assertEqual(done.returncode, 0, done.stderr)
            rows = [line for line in done.stdout.splitlines() if line.startswith("| gpipe")]
            self.assertEqual(rows, ["| gpipe | safs | bulk | 200 / 400 | 150 | 300 | 150 | 0.50 "
                                    "| 25.0 | 10.0 |"])

    def test_bad_input_exits_2(self):
        self.assertEqual(self.run_script("a", "x").returncode, 2)  # no "--"
        self.assertEqual(self.run_script("a", "--", "b", "x").returncode, 2)  # no A directory
        with tempfile.TemporaryDirectory() as empty:
            done = self.run_script("a", empty, "--", "b", empty)
            self.assertEqual(done.returncode, 2)
            self.assertIn("no run's *.rank0.json", done.stderr)


class ScenarioTest(unittest.TestCase):
    """to_scenario.build: the testbed's FIFO, where it was set in bytes
    (QUEUE_KB), becomes the simulated ports' buffer; the default FIFO of
    1000 packets has no byte size, and the simulator keeps its own."""

    @staticmethod
    def reports(**extra):
        op = {"kind": "F", "mb": 0, "start_s": 0.0, "end_s": 0.01}
        return [{"rank": r, "comm": "safs", "message_bytes": 1000, "link_mbit": 200.0,
                 "iterations": [{"ops": [op]}], **extra} for r in range(2)]

    def test_the_fifo_in_bytes_is_the_ports_buffer(self):
        network = to_scenario.build(self.reports(queue_kb=256))["network"]
        self.assertEqual(network["port_buffer_bytes"], 256 * 1024)

    def test_the_packet_fifo_and_older_runs_keep_the_simulators_buffer(self):
        for reports in (self.reports(queue_kb=0), self.reports()):
            self.assertNotIn("port_buffer_bytes", to_scenario.build(reports)["network"])


class LoopbackPipelineTest(unittest.TestCase):
    def run_pipeline(self, comm, schedule, directory):
        port = unused_port()
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        outs = [os.path.join(directory, f"{comm}.rank{r}.json") for r in range(2)]
        procs = [
            subprocess.Popen(
                [sys.executable, str(EXAMPLE / "pipeline.py"), "--rank", str(r), "--schedule", schedule,
                 "--comm", comm, "--microbatches", "3", "--iterations", "1", "--hidden", "128",
                 "--sequence", "256", "--master", f"127.0.0.1:{port}", "--out", outs[r]],
                stderr=subprocess.PIPE, text=True, env=env)
            for r in range(2)
        ]
        for p in procs:
            _, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
        return outs

    def test_safs_and_gloo_run_and_the_simulator_predicts_them(self):
        with tempfile.TemporaryDirectory() as d:
            runs = (("safs", "zb-h1"), ("safs-ahead", "1f1b"), ("gloo-preposted", "1f1b"),
                    ("gloo", "gpipe"))
            checks = {}  # comm -> its sim-to-real check, as run.sh writes it
            for comm, schedule in runs:
                outs = self.run_pipeline(comm, schedule, d)
                reports = [read_json(o) for o in outs]
                ops = reports[1]["iterations"][-1]["ops"]
                self.assertEqual(len(ops), len(schedules.stage_ops(schedule, 2, 3, 1)))
                self.assertTrue(all(o["end_s"] >= o["start_s"] for o in ops))
                # Each tensor sent once and waited for once per iteration:
                # activations 0 -> 1, gradients 1 -> 0, three micro-batches.
                first, last = (r["iterations"][-1] for r in reports)
                self.assertEqual(sorted(m for k, m, _ in first["sends"]), [0, 1, 2])
                self.assertEqual(sorted(m for k, m, _ in last["sends"]), [0, 1, 2])
                self.assertEqual(sorted(m for k, m, _, _ in first["waits"]), [0, 1, 2])
                self.assertEqual(sorted(m for k, m, _, _ in last["waits"]), [0, 1, 2])
                self.assertTrue(all(w0 <= w1 for _, _, w0, w1 in first["waits"] + last["waits"]))
                self.assertTrue(all(s > 0 for s in report.waited_transfers(reports)))
                if comm.startswith("safs"):
                    self.assertGreater(reports[1]["control_bytes"], 0)
                    # Announced ahead: each of the measured iteration's three
                    # sends per stage (the warm-up has no plan to announce from).
                    for r in reports:
                        self.assertEqual(r["plans_sent"], 3 if comm == "safs-ahead" else 0)
                    # Loopback is never a full downlink: the receiver never
                    # turns to EDF when short, and no path is contended.
                    for r in reports:
                        self.assertEqual(r["shortfall_episodes"], 0)
                        self.assertEqual(r["contended_paths"], 0)
                        self.assertGreaterEqual(r["risk_reports"], 0)  # recorded
                        # and per send, each first report (of its flow, or of its
                        # plan: safs-ahead only) naming one of its sends
                        for it in r["iterations"]:
                            sent = {(k, m) for k, m, _ in it["sends"]}
                            for k, m, _, _, planned in it["risks"]:
                                self.assertIn((k, m), sent)
                                self.assertTrue(comm == "safs-ahead" or not planned)
                    self.assertIsNotNone(report.risk_verdicts(reports))
                sim = subprocess.run(
                    [sys.executable, str(EXAMPLE / "to_scenario.py"), os.path.join(d, f"{comm}.toml")] + outs,
                    capture_output=True, text=True, timeout=120)
                self.assertEqual(sim.returncode, 0, sim.stderr)
                check = json.loads(sim.stdout)
                checks[comm] = sim.stdout
                # Measured op times, in the measured order: what is left is
                # the network (fast here) and the processes' own overheads.
                ratio = check["predicted_iteration_s"] / check["measured_iteration_s"]
                self.assertGreater(ratio, 0.5, check)
                self.assertLess(ratio, 1.5, check)
            # The report over these runs, named as run.sh names them: every
            # run's prediction, the bubble's parts for every run, and
            # safs-ahead's announced sends.
            named = os.path.join(d, "named")
            os.mkdir(named)
            for comm, schedule in runs:
                for r in range(2):
                    shutil.copy(os.path.join(d, f"{comm}.rank{r}.json"),
                                os.path.join(named, f"{schedule}.{comm}.none.1.rank{r}.json"))
                with open(os.path.join(named, f"{schedule}.{comm}.none.1.sim.json"), "w") as f:
                    f.write(checks[comm])
            table = subprocess.run([sys.executable, str(EXAMPLE / "report.py"), named, "1000"],
                                   capture_output=True, text=True, timeout=60)
            self.assertEqual(table.returncode, 0, table.stderr)
            rows = table.stdout.split("\n\n")[0].splitlines()[2:]
            self.assertEqual(len(rows), len(runs))
            for row in rows:
                self.assertRegex(row, r"\| [+-]\d+\.\d% \|$")  # one run: one prediction
            parts = [line for line in table.stdout.split("Where the bubble goes")[1].splitlines()
                     if line.startswith("| ") and "schedule" not in line]
            self.assertEqual(len(parts), 4)
            self.assertIn("| 1f1b | safs-ahead | none | 6 |", table.stdout)
            # Every SAFS run's sends beside its risk reports and misses.
            risks = [line for line in
                     table.stdout.split("Sends projected to miss")[1].split("\n\n")[1].splitlines()
                     if line.startswith("| ") and "schedule" not in line]
            self.assertEqual(len(risks), sum(1 for comm, _ in runs if comm.startswith("safs")))
            bad = subprocess.run([sys.executable, str(EXAMPLE / "pipeline.py"), "--rank", "3", "--master",
                                  "127.0.0.1:1", "--out", os.path.join(d, "x.json")],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(bad.returncode, 2)
            self.assertIn("--stages 2 --rank 3", bad.stderr)
            bad = subprocess.run([sys.executable, str(EXAMPLE / "pipeline.py"), "--rank", "0", "--queue-kb",
                                  "-1", "--master", "127.0.0.1:1", "--out", os.path.join(d, "x.json")],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(bad.returncode, 2)
            self.assertIn("--queue-kb", bad.stderr)


if __name__ == "__main__":
    unittest.main()
