"""What the Python tests share: the skip (exit 77, for ctest) where the
module was not built, and the repository's paths."""

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parents[2]
INCAST = SOURCE_DIR / "scenarios" / "examples" / "incast.toml"


def import_safs_or_skip():
    try:
        import safs
    except ImportError as e:
        print(
            f"skipped: the safs Python module is not built ({e}); it needs pybind11-dev and "
            "python3-dev, and PYTHONPATH=build/python",
            file=sys.stderr,
        )
        sys.exit(77)
    return safs


def scratch_dir():
    """A temporary working directory, removed at exit, with `scenarios`
    linking the repository's."""
    scratch = tempfile.TemporaryDirectory(prefix="safs-python-test-")
    os.symlink(SOURCE_DIR / "scenarios", Path(scratch.name) / "scenarios")
    return scratch


def run_python(script, timeout_s=120):
    """`script` (dedented) in a Python process of its own, with this one's
    import path: a crash or a hang there fails a test instead of ending the
    run. Returns the finished process, its output as text."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=timeout_s,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
