"""A run from Python equals `safs-sim run` of the same scenario and
overrides: every CSV file byte for byte (and so every DataFrame), and
summary.json except the fields that describe the process (wall clock,
command line)."""

import json
import subprocess
import sys
import unittest
from pathlib import Path

from safs_test_support import INCAST, SOURCE_DIR, import_safs_or_skip, scratch_dir

safs = import_safs_or_skip()
from safs import sim  # noqa: E402

try:
    import pandas
except ImportError:
    pandas = None

PROCESS_FIELDS = ["wall_s", "setup_wall_s", "run_wall_s", "events_per_s", "peak_rss_mib"]


def without_process_fields(summary):
    summary = dict(summary)
    for key in PROCESS_FIELDS:
        summary.pop(key)
    summary["provenance"] = dict(summary["provenance"])
    summary["provenance"].pop("command_line")
    return summary


class CliEquality(unittest.TestCase):
    def setUp(self):
        self.scratch = scratch_dir()
        self.addCleanup(self.scratch.cleanup)

    def check_equal(self, path, overrides, queue_sample_us=0):
        scenario = safs.Scenario(str(path))
        scenario.update(dict(overrides))
        run = scenario.run(queue_sample_us=queue_sample_us)

        out = Path(self.scratch.name) / f"cli-{len(list(Path(self.scratch.name).iterdir()))}"
        argv = [sim._safs_sim_executable(), "run", str(path), "--out", str(out), "--quiet"]
        for override in scenario.overrides:
            argv += ["--set", override]
        if queue_sample_us:
            argv += ["--queue-sample-us", str(queue_sample_us)]
        subprocess.run(argv, check=True)

        cli_files = sorted(p.name for p in out.iterdir())
        self.assertEqual(cli_files, sorted(run.files))
        for name in cli_files:
            if name == "summary.json":
                continue
            self.assertEqual((out / name).read_text(), run.files[name], name)
            if pandas is not None:
                pandas.testing.assert_frame_equal(pandas.read_csv(out / name), run.table(name))
        cli_summary = json.loads((out / "summary.json").read_text())
        self.assertEqual(without_process_fields(cli_summary), without_process_fields(run.summary))
        return run

    def test_incast_with_safs_and_queues(self):
        run = self.check_equal(
            INCAST, [("transport.name", "safs"), ("simulation.seed", 3)], queue_sample_us=20
        )
        self.assertEqual(run.summary["transport"], "safs")
        self.assertIsNotNone(run.queues)

    def test_pipeline_ops(self):
        run = self.check_equal(
            SOURCE_DIR / "scenarios" / "paper" / "zb-training.toml",
            [
                ("pipeline.microbatches", 4),
                ("pipeline.sequence", 256),
                ("pipeline.forward_ms", 0.2),
                ("pipeline.backward_ms", 0.2),
                ("pipeline.weight_ms", 0.2),
                ("pipeline.background_flows_per_stage", 1),
            ],
        )
        self.assertIsNotNone(run.ops)

    def test_inference_steps_and_requests(self):
        run = self.check_equal(
            SOURCE_DIR / "scenarios" / "paper" / "afd-16a2f.toml",
            [
                ("inference.layers", 2),
                ("inference.warmup_requests", 0),
                ("inference.measured_requests", 20),
                ("transport.name", "dctcp"),
            ],
        )
        self.assertIsNotNone(run.steps)
        self.assertIsNotNone(run.requests)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
