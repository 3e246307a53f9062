"""The simulator from Python: scenarios, runs and sweeps.

Everything here goes through the code ``safs-sim`` runs (the C++ extension
``safs._sim``): a scenario is checked by the CLI's parser, with its messages;
a run produces the very text the CLI writes into its output directory, read
here into pandas DataFrames; a sweep is the CLI's sweep, with its worker
processes and its resume.
"""

import json
import numbers
import os
import shutil
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path

from safs import _frames, _sim
from safs.graph import Graph

ScenarioError = _sim.ScenarioError


class SimulationWarning(UserWarning):
    """What safs-sim prints as a warning on stderr: an override the run does
    not use, a workload that had not finished by the stop time."""


def version():
    """The simulator's version, as ``safs-sim --version`` reports it."""
    return _sim.version()


def source_commit():
    """The source commit the module was built from (``unknown`` outside git)."""
    return _sim.source_commit()


DICT_NAME = "<dict>"  # a dict scenario's name in messages and summary.json


class Scenario:
    """A scenario, from a TOML file or from a dict of the same keys
    (docs/scenario-format.md), plus ``set(key, value)`` overrides applied in
    order, as ``safs-sim run --set key=value`` applies them.

    The scenario is checked when it is made and at every ``set``; bad input
    raises ScenarioError (a ValueError) with the CLI's message: it names the
    key (suggesting the closest known one), and for a file the file and line.
    A dict is read as the TOML text it converts to (``Scenario.toml``); line
    numbers in its messages count lines of that text. Its ``"graph"`` entry
    may be a safs.Graph, which stands for ``Graph.to_dict()``.
    """

    def __init__(self, source):
        self._overrides = []
        if isinstance(source, (str, os.PathLike)):
            self._name = os.fspath(source)
            self._path = self._name
            self._text, self._warnings = _sim.read_scenario_file(self._name, [])
        elif isinstance(source, Mapping):
            self._name = DICT_NAME
            self._path = None
            sections = {k: v.to_dict() if isinstance(v, Graph) else v for k, v in source.items()}
            self._text = _sim.toml_document(sections)
            self._warnings = _sim.check_scenario(self._text, self._name, [])
        else:
            raise TypeError(
                "Scenario(source): a path to a TOML file or a dict, not " + type(source).__name__
            )

    def set(self, key, value):
        """Overrides one dotted key (``"topology.link_gbps"``) with a Python
        value (bool, int, float, str or a list of them), like ``--set``.
        Returns the scenario, so that calls chain. Raises ScenarioError and
        leaves the scenario as it was when the key or value is refused."""
        return self.update({key: value})

    def update(self, values):
        """Several ``set`` overrides (a dict of key -> value) checked together,
        for keys that are only consistent once all are set (stages and
        microbatches). Returns the scenario; refused, it is left as it was."""
        if not isinstance(values, Mapping):
            raise TypeError("update: expected a dict of key -> value (keys as 'section.key'), "
                            f"got {type(values).__name__}")
        for k in values:
            if not isinstance(k, str):
                raise TypeError(f"update: key {k!r}: expected a str ('section.key')")
        overrides = self._overrides + [k + "=" + _sim.toml_value(k, v) for k, v in values.items()]
        self._warnings = _sim.check_scenario(self._text, self._name, overrides)
        self._overrides = overrides
        return self

    def copy(self):
        """An independent copy (its own overrides)."""
        other = Scenario.__new__(Scenario)
        other.__dict__.update(self.__dict__)
        other._overrides = list(self._overrides)
        other._warnings = list(self._warnings)
        return other

    @property
    def path(self):
        """The file the scenario was read from, or None for a dict."""
        return self._path

    @property
    def toml(self):
        """The scenario's TOML text (the file's, or the dict's conversion),
        before the overrides."""
        return self._text

    @property
    def overrides(self):
        """The ``set`` overrides as ``key=value`` strings, as ``--set`` takes them."""
        return list(self._overrides)

    @property
    def warnings(self):
        """What the loader accepted but flags (an override for a transport the
        run does not use), as the CLI prints it."""
        return list(self._warnings)

    def run(self, *, queue_sample_us=0, workloads=()):
        """Runs the scenario in this process and returns its Run. The GIL is
        released while it runs (other Python threads go on), but for the
        callbacks of `workloads`: safs.Workload objects run beside the
        scenario's own workloads (safs.workload). With ``queue_sample_us`` > 0
        the run also samples switch queues into ``Run.queues``, as
        ``--queue-sample-us``."""
        # As --queue-sample-us: 0 (none), or a period within what simulated
        # time holds.
        if isinstance(queue_sample_us, bool) or not isinstance(queue_sample_us, numbers.Real):
            raise TypeError(f"queue_sample_us: expected a number, got {queue_sample_us!r}")
        if not 0 <= queue_sample_us <= 1e12:
            raise ValueError(f"queue_sample_us: expected 0 (none) or a period of up to 1e12 us, "
                             f"got {queue_sample_us!r}")
        command_line = ["safs.Scenario.run", self._name]
        files, notes = _sim.run(
            self._text,
            self._name,
            self._overrides,
            float(queue_sample_us),
            command_line,
            list(workloads),
        )
        for note in notes:
            warnings.warn(note, SimulationWarning, stacklevel=2)
        return Run(dict(files), notes)

    def __repr__(self):
        sets = "".join(f".set({o.split('=', 1)[0]!r}, {o.split('=', 1)[1]})" for o in self._overrides)
        source = repr(self._path) if self._path is not None else "{...}"
        return f"safs.Scenario({source}){sets}"


class Run:
    """A finished run: the files ``safs-sim run`` would have written, as text
    (``files``) and parsed.

    ``flows``, ``ops``, ``steps``, ``requests`` and ``queues`` are the CSV
    files as pandas DataFrames (None when the run's workloads write no such
    file); without pandas they are lists of dicts. ``summary`` is
    summary.json as a dict, every field included: its wall-clock fields
    (``wall_s``, ``setup_wall_s``, ``run_wall_s``, ``events_per_s``,
    ``peak_rss_mib``) and ``provenance.command_line`` and ``host`` describe
    this process, so they differ from a CLI run's; every other field is
    equal to the CLI's for the same scenario and seed.
    """

    def __init__(self, files, warnings_=()):
        self.files = files
        self.warnings = list(warnings_)
        self._tables = {}

    def table(self, name):
        """The CSV file `name` (``"flows.csv"``) as a table, or None if the run
        wrote no such file."""
        if name not in self.files:
            return None
        if name not in self._tables:
            self._tables[name] = _frames.table(self.files[name])
        return self._tables[name]

    @property
    def flows(self):
        """flows.csv: one row per flow (size, start, finish, FCT, slowdown, deadline)."""
        return self.table("flows.csv")

    @property
    def ops(self):
        """ops.csv of a compute workload (pipeline, connection matrix)."""
        return self.table("ops.csv")

    @property
    def steps(self):
        """steps.csv of an inference workload."""
        return self.table("steps.csv")

    @property
    def requests(self):
        """requests.csv of an inference workload."""
        return self.table("requests.csv")

    @property
    def queues(self):
        """queues.csv, when the run sampled queues (``run(queue_sample_us=...)``)."""
        return self.table("queues.csv")

    @property
    def summary(self):
        """summary.json as a dict (see the class docstring for which fields
        differ from a CLI run's)."""
        return json.loads(self.files["summary.json"])

    def save(self, directory, force=False):
        """Writes the files into `directory` (created if missing), as the CLI's
        output directory holds them, for tools that read run directories. A
        file of the same name already there is replaced only with
        force=True (FileExistsError names it otherwise, and nothing is
        written), as the CLI's --force."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        there = sorted(name for name in self.files if (out / name).exists())
        if there and not force:
            raise FileExistsError(
                f"{out}: {', '.join(there)} already there; choose another directory, "
                "or save(..., force=True) to replace them")
        for name, text in self.files.items():
            (out / name).write_text(text)
        return out

    def __repr__(self):
        s = self.summary
        return (
            f"<safs.Run {s['transport']} seed {s['seed']}: "
            f"{s['flows']['completed']}/{s['flows']['total']} flows complete>"
        )


def _safs_sim_executable():
    """The safs-sim that runs the sweep's points: $SAFS_SIM, the copy installed
    in the package (safs/bin), the build tree's (build/bin beside build/python),
    or the one on PATH."""
    given = os.environ.get("SAFS_SIM")
    if given:
        return given
    here = Path(__file__).resolve().parent
    for candidate in (here / "bin" / "safs-sim", here.parent.parent / "bin" / "safs-sim"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("safs-sim")
    if found:
        return found
    raise RuntimeError("safs.sweep: no safs-sim executable found; set SAFS_SIM to its path")


def _axis_text(key, values):
    """One grid axis as the CLI's --grid takes it: strings as given (a bare
    word, as on the command line), other values as TOML."""
    if isinstance(values, str) or not hasattr(values, "__iter__"):
        values = [values]
    return key + "=" + ",".join(v if isinstance(v, str) else _sim.toml_value(key, v) for v in values)


_VERBOSITY = {"quiet": 0, "normal": 1, "verbose": 2}


def sweep(scenario, grid=(), *, out=None, jobs=0, metrics=(), verbosity="quiet"):
    """Runs every point of a grid with ``safs-sim sweep``'s machinery and
    returns sweep.csv (one row per point) as a DataFrame.

    `scenario` is a Scenario or a path; its ``set`` overrides apply to every
    point. `grid` is a list of ``"key=v1,v2"`` strings or a dict of key ->
    list of values (strings as the CLI's --grid takes them: a bare word),
    over the file's [sweep] grid. Points run as separate
    ``safs-sim run`` processes, `jobs` at once (0: one per core), into
    ``out/<point>/``; points finished by an earlier sweep of the same
    scenario into the same `out` are reused (resume). `out` defaults to the
    CLI's ``out/sweep-STEM``; a dict scenario needs one, and its TOML text is
    written there as scenario.toml. `metrics` picks sweep.csv's columns
    (default: the file's sweep.metrics, else every number in summary.json).

    Raises ScenarioError for a bad scenario or grid (before any point runs),
    RuntimeError if a point failed (its log is ``out/<point>/run.log``;
    sweep.csv holds the others), KeyboardInterrupt if interrupted (the
    finished points are kept: the same call resumes).
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario(scenario)
    if isinstance(grid, Mapping):
        grid = [_axis_text(k, v) for k, v in grid.items()]
    if scenario.path is not None:
        file = scenario.path
        out_dir = "" if out is None else os.fspath(out)
    else:
        if out is None:
            raise ValueError("safs.sweep: a scenario made from a dict needs out=DIRECTORY")
        out_dir = os.fspath(out)
        os.makedirs(out_dir, exist_ok=True)
        file = os.path.join(out_dir, "scenario.toml")
        Path(file).write_text(scenario.toml)
    if verbosity not in _VERBOSITY:
        raise ValueError(f"safs.sweep: verbosity is one of {sorted(_VERBOSITY)}, not {verbosity!r}")
    status = _sim.sweep(
        file,
        list(grid),
        scenario.overrides,
        list(metrics),
        out_dir,
        int(jobs),
        _safs_sim_executable(),
        _VERBOSITY[verbosity],
    )
    if out_dir == "":
        out_dir = os.path.join("out", "sweep-" + Path(file).stem)
    if status >= 128:
        raise KeyboardInterrupt(f"safs.sweep stopped by signal {status - 128}; finished points kept")
    if status != 0:
        raise RuntimeError(
            f"safs.sweep: some points failed; see {out_dir}/<point>/run.log "
            f"(sweep.csv holds the others; the same call reruns the failed ones)"
        )
    return _frames.table(Path(out_dir, "sweep.csv").read_text())
