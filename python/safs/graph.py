"""A compute graph built in Python: the ``[graph]`` section of a scenario.

Ops run on GPUs (hosts), each GPU running its ops in the order they were
added; a transfer carries bytes from the GPU of the op that produces them to
the GPU of the op that needs them, which waits for it. In a scenario dict,
a Graph stands for the section itself::

    g = safs.Graph()
    f = g.op(gpu=0, duration_us=100, label="F0")
    b = g.op(gpu=1, duration_us=100, label="F1")
    g.transfer(f, b, size_bytes=1 << 20)
    run = safs.Scenario({"topology": {"kind": "star", "hosts": 2}, "graph": g}).run()

Nothing is checked here: the scenario parser checks the section when the
Scenario is made, with the CLI's messages (``graph.transfer[3].consumer:
op 12 does not exist (4 ops)``), as for a TOML file.
"""

from typing import NamedTuple


class Op(NamedTuple):
    """An op of a Graph, as ``Graph.op`` returns it: its index (its place in
    ``[[graph.op]]``, which transfers name) and what it was given."""

    index: int
    gpu: int
    duration_us: float
    label: str


class Graph:
    """A compute graph: ``op`` adds an op, ``transfer`` a transfer between
    two ops; ``to_dict`` gives the ``[graph]`` section (``Scenario`` takes
    the Graph itself as the ``"graph"`` entry of a dict)."""

    def __init__(self):
        self._ops = []
        self._transfers = []

    def op(self, gpu, duration_us, label=""):
        """Adds an op that computes `duration_us` microseconds on host `gpu`,
        after the ops already added on that GPU. `label` names it in ops.csv
        (empty: ``op N``). Returns its Op."""
        op = Op(len(self._ops), int(gpu), duration_us, str(label))
        self._ops.append(op)
        return op

    def transfer(self, producer, consumer, size_bytes, *, src=None):
        """Adds a transfer of `size_bytes` from `producer`'s GPU, started when
        that op ends, to `consumer`'s GPU, whose op waits for it (each an Op
        or an op index; the two on different GPUs). A `producer` of None (or
        -1) is an input there from the start: it leaves host `src` as the
        computation starts. It runs as one urgent flow with the consumer's
        no-bubble timestamp. Returns its index."""
        entry = {
            "producer": -1 if producer is None else _index(producer),
            "consumer": _index(consumer),
            "size_bytes": int(size_bytes),
        }
        if src is not None:
            entry["src"] = int(src)
        self._transfers.append(entry)
        return len(self._transfers) - 1

    @property
    def ops(self):
        """The ops in the order they were added (a list of Op)."""
        return list(self._ops)

    @property
    def transfers(self):
        """The transfers as dicts with the keys of ``[[graph.transfer]]``."""
        return [dict(t) for t in self._transfers]

    def to_dict(self):
        """The ``[graph]`` section: ``{"op": [...], "transfer": [...]}`` with
        the keys of docs/scenario-format.md (an op's empty label left out, no
        ``transfer`` list without transfers)."""
        ops = []
        for op in self._ops:
            entry = {"gpu": op.gpu, "duration_us": op.duration_us}
            if op.label:
                entry["label"] = op.label
            ops.append(entry)
        section = {"op": ops}
        if self._transfers:
            section["transfer"] = self.transfers
        return section

    def __repr__(self):
        gpus = len({op.gpu for op in self._ops})
        return (
            f"<safs.Graph: {len(self._ops)} ops on {gpus} GPUs, "
            f"{len(self._transfers)} transfers>"
        )


def _index(op):
    if isinstance(op, Op):
        return op.index
    if isinstance(op, bool) or not isinstance(op, int):
        raise TypeError(f"safs.Graph.transfer: an Op or an op index, not {type(op).__name__}")
    return op
