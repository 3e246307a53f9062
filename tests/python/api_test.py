"""safs.Scenario, safs.Run and safs.sweep on small scenarios, and bad input:
every refusal is a ScenarioError naming the key (the CLI's message), never
a crash."""

import os
import subprocess
import sys
import threading
import time
import unittest
from pathlib import Path

from safs_test_support import INCAST, SOURCE_DIR, import_safs_or_skip, scratch_dir

safs = import_safs_or_skip()

FLOWS_COLUMNS = (
    "id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,deadline_s,"
    "met_deadline,class,delivered_bytes,data_packets,control_packets"
).split(",")


def pair(**topology):
    return {
        "topology": {"kind": "star", "hosts": 3, **topology},
        "flows": [
            {"src": 1, "dst": 0, "size_bytes": 200_000, "deadline_us": 1000},
            {"src": 2, "dst": 0, "size_bytes": 100_000, "start_us": 5},
        ],
    }


class ScratchTest(unittest.TestCase):
    """Each test in a directory of its own (self.dir), removed after it."""

    def setUp(self):
        self.scratch = scratch_dir()
        self.addCleanup(self.scratch.cleanup)
        self.dir = Path(self.scratch.name)


class ScenarioTest(ScratchTest):
    def test_from_file(self):
        s = safs.Scenario(str(INCAST))
        self.assertEqual(s.path, str(INCAST))
        self.assertEqual(s.toml, INCAST.read_text())
        self.assertIs(s.set("transport.name", "safs").set("simulation.seed", 4), s)
        self.assertEqual(s.overrides, ['transport.name="safs"', "simulation.seed=4"])
        copy = s.copy().set("topology.link_gbps", 25)
        self.assertEqual(len(s.overrides), 2)
        self.assertEqual(len(copy.overrides), 3)

    def test_update_checks_keys_together(self):
        zb = safs.Scenario(str(SOURCE_DIR / "scenarios" / "paper" / "zb-training.toml"))
        with self.assertRaises(safs.ScenarioError) as caught:
            zb.set("pipeline.microbatches", 2)  # fewer than its 4 stages
        self.assertIn("pipeline.microbatches", str(caught.exception))
        zb.update({"pipeline.stages": 2, "pipeline.microbatches": 2})
        self.assertEqual(zb.overrides, ["pipeline.stages=2", "pipeline.microbatches=2"])

    def test_from_dict_runs(self):
        run = safs.Scenario(pair()).set("transport.name", "homa").run()
        self.assertEqual(run.summary["transport"], "homa")
        self.assertEqual(run.summary["flows"]["completed"], 2)
        self.assertEqual(list(run.flows.columns), FLOWS_COLUMNS)
        self.assertEqual(list(run.flows["size_bytes"]), [200_000, 100_000])
        self.assertTrue(run.flows["met_deadline"][0])
        self.assertIsNone(run.ops)
        self.assertIsNone(run.queues)
        self.assertEqual(run.summary["scenario"]["path"], "<dict>")

    def test_same_seed_same_files(self):
        a = safs.Scenario(pair()).set("simulation.seed", 9).run(queue_sample_us=5)
        b = safs.Scenario(pair()).set("simulation.seed", 9).run(queue_sample_us=5)
        self.assertGreater(len(a.queues), 0)
        for name in a.files:
            if name != "summary.json":
                self.assertEqual(a.files[name], b.files[name], name)

    def test_a_different_key_changes_the_run(self):
        fast = safs.Scenario(pair()).run()
        slow = safs.Scenario(pair()).set("topology.link_gbps", 10).run()
        self.assertGreater(slow.flows["fct_s"].max(), 5 * fast.flows["fct_s"].max())

    def test_save_writes_the_cli_files(self):
        run = safs.Scenario(pair()).run()
        out = run.save(self.dir / "saved")
        self.assertEqual(sorted(p.name for p in out.iterdir()), sorted(run.files))
        self.assertEqual((out / "flows.csv").read_text(), run.files["flows.csv"])
        (out / "flows.csv").write_text("the user's")
        with self.assertRaises(FileExistsError) as caught:
            run.save(out)
        self.assertIn("flows.csv", str(caught.exception))
        self.assertEqual((out / "flows.csv").read_text(), "the user's")
        run.save(out, force=True)
        self.assertEqual((out / "flows.csv").read_text(), run.files["flows.csv"])

    def test_the_gil_is_released_while_it_runs(self):
        scenario = safs.Scenario(str(INCAST))
        worker = threading.Thread(target=scenario.run)
        ticks = 0
        worker.start()
        while worker.is_alive():
            ticks += 1
            time.sleep(0.001)
        worker.join()
        # A run of the incast takes far longer than 5 ms; with the GIL held
        # this thread could not have woken while it ran.
        self.assertGreater(ticks, 5)


class BadInputTest(ScratchTest):
    def test_scenario_error_is_a_value_error(self):
        self.assertTrue(issubclass(safs.ScenarioError, ValueError))

    def test_unknown_override_names_it_and_suggests(self):
        s = safs.Scenario(str(INCAST))
        with self.assertRaises(safs.ScenarioError) as caught:
            s.set("topology.link_gpbs", 25)
        self.assertIn("topology.link_gpbs", str(caught.exception))
        self.assertIn("link_gbps", str(caught.exception).split("link_gpbs", 1)[1])
        self.assertEqual(s.overrides, [])  # refused, so not applied

    def test_bad_value_names_the_key(self):
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario(str(INCAST)).set("transport.name", "tcpp")
        self.assertIn("tcpp", str(caught.exception))
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario(str(INCAST)).set("topology.hosts", 1)
        self.assertIn("hosts", str(caught.exception))

    def test_update_takes_a_dict(self):
        with self.assertRaisesRegex(TypeError, "expected a dict"):
            safs.Scenario(pair()).update([("topology.hosts", 4)])

    def test_queue_sample_us_is_checked_as_the_cli_checks_it(self):
        for bad in (-1, float("nan"), 1e300):
            with self.assertRaises(ValueError):
                safs.Scenario(pair()).run(queue_sample_us=bad)
        with self.assertRaises(TypeError):
            safs.Scenario(pair()).run(queue_sample_us="5")

    def test_values_no_scenario_can_hold_are_refused_by_key(self):
        # A dict or list that contains itself recursed until the process died;
        # an int beyond 64 bits raised a bare cast error.
        looped = {"topology": {}}
        looped["topology"]["x"] = looped
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario(looped)
        self.assertIn("nested more than 64 deep", str(caught.exception))
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario({"topology": {"hosts": 2**64}})
        self.assertIn("topology.hosts: 18446744073709551616 does not fit", str(caught.exception))
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario(str(INCAST)).set("topology.hosts", -(2**70))
        self.assertIn("does not fit a 64-bit integer", str(caught.exception))

    def test_unknown_key_in_a_file_names_file_line_and_key(self):
        bad = self.dir / "bad.toml"
        bad.write_text("[topology]\nkind = \"star\"\nhostz = 4\n")
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario(str(bad))
        message = str(caught.exception)
        self.assertIn(str(bad), message)
        self.assertIn(":3", message)
        self.assertIn("hostz", message)
        self.assertIn("hosts", message.split("hostz", 1)[1])

    def test_unknown_key_in_a_dict_names_it(self):
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario({"topology": {"kind": "star", "hostz": 4}})
        self.assertIn("hostz", str(caught.exception))

    def test_a_value_toml_cannot_hold_names_the_key(self):
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario({"topology": {"hosts": object()}})
        self.assertIn("topology.hosts", str(caught.exception))
        with self.assertRaises(safs.ScenarioError):
            safs.Scenario(str(INCAST)).set("topology", {"hosts": 4})

    def test_missing_file(self):
        missing = str(self.dir / "missing.toml")
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario(missing)
        self.assertIn(missing, str(caught.exception))

    def test_a_directory_is_refused(self):
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.Scenario(str(self.dir))
        self.assertIn(str(self.dir), str(caught.exception))

    def test_not_a_path_or_dict(self):
        with self.assertRaises(TypeError):
            safs.Scenario(42)


class SweepTest(ScratchTest):
    def test_sweep_of_a_dict_runs_every_point_and_resumes(self):
        out = self.dir / "sweep"
        scenario = safs.Scenario(pair()).set("simulation.seed", 2)
        grid = ["transport.name=dctcp,safs", "topology.link_gbps=10,100"]
        table = safs.sweep(scenario, grid, out=out, jobs=2, metrics=["flows.fct_max_s"])
        self.assertEqual(len(table), 4)
        self.assertEqual(set(table["transport.name"]), {"dctcp", "safs"})
        self.assertTrue((table["flows.fct_max_s"] > 0).all())
        # Each point equals the same run from Python.
        one = table[(table["transport.name"] == "safs") & (table["topology.link_gbps"] == 10)]
        direct = scenario.copy().set("transport.name", "safs").set("topology.link_gbps", 10).run()
        self.assertAlmostEqual(
            float(one["flows.fct_max_s"].iloc[0]), direct.summary["flows"]["fct_max_s"], places=12
        )
        summaries = sorted(out.glob("*/summary.json"))
        self.assertEqual(len(summaries), 4)
        stamps = [p.stat().st_mtime_ns for p in summaries]
        again = safs.sweep(scenario, {"transport.name": ["dctcp", "safs"],
                                      "topology.link_gbps": [10, 100]},
                           out=out, jobs=2, metrics=["flows.fct_max_s"])
        self.assertEqual([p.stat().st_mtime_ns for p in summaries], stamps)  # reused
        self.assertTrue(again.equals(table))

    def test_bad_grid_key_is_refused_before_running(self):
        out = self.dir / "bad-sweep"
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.sweep(str(INCAST), ["topology.link_gpbs=10,25"], out=out)
        self.assertIn("link_gpbs", str(caught.exception))
        self.assertFalse((out / "sweep.csv").exists())

    def test_dict_sweep_needs_out(self):
        with self.assertRaises(ValueError):
            safs.sweep(safs.Scenario(pair()), ["transport.name=dctcp,safs"])


class WithoutPandasTest(unittest.TestCase):
    def test_tables_are_lists_of_dicts(self):
        code = (
            "import sys; sys.modules['pandas'] = None\n"
            "import safs\n"
            f"run = safs.Scenario({pair()!r}).run()\n"
            "assert isinstance(run.flows, list) and len(run.flows) == 2, run.flows\n"
            "assert run.flows[0]['size_bytes'] == 200000 and run.flows[0]['met_deadline'] is True\n"
            "assert run.flows[1]['deadline_s'] is None\n"
        )
        subprocess.run([sys.executable, "-c", code], check=True, env=os.environ)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
