"""safs: Slack-Aware Flow Scheduling, from Python.

The packet-level simulator's API is the module ``safs.sim``; its names are
also the package's top-level names (``safs.Scenario`` is
``safs.sim.Scenario``). ``safs.runtime`` (SAFS on real hosts: endpoints
that send and receive buffers) is a module beside ``safs.sim``; nothing
here imports it.

    import safs
    run = safs.Scenario("scenarios/examples/incast.toml").set("transport.name", "safs").run()
    run.flows["fct_s"].describe()

``safs.Graph`` (the module ``safs.graph``) builds a compute graph, ops per
GPU and transfers, for a scenario's ``[graph]`` section; ``safs.Workload``
(``safs.workload``) is a workload written in Python whose callbacks run
inside the simulation.
"""

from safs.graph import Graph, Op
from safs.sim import (
    Run,
    Scenario,
    ScenarioError,
    SimulationWarning,
    source_commit,
    sweep,
    version,
)
from safs.workload import Workload, WorkloadContext

__all__ = [
    "Graph",
    "Op",
    "Run",
    "Scenario",
    "ScenarioError",
    "SimulationWarning",
    "source_commit",
    "sweep",
    "version",
    "Workload",
    "WorkloadContext",
]
__version__ = version()
