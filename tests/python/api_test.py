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

    def test_save_with_force_leaves_one_runs_files(self):
        # --force's rule: an earlier run's outputs this run does not write
        # (a graph run's ops.csv, a later job's ops_2.csv, a temporary file)
        # go; a file no run writes stays.
        out = self.dir / "saved"
        g = safs.Graph()
        g.op(gpu=0, duration_us=5)
        safs.Scenario({"topology": {"hosts": 2}, "graph": g}).run().save(out)
        self.assertTrue((out / "ops.csv").exists())
        (out / "ops_2.csv").write_text("an earlier run's")
        (out / "flows.csv.tmp").write_text("an earlier run's")
        (out / "notes.txt").write_text("the user's")
        run = safs.Scenario(pair()).run()
        with self.assertRaises(FileExistsError) as caught:
            run.save(out)
        self.assertIn("ops.csv", str(caught.exception))
        run.save(out, force=True)
        self.assertEqual(sorted(p.name for p in out.iterdir()), sorted([*run.files, "notes.txt"]))
        self.assertEqual((out / "notes.txt").read_text(), "the user's")

    def test_save_refuses_an_earlier_runs_file_of_another_name_without_force(self):
        out = self.dir / "saved"
        out.mkdir()
        (out / "ops.csv").write_text("an earlier run's")
        with self.assertRaisesRegex(FileExistsError, "ops.csv"):
            safs.Scenario(pair()).run().save(out)
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["ops.csv"])

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

    def test_set_values_that_are_not_one_value_are_refused(self):
        # A list of dicts became [[v]] sections, and the override their first
        # key; a numpy array of one element, or numpy's bool, passed as an int.
        with self.assertRaisesRegex(safs.ScenarioError, "topology.hosts: a list of tables"):
            safs.Scenario(pair()).set("topology.hosts", [{"a": 7}])
        # A long list is one value, though TOML wraps it over lines.
        afd = safs.Scenario(str(SOURCE_DIR / "scenarios/eval/afd-saturated.toml"))
        hosts = list(range(100, 128))
        afd.set("topology.hosts", 200).set("inference.hosts", hosts)
        self.assertEqual(afd.overrides[-1], "inference.hosts=[ " + ", ".join(map(str, hosts)) + " ]")
        try:
            import numpy as np
        except ImportError:
            return
        with self.assertRaisesRegex(safs.ScenarioError, r"simulation.seed: a numpy ndarray"):
            safs.Scenario(pair()).set("simulation.seed", np.array([[7]]))
        with self.assertRaisesRegex(safs.ScenarioError, "simulation.seed: expected integer"):
            safs.Scenario(pair()).set("simulation.seed", np.bool_(True))
        self.assertEqual(safs.Scenario(pair()).set("simulation.seed", np.int64(5)).overrides,
                         ["simulation.seed=5"])

    def test_a_quoted_dotted_key_or_a_value_for_a_table_is_named(self):
        # {"simulation.seed": 7} passed and ran with seed 1; {"topology": 5}
        # said "unknown key; did you mean 'topology'?".
        with self.assertRaisesRegex(safs.ScenarioError, "simulation.seed: a key with '.'"):
            safs.Scenario({**pair(), "simulation.seed": 7})
        with self.assertRaisesRegex(safs.ScenarioError, r"topology: expected a table \(\[topology"):
            safs.Scenario({"topology": 5})
        with self.assertRaisesRegex(safs.ScenarioError, r"flows: expected an array of tables"):
            safs.Scenario({"topology": {"kind": "star", "hosts": 3}, "flows": {"src": 1}})

    def test_a_key_with_an_equals_sign_or_nothing_in_it_is_refused(self):
        # "topology.hosts=5 #" set to 3 became the override
        # topology.hosts=5 #=3, which set hosts to 5.
        s = safs.Scenario(pair())
        for key in ["topology.hosts=5 #", "", "  ", "topology.hosts\0x"]:
            with self.assertRaises(safs.ScenarioError) as caught:
                s.set(key, 3)
            self.assertIn(repr(key), str(caught.exception))
        with self.assertRaises(safs.ScenarioError):
            s.update({"simulation.seed": 2, "topology.hosts=5 #": 3})
        self.assertEqual(s.overrides, [])
        with self.assertRaisesRegex(TypeError, "key 3"):
            s.set(3, 3)

    def test_a_nul_is_refused_not_cut_at(self):
        # The C++ side reads a string up to a NUL: the path below ran
        # incast.toml, and a value's message was cut short.
        with self.assertRaisesRegex(safs.ScenarioError, "Scenario.source.*NUL"):
            safs.Scenario(str(INCAST) + "\0garbage")
        s = safs.Scenario(pair())
        for value in ["safs\0x", ["a", "b\0"]]:
            with self.assertRaisesRegex(safs.ScenarioError, "'transport.name'.*NUL"):
                s.set("transport.name", value)
        self.assertEqual(s.overrides, [])
        with self.assertRaisesRegex(safs.ScenarioError, "'transport.name'.*NUL"):
            safs.Scenario({**pair(), "transport": {"name": "dctcp\0x"}})
        with self.assertRaisesRegex(ValueError, "directory.*NUL"):
            safs.Scenario(pair()).run().save(self.dir / "n\0x")
        self.assertEqual(list(self.dir.iterdir()), [self.dir / "scenarios"])

    def test_save_force_is_a_bool(self):
        run = safs.Scenario(pair()).run()
        with self.assertRaisesRegex(TypeError, "force"):
            run.save(self.dir / "saved", force="no")
        self.assertFalse((self.dir / "saved").exists())

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
    def sweep_dir_holding(self, name, text):
        """A sweep's directory that already holds the user's file `name`."""
        out = self.dir / "sweep"
        out.mkdir()
        (out / name).write_text(text)
        return out

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
        # Another scenario into the same out keeps the points' scenario.toml.
        written = (out / "scenario.toml").read_text()
        with self.assertRaisesRegex(safs.ScenarioError, "scenario.toml.*another scenario"):
            safs.sweep(safs.Scenario(pair(link_gbps=25)), grid, out=out, jobs=2)
        self.assertEqual((out / "scenario.toml").read_text(), written)
        self.assertEqual([p.stat().st_mtime_ns for p in summaries], stamps)

    def test_bad_grid_key_is_refused_before_running(self):
        out = self.dir / "bad-sweep"
        with self.assertRaises(safs.ScenarioError) as caught:
            safs.sweep(str(INCAST), ["topology.link_gpbs=10,25"], out=out)
        self.assertIn("link_gpbs", str(caught.exception))
        self.assertFalse((out / "sweep.csv").exists())

    def test_bad_arguments_are_refused_before_anything_is_written(self):
        out = self.dir / "sweep"
        scenario = safs.Scenario(pair())
        for arguments, error, named in [
            ({"jobs": 1.7}, TypeError, "jobs"), ({"jobs": True}, TypeError, "jobs"),
            ({"jobs": "2"}, TypeError, "jobs"), ({"jobs": -1}, ValueError, "jobs"),
            ({"jobs": 2**40}, ValueError, "jobs"),
            ({"metrics": "flows.fct_p99_s"}, TypeError, "metrics"),
            ({"metrics": [1]}, TypeError, "metrics"),
            ({"grid": "transport.name=dctcp,safs"}, TypeError, "grid"),
            ({"grid": [3]}, TypeError, "grid"),
            ({"grid": {"transport.name": ["dctcp,safs"]}}, ValueError, "'transport.name'"),
            ({"grid": {"transport.name": ['"dctcp']}}, ValueError, "'transport.name'"),
            ({"grid": {"transport.name=x": ["dctcp"]}}, ValueError, "grid key"),
            ({"verbosity": "loud"}, ValueError, "verbosity"),
        ]:
            with self.assertRaisesRegex(error, named, msg=arguments):
                safs.sweep(scenario, **{"out": out, **arguments})
            self.assertFalse(out.exists(), arguments)
        with self.assertRaisesRegex(ValueError, "out.*NUL"):
            safs.sweep(scenario, out=self.dir / "n\0x")
        with self.assertRaisesRegex(ValueError, "NUL"):
            safs.sweep(str(INCAST) + "\0zz", out=out)
        self.assertEqual(list(self.dir.iterdir()), [self.dir / "scenarios"])

    def test_grid_values_that_hold_no_top_level_comma_pass(self):
        axis = safs.sim._axis_text
        self.assertEqual(axis("transport.name", ["dctcp", "safs"]), "transport.name=dctcp,safs")
        self.assertEqual(axis("a.b", ["[1, 2]", '"x,y"', [3, 4]]), 'a.b=[1, 2],"x,y",[ 3, 4 ]')

    def test_a_scenario_toml_already_there_is_never_replaced(self):
        # It was written before any check, over the user's file, and over an
        # earlier sweep's, whose points then had no scenario.
        out = self.sweep_dir_holding("scenario.toml", "the user's")
        with self.assertRaisesRegex(safs.ScenarioError, "scenario.toml.*another scenario"):
            safs.sweep(safs.Scenario(pair()), ["transport.name=dctcp"], out=out)
        self.assertEqual((out / "scenario.toml").read_text(), "the user's")
        with self.assertRaisesRegex(ValueError, "verbosity"):
            safs.sweep(safs.Scenario(pair()), out=out, verbosity="loud")
        self.assertEqual((out / "scenario.toml").read_text(), "the user's")

    def test_out_is_checked_as_the_cli_checks_it_before_scenario_toml(self):
        out = self.sweep_dir_holding("sweep.csv", "the user's table\n")
        with self.assertRaisesRegex(safs.ScenarioError, "sweep.csv there is not a sweep's"):
            safs.sweep(safs.Scenario(pair()), ["transport.name=dctcp"], out=out)
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["sweep.csv"])
        a_file = self.dir / "a-file"
        a_file.write_text("the user's")
        with self.assertRaisesRegex(safs.ScenarioError, "not a directory"):
            safs.sweep(safs.Scenario(pair()), out=a_file)

    def test_a_refused_grid_leaves_no_scenario_toml(self):
        # Written for a sweep that then ran nothing, it would refuse the
        # next sweep's (corrected) scenario.
        out = self.dir / "sweep"
        with self.assertRaisesRegex(safs.ScenarioError, "transport.nmae"):
            safs.sweep(safs.Scenario(pair()), {"transport.nmae": ["dctcp"]}, out=out)
        self.assertFalse((out / "scenario.toml").exists())

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
