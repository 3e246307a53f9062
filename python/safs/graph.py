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

Here each argument's type is checked (TypeError naming it: an int for a
GPU, a host or a size, a finite number for a duration, a str for a label),
so that nothing is rounded or converted behind the caller's back; the
scenario parser checks the values when the Scenario is made, with the CLI's
messages (``graph.transfer[3].consumer: op 12 does not exist (4 ops)``),
as for a TOML file.
"""

import math
import numbers
import operator
from typing import NamedTuple

from safs import _arguments


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
        (empty or None: ``op N``). Returns its Op."""
        if label is None:
            label = ""
        if not isinstance(label, str):
            raise TypeError(f"safs.Graph.op: label: expected a str, got {type(label).__name__}")
        if "\0" in label:
            raise ValueError(f"safs.Graph.op: label {label!r}: holds a NUL character")
        op = Op(len(self._ops), _integer("op", "gpu", gpu),
                _duration(duration_us), label)
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
            "producer": -1 if producer is None else self._index("producer", producer),
            "consumer": self._index("consumer", consumer),
            "size_bytes": _integer("transfer", "size_bytes", size_bytes),
        }
        if src is not None:
            entry["src"] = _integer("transfer", "src", src)
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

    def _index(self, argument, op):
        """An Op's index, or an op index as given. An Op is this graph's
        only if this graph made it: another graph's op 3 would name this
        one's op 3, whatever that is."""
        if isinstance(op, Op):
            if not (0 <= op.index < len(self._ops) and self._ops[op.index] is op):
                raise ValueError(f"safs.Graph.transfer: {argument}: {op!r} is not an op of this "
                                 "graph (another Graph's, or made by hand); pass one this "
                                 "graph's op() returned, or its index")
            return op.index
        try:
            return _integer("transfer", argument, op)
        except TypeError:
            raise TypeError(f"safs.Graph.transfer: {argument}: expected an Op or an op index "
                            f"(an int), got {type(op).__name__} {op!r}") from None

    def __repr__(self):
        gpus = len({op.gpu for op in self._ops})
        return (
            f"<safs.Graph: {len(self._ops)} ops on {gpus} GPUs, "
            f"{len(self._transfers)} transfers>"
        )


def _integer(method, argument, value):
    return _arguments.integer(value, f"safs.Graph.{method}: {argument}")


def _duration(value):
    """duration_us as a finite number: an int stays one (the TOML then says
    100, not 100.0), anything else real becomes a float."""
    _arguments.real(value, "safs.Graph.op: duration_us")
    if not math.isfinite(value):
        raise ValueError(f"safs.Graph.op: duration_us: expected a finite number, got {value!r}")
    return operator.index(value) if isinstance(value, numbers.Integral) else float(value)
