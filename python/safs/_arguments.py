"""Arguments checked by name, for the package's Python-side checks: a
refusal is a TypeError (not the type expected) naming `name`. Ranges stay
with their callers, whose messages say what a value means."""

import numbers
import operator


def integer(value, name):
    """An int, or anything with __index__ (numpy's integers); not a bool,
    nor a float, which int() would cut without a word (1.9 -> 1)."""
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"{name}: expected an int, got {type(value).__name__} {value!r}")


def boolean(value, name):
    """True or False, numpy's too (bool_; "bool" from numpy 2), as the C++
    side takes them; not a truthy 1 or "no"."""
    if isinstance(value, bool) or (type(value).__module__ == "numpy"
                                   and type(value).__name__ in ("bool_", "bool")):
        return bool(value)
    raise TypeError(f"{name}: expected True or False, got {type(value).__name__} {value!r}")


def real(value, name):
    """An int or a float (numpy's too), not a bool; returned as given."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__} {value!r}")
    return value
