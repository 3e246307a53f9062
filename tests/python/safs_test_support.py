"""What the Python tests share: the skip (exit 77, for ctest) where the
module was not built, and the repository's paths."""

import os
import sys
import tempfile
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
