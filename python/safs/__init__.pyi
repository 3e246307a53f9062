# Type stubs for the safs package: the simulator's names (safs.sim) at top level.
from safs.graph import Graph as Graph
from safs.graph import Op as Op
from safs.sim import Run as Run
from safs.sim import Scenario as Scenario
from safs.sim import ScenarioError as ScenarioError
from safs.sim import SimulationWarning as SimulationWarning
from safs.sim import source_commit as source_commit
from safs.sim import sweep as sweep
from safs.sim import version as version
from safs.workload import Workload as Workload
from safs.workload import WorkloadContext as WorkloadContext

__version__: str
