"""A run's CSV text as a table: a pandas DataFrame, or without pandas a list
of dicts (one per row; numbers as int or float, empty cells as None)."""

import csv
import io

try:
    import pandas
except ImportError:  # pandas is optional: python3-pandas
    pandas = None


def _cell(text):
    if text == "":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text, text)


def table(text):
    """The CSV `text` read as pandas.read_csv reads the CLI's file of it."""
    if pandas is not None:
        return pandas.read_csv(io.StringIO(text))
    return [{k: _cell(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]


def has_pandas():
    return pandas is not None
