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
import warnings
from collections.abc import Mapping
from pathlib import Path

from safs import _arguments, _frames, _sim
from safs.graph import Graph
from safs.workload import Workload

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


def _path_argument(what, value):
    """`value` (a str or os.PathLike) as a str path. A NUL is refused: C++
    and the OS read a path only up to it, so "a.toml\\0x" would name a.toml."""
    try:
        path = os.fsdecode(os.fspath(value))
    except TypeError:
        raise TypeError(f"{what}: expected a path (str or os.PathLike), "
                        f"got {type(value).__name__}") from None
    if "\0" in path:
        raise ValueError(f"{what}: {path!r} holds a NUL character; a path cannot")
    return path


def _check_override_key(key):
    """A set/update key, before it becomes the text ``key=value``: a '='
    in it would move the split (``"a=1 #"`` set to 3 is ``a=1 #=3``, which
    sets a to 1)."""
    if not isinstance(key, str):
        raise TypeError(f"Scenario.set/update: key {key!r}: expected a str ('section.key')")
    if not key.strip():
        raise ScenarioError(f"Scenario.set/update: key {key!r}: empty; expected 'section.key'")
    if "=" in key or "\0" in key:
        raise ScenarioError(f"Scenario.set/update: key {key!r}: a key holds no '=' or NUL; "
                            "expected 'section.key' (the value is the second argument)")


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
            try:
                self._name = _path_argument("Scenario(source)", source)
            except ValueError as e:
                raise ScenarioError(str(e)) from None
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
            _check_override_key(k)  # its values are checked as they are converted
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
        ``--queue-sample-us``. `workloads` is a list (any iterable) of
        safs.Workload; anything else, a single Workload included, raises
        TypeError naming it."""
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
            _workload_list(workloads),
        )
        for note in notes:
            warnings.warn(note, SimulationWarning, stacklevel=2)
        return Run(dict(files), notes)

    def __repr__(self):
        sets = "".join(f".set({o.split('=', 1)[0]!r}, {o.split('=', 1)[1]})" for o in self._overrides)
        source = repr(self._path) if self._path is not None else "{...}"
        return f"safs.Scenario({source}){sets}"


def _workload_list(workloads):
    """run(workloads=...) as a list of safs.Workload. Anything else is
    refused: the C++ side would skip an entry that has no callbacks. A single
    Workload is refused too, rather than guessed at: pass [w]."""
    if isinstance(workloads, Workload):
        raise TypeError("run: workloads: expected a list of safs.Workload, got one "
                        f"{type(workloads).__name__}; pass it as [workload]")
    if isinstance(workloads, (str, bytes, Mapping)):
        raise TypeError("run: workloads: expected a list of safs.Workload, "
                        f"got a {type(workloads).__name__}")
    try:
        entries = iter(workloads)
    except TypeError:
        raise TypeError("run: workloads: expected a list of safs.Workload, "
                        f"got {type(workloads).__name__}") from None
    entries = list(entries)
    for i, w in enumerate(entries):
        if not isinstance(w, Workload):
            raise TypeError(f"run: workloads[{i}]: expected a safs.Workload (a subclass's "
                            f"instance), got {type(w).__name__}")
    return entries


# Every file a run writes into its directory, as src/cli/run_outputs.cc
# lists them (keep in step): Run.save(force=True) removes these, as --force.
_RUN_OUTPUTS = ("flows.csv", "summary.json", "ops.csv", "steps.csv", "requests.csv", "queues.csv")


def _is_run_output(name):
    """Whether `name` is a file a run writes: one of _RUN_OUTPUTS, a later
    job's copy (ops_2.csv) or the temporary file of either (NAME.tmp), as
    is_run_output in src/cli/run_outputs.cc decides it."""
    if name.endswith(".tmp"):
        name = name[: -len(".tmp")]
    for output in _RUN_OUTPUTS:
        stem, extension = os.path.splitext(output)
        if name == output:
            return True
        number = name[len(stem) + 1 : len(name) - len(extension)]
        if (name.startswith(stem + "_") and name.endswith(extension) and number
                and all("0" <= c <= "9" for c in number)):
            return True
    return False


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
        output directory holds them, for tools that read run directories.
        An earlier run's files there (any name a run writes: flows.csv,
        ops.csv, ...) are replaced only with force=True, which, as the
        CLI's --force, also removes those of them this run does not write,
        so that the directory holds one run; other files are left alone.
        Without force, FileExistsError names them and nothing is written."""
        if not isinstance(force, bool):
            raise TypeError(f"save: force: expected True or False, got {force!r}")
        out = Path(_path_argument("save: directory", directory))
        out.mkdir(parents=True, exist_ok=True)
        earlier = sorted(p.name for p in out.iterdir() if p.is_file() and _is_run_output(p.name))
        if earlier and not force:
            raise FileExistsError(
                f"{out}: an earlier run's {', '.join(earlier)} already there; choose another "
                "directory, or save(..., force=True) to replace that run's files")
        for name in earlier:
            if name not in self.files:
                (out / name).unlink()
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


def _one_grid_value(text):
    """Whether the CLI's --grid reads `text` as one value: it splits an
    axis at commas outside "..." and [...] (split_values in
    src/sweep/sweep_grid.cc), so "dctcp,safs" would be two points."""
    depth, quoted = 0, False
    for c in text:
        if c == '"':
            quoted = not quoted
        if not quoted and c == "[":
            depth += 1
        if not quoted and c == "]":
            depth -= 1
        if c == "," and depth == 0 and not quoted:
            return False
    return depth == 0 and not quoted


def _axis_text(key, values):
    """One grid axis as the CLI's --grid takes it: strings as given (a bare
    word, as on the command line), other values as TOML."""
    if not isinstance(key, str):
        raise TypeError(f"safs.sweep: grid key {key!r}: expected a str ('section.key')")
    if not key.strip() or "=" in key or "\0" in key:
        raise ScenarioError(f"safs.sweep: grid key {key!r}: expected 'section.key' "
                            "(no '=' or NUL)")
    if isinstance(values, str) or not hasattr(values, "__iter__"):
        values = [values]
    texts = []
    for v in values:
        text = v if isinstance(v, str) else _sim.toml_value(key, v)
        if "\0" in text:
            raise ScenarioError(f"safs.sweep: grid[{key!r}]: value {v!r} holds a NUL character")
        if not _one_grid_value(text):
            raise ScenarioError(
                f"safs.sweep: grid[{key!r}]: value {v!r} would be read as several values (its "
                "comma, or an unclosed quote or bracket); give each value as its own entry")
        texts.append(text)
    return key + "=" + ",".join(texts)


def _str_list(value, what, expected):
    """`value`, an iterable of str, as a list. One str is refused: taken
    as its characters, it would fail only after every point ran."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"safs.sweep: {what}: expected {expected}, got the "
                        f"{type(value).__name__} {value!r}; pass [{value!r}]")
    try:
        entries = list(iter(value))
    except TypeError:
        raise TypeError(f"safs.sweep: {what}: expected {expected}, "
                        f"got {type(value).__name__}") from None
    for entry in entries:
        if not isinstance(entry, str):
            raise TypeError(f"safs.sweep: {what}: entry {entry!r}: expected a str")
        if not entry or "\0" in entry:
            raise ValueError(f"safs.sweep: {what}: entry {entry!r}: empty or holding a NUL")
    return entries


def _grid_texts(grid):
    """`grid` as the CLI's --grid axes: a dict of key -> values, or a list of
    "key=v1,v2" strings."""
    if isinstance(grid, Mapping):
        return [_axis_text(k, v) for k, v in grid.items()]
    return _str_list(grid, "grid", "a dict of key -> values or a list of 'key=v1,v2' strings")


def _metric_list(metrics):
    """`metrics` as a list of summary.json paths ('flows.fct_p99_s')."""
    return _str_list(metrics, "metrics", "a list of summary.json paths ('flows.fct_p99_s')")


# The C++ sweep holds jobs in an int; parallelism past the points has no effect.
_MAX_JOBS = 2**31 - 1


def _jobs_count(jobs):
    count = _arguments.integer(jobs, "safs.sweep: jobs")
    if not 0 <= count <= _MAX_JOBS:
        raise ValueError(f"safs.sweep: jobs: expected 0 (one per core) or a count of points at "
                         f"once from 1 to {_MAX_JOBS}, got {count}")
    return count


def _check_sweep_out(out_dir):
    """What the C++ sweep checks of its --out (check_sweep_out in
    src/sweep/sweep.cc), checked here before scenario.toml is written
    there: not a file, and a sweep.csv there is a sweep's."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ScenarioError(f"safs.sweep: out {out_dir}: exists and is not a directory")
    csv = out / "sweep.csv"
    if csv.exists():
        with open(csv, encoding="utf-8", errors="replace") as f:
            header = f.readline().rstrip("\n")
        if header != "point" and not header.startswith("point,"):
            raise ScenarioError(f"safs.sweep: out {out_dir}: {csv} there is not a sweep's (its "
                                "first line is not point,...); not overwriting it: choose "
                                "another directory")


def _claim_scenario_file(file, text):
    """Writes a dict scenario's text into `file` (out/scenario.toml), the
    file its points run. One already there is the user's or an earlier
    sweep's, whose points it describes: only the same text is taken as it
    is (a resume); another text is refused and left as it was. Returns
    whether the file was written now."""
    path = Path(file)
    wanted = text.encode("utf-8")
    try:
        # Created only if absent ("x"): a sweep started beside this one into
        # the same out cannot have its file replaced between a look and a write.
        with open(path, "xb") as f:
            f.write(wanted)
        return True
    except FileExistsError:
        pass
    try:
        there = path.read_bytes()
    except OSError as e:
        raise ScenarioError(f"safs.sweep: {file}: cannot read it ({e.strerror}); not "
                            "replacing it: choose another out") from None
    if there != wanted:
        raise ScenarioError(
            f"safs.sweep: {file}: already there with another scenario (the user's, or an "
            "earlier sweep's, whose points it describes); not replacing it: choose another "
            "out, or remove it")
    return False


def _finished_points(out_dir):
    """The points' summary.json files in `out_dir`, with when each was written."""
    return {p: p.stat().st_mtime_ns for p in Path(out_dir).glob("*/summary.json")}


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

    Every argument is checked before anything is written. A dict scenario's
    scenario.toml already in `out` (the user's, or an earlier sweep's) is
    never replaced: the same text is reused (a resume), another refused.

    Raises TypeError or ValueError for a bad argument, ScenarioError for a
    bad scenario, grid or `out` (before any point runs), RuntimeError if a
    point failed (its log is ``out/<point>/run.log``;
    sweep.csv holds the others), KeyboardInterrupt if interrupted (the
    finished points are kept: the same call resumes).
    """
    # Every argument first: nothing is written for a call that is refused.
    if not isinstance(scenario, Scenario):
        scenario = Scenario(scenario)
    grid = _grid_texts(grid)
    metrics = _metric_list(metrics)
    jobs = _jobs_count(jobs)
    if not isinstance(verbosity, str) or verbosity not in _VERBOSITY:
        raise ValueError(f"safs.sweep: verbosity is one of {sorted(_VERBOSITY)}, not {verbosity!r}")
    out_dir = "" if out is None else _path_argument("safs.sweep: out", out)
    if out is not None and not out_dir:
        raise ValueError("safs.sweep: out: empty; expected a directory")
    executable = _safs_sim_executable()
    wrote_file = False
    if scenario.path is not None:
        file = scenario.path
    else:
        if out is None:
            raise ValueError("safs.sweep: a scenario made from a dict needs out=DIRECTORY")
        _check_sweep_out(out_dir)
        file = os.path.join(out_dir, "scenario.toml")
        earlier_points = _finished_points(out_dir)
        os.makedirs(out_dir, exist_ok=True)
        wrote_file = _claim_scenario_file(file, scenario.toml)
    try:
        status = _sim.sweep(
            file,
            grid,
            scenario.overrides,
            metrics,
            out_dir,
            jobs,
            executable,
            _VERBOSITY[verbosity],
        )
    except ScenarioError:
        # Refused before any point finished with it (a bad grid key, points
        # of another scenario): the scenario.toml written now describes
        # nothing there, and would refuse the next sweep's scenario.
        if wrote_file and _finished_points(out_dir) == earlier_points:
            os.remove(file)
        raise
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
