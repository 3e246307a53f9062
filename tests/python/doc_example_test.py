"""Runs every ```python block of docs/python.md in order, in one namespace,
as a notebook would, so the page cannot go stale; then checks what the
cells computed."""

import os
import re
import sys

from safs_test_support import SOURCE_DIR, import_safs_or_skip, scratch_dir

safs = import_safs_or_skip()
try:
    import pandas  # noqa: F401  (the page's cells use it)
except ImportError:
    print("skipped: docs/python.md's example needs pandas (python3-pandas)", file=sys.stderr)
    sys.exit(77)

page = (SOURCE_DIR / "docs" / "python.md").read_text()
cells = re.findall(r"^```python\n(.*?)^```", page, flags=re.DOTALL | re.MULTILINE)
assert len(cells) >= 4, f"docs/python.md: expected the example's cells, found {len(cells)}"

scratch = scratch_dir()
os.chdir(scratch.name)
namespace = {"__name__": "__doc_example__"}
for number, cell in enumerate(cells, 1):
    try:
        exec(compile(cell, f"docs/python.md cell {number}", "exec"), namespace)
    except Exception:
        print(f"docs/python.md: cell {number} failed:\n{cell}", file=sys.stderr)
        raise

runs = namespace["runs"]
for transport, run in runs.items():
    assert run.summary["transport"] == transport
    assert run.summary["flows"]["completed"] == 16, run.summary["flows"]
fct_ms = namespace["fct_ms"]
assert list(fct_ms.columns) == ["dctcp", "safs"] and len(fct_ms) == 16
table = namespace["table"]
assert len(table) == 4, table
assert set(table["transport.name"]) == {"dctcp", "safs"}
assert table["flows.fct_p99_s"].notna().all()
# The GPipe graph built in Python: 4 stages x 8 microbatches x (F, B), and
# the numbers the page quotes are the ones its run gives.
graph_runs = namespace["graph_runs"]
for transport, run in graph_runs.items():
    assert len(run.ops) == 64 and run.summary["compute"]["finished"], transport
iteration_ms = namespace["iteration_ms"]
for transport in graph_runs:
    for key in ["iteration_time_s", "exposed_communication_s"]:
        quoted = f"{iteration_ms[transport][key]:.3f} ms"
        assert quoted in page, f"docs/python.md should quote {transport} {key} as {quoted}"
assert namespace["same"].files["ops.csv"] == graph_runs["safs"].files["ops.csv"]
# The parameter server: two rounds of 3 pushes and 3 pulls, each pull
# 100 us after the last push arrived.
ps = namespace["ps"].flows
assert list(ps["dst"]) == [0, 0, 0, 1, 2, 3] * 2, ps
assert abs(ps["start_s"][3] - (ps["finish_s"][:3].max() + 100e-6)) < 1e-12, ps
assert f"end at {ps['finish_s'].max() * 1e3:.3f} ms" in page, ps
# "The runtime from Python": the late post took the held message.
assert namespace["received"].bytes == namespace["activations"].nbytes
assert namespace["sent"].done()
print(f"docs/python.md: {len(cells)} cells ran")
