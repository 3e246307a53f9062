"""safs.Graph: a compute graph built in Python is the [graph] section of a
scenario. The graph of scenarios/examples/graph.toml built in Python runs to
the very files `safs-sim run` writes for the TOML file; bad graphs raise the
parser's message."""

import subprocess
import sys
import unittest
from pathlib import Path

from safs_test_support import SOURCE_DIR, import_safs_or_skip, scratch_dir

safs = import_safs_or_skip()
from safs import sim  # noqa: E402

EXAMPLE = SOURCE_DIR / "scenarios" / "examples" / "graph.toml"
MIB = 1 << 20


def column(table, name):
    """A column as a list, from a DataFrame or (without pandas) a list of dicts."""
    return list(table[name]) if hasattr(table, "columns") else [row[name] for row in table]


def example_graph():
    """scenarios/examples/graph.toml's graph: GPipe, 2 stages, 2 microbatches."""
    g = safs.Graph()
    f0 = [g.op(gpu=0, duration_us=100, label=f"F0 mb{m}") for m in range(2)]
    f1 = [g.op(gpu=1, duration_us=100, label=f"F1 mb{m}") for m in range(2)]
    b1 = [g.op(gpu=1, duration_us=200, label=f"B1 mb{m}") for m in range(2)]
    b0 = [g.op(gpu=0, duration_us=200, label=f"B0 mb{m}") for m in range(2)]
    for m in range(2):
        g.transfer(f0[m], f1[m], size_bytes=4 * MIB)
    for m in range(2):
        g.transfer(b1[m], b0[m], size_bytes=4 * MIB)
    return g


def example_scenario(graph):
    return {
        "topology": {"kind": "star", "hosts": 3, "link_gbps": 100, "link_delay_us": 1},
        "transport": {"name": "dctcp"},
        "graph": graph,
        "bulk": [{"src": 2, "dst": 1, "size_bytes": 16 * MIB}],
    }


class GraphBuilder(unittest.TestCase):
    def test_ops_and_transfers_by_index(self):
        g = safs.Graph()
        a = g.op(gpu=0, duration_us=100, label="F0")
        b = g.op(1, 50.5)
        self.assertEqual(a, safs.Op(0, 0, 100, "F0"))
        self.assertEqual(b.index, 1)
        self.assertEqual(g.transfer(a, 1, size_bytes=1 << 20), 0)
        self.assertEqual(
            g.to_dict(),
            {
                "op": [{"gpu": 0, "duration_us": 100, "label": "F0"}, {"gpu": 1, "duration_us": 50.5}],
                "transfer": [{"producer": 0, "consumer": 1, "size_bytes": 1 << 20}],
            },
        )
        self.assertEqual(repr(g), "<safs.Graph: 2 ops on 2 GPUs, 1 transfers>")
        with self.assertRaises(TypeError):
            g.transfer("F0", b, size_bytes=1)

    def test_an_input_from_the_start(self):
        g = safs.Graph()
        a = g.op(gpu=0, duration_us=10)
        g.transfer(None, a, size_bytes=100_000, src=1)
        self.assertEqual(g.transfers, [{"producer": -1, "consumer": 0, "size_bytes": 100_000, "src": 1}])
        run = safs.Scenario({"topology": {"hosts": 2}, "graph": g}).run()
        self.assertEqual(run.files["flows.csv"].splitlines()[1].split(",")[1:5], ["1", "0", "100000", "0.000000000"])
        self.assertGreater(column(run.ops, "start_s")[0], 100_000 * 8 / 100e9)  # after the input
        with self.assertRaisesRegex(safs.ScenarioError, "needs a src host"):
            safs.Scenario({"topology": {"hosts": 2}, "graph": {"op": [{"gpu": 0, "duration_us": 1}], "transfer": [{"producer": -1, "consumer": 0, "size_bytes": 8}]}})

    def test_no_transfers_no_list(self):
        g = safs.Graph()
        g.op(gpu=0, duration_us=5)
        self.assertEqual(g.to_dict(), {"op": [{"gpu": 0, "duration_us": 5}]})
        run = safs.Scenario({"topology": {"hosts": 2}, "graph": g}).run()
        self.assertEqual(len(run.ops), 1)
        self.assertEqual(column(run.ops, "label"), ["op 0"])
        self.assertAlmostEqual(column(run.ops, "end_s")[0], 5e-6)

    def test_arguments_of_the_wrong_type_are_refused_by_name(self):
        # int() truncated them (1.9 bytes -> 1, gpu True -> 1, "1" -> 1)
        # and str() made a label of None.
        g = safs.Graph()
        a, b = g.op(gpu=0, duration_us=1), g.op(gpu=1, duration_us=1)
        for arguments, named in [
            ({"gpu": 1.7, "duration_us": 10}, "gpu"), ({"gpu": True, "duration_us": 10}, "gpu"),
            ({"gpu": "1", "duration_us": 10}, "gpu"), ({"gpu": 0, "duration_us": "10"}, "duration_us"),
            ({"gpu": 0, "duration_us": True}, "duration_us"),
            ({"gpu": 0, "duration_us": 10, "label": 3}, "label"),
        ]:
            with self.assertRaisesRegex(TypeError, named, msg=arguments):
                g.op(**arguments)
        with self.assertRaisesRegex(ValueError, "duration_us.*finite"):
            g.op(gpu=0, duration_us=float("inf"))
        with self.assertRaisesRegex(ValueError, "label.*NUL"):
            g.op(gpu=0, duration_us=1, label="F\0x")
        for arguments, named in [
            ({"size_bytes": 1.9}, "size_bytes"), ({"size_bytes": True}, "size_bytes"),
            ({"size_bytes": "8"}, "size_bytes"), ({"size_bytes": 8, "src": 1.8}, "src"),
        ]:
            with self.assertRaisesRegex(TypeError, named, msg=arguments):
                g.transfer(a, b, **arguments)
        with self.assertRaisesRegex(TypeError, "consumer"):
            g.transfer(a, 1.0, size_bytes=8)
        self.assertEqual((len(g.ops), g.transfers), (2, []))  # nothing refused was added
        self.assertEqual(g.op(gpu=0, duration_us=2.5, label=None).label, "")

    def test_an_op_of_another_graph_is_refused(self):
        # It stood for its index here, whichever op that is in this graph.
        g, other = safs.Graph(), safs.Graph()
        g.op(gpu=0, duration_us=1)
        b = g.op(gpu=1, duration_us=1)
        stranger = other.op(gpu=1, duration_us=1)
        with self.assertRaisesRegex(ValueError, "producer: .* not an op of this graph"):
            g.transfer(stranger, b, size_bytes=8)
        with self.assertRaisesRegex(ValueError, "consumer: .* not an op of this graph"):
            g.transfer(0, safs.Op(1, 1, 1, ""), size_bytes=8)
        self.assertEqual(g.transfer(g.ops[0], b, size_bytes=8), 0)

    def test_bad_graphs_raise_the_parsers_message(self):
        def error_of(build):
            g = safs.Graph()
            build(g)
            with self.assertRaises(safs.ScenarioError) as caught:
                safs.Scenario({"topology": {"hosts": 2}, "graph": g})
            return str(caught.exception)

        def dangling(g):
            g.op(0, 1)
            g.op(1, 1)
            g.transfer(0, 12, size_bytes=8)

        self.assertIn("graph.transfer[0].consumer: op 12 does not exist (2 ops)", error_of(dangling))
        self.assertIn(
            "graph.op[0].gpu: host 5 is out of range", error_of(lambda g: g.op(gpu=5, duration_us=1))
        )

        def same_gpu(g):
            g.transfer(g.op(0, 1), g.op(0, 1), size_bytes=8)

        self.assertIn("a transfer must cross GPUs", error_of(same_gpu))

        def deadlock(g):
            a, b = g.op(0, 1), g.op(1, 1)
            c, d = g.op(0, 1), g.op(1, 1)
            g.transfer(c, b, size_bytes=8)
            g.transfer(d, a, size_bytes=8)

        self.assertIn("the per-GPU orders deadlock", error_of(deadlock))


class GraphEqualsToml(unittest.TestCase):
    """The Python graph and the TOML file are one scenario: same files."""

    def setUp(self):
        self.scratch = scratch_dir()
        self.addCleanup(self.scratch.cleanup)

    def test_same_files_as_the_cli_on_the_toml_file(self):
        for transport in ["dctcp", "safs"]:
            run = safs.Scenario(example_scenario(example_graph())).set("transport.name", transport).run()
            out = Path(self.scratch.name) / transport
            argv = [sim._safs_sim_executable(), "run", str(EXAMPLE), "--out", str(out), "--quiet"]
            subprocess.run(argv + ["--transport", transport], check=True)
            for name in ["flows.csv", "ops.csv"]:
                self.assertEqual((out / name).read_text(), run.files[name], f"{transport} {name}")
            self.assertEqual(len(run.ops), 8)
            self.assertEqual(column(run.flows, "class").count("urgent"), 4)


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
