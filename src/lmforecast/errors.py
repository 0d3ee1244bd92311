"""Exceptions and warnings shared by every method.

`InputError` is for user mistakes (bad tables, bad flags): the CLI turns it into a one-line
message and exit status 2. Anything else escaping the library is a bug.
"""

from __future__ import annotations


class LMForecastError(Exception):
    """Base class of lmforecast's own exceptions."""


class InputError(LMForecastError, ValueError):
    """The user's input is invalid; the message names the column, row or value."""


class NotFittedError(LMForecastError, RuntimeError, ValueError, AttributeError):
    """An estimator used before `fit` (the same type for every estimator; an AttributeError
    too, so ``hasattr(est, "params_")`` is False before fitting, as in scikit-learn)."""


def not_fitted(obj) -> NotFittedError:
    name = type(obj).__name__
    return NotFittedError(f"this {name} is not fitted yet; call fit() first")


REACH_SAID = "_reach_said"  # the attribute a fitted object keeps its said warning kinds in


def first_time(owner, kind: str) -> bool:
    """True the first time `kind` is asked about for `owner` (a fitted object): a warning said
    once per fitted object, not once per call in a loop. Clearing ``owner.__dict__[REACH_SAID]``
    forgets them."""
    said = owner.__dict__.setdefault(REACH_SAID, set())
    if kind in said:
        return False
    said.add(kind)
    return True


def did_you_mean(word: str, choices) -> str:
    """'; did you mean 'x'?' for the choice nearest to a misspelt `word` ('' when none is
    near): the tail of a message that names a name the user mistyped."""
    import difflib

    near = difflib.get_close_matches(str(word), sorted(map(str, choices)), n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?" if near else ""


def fmt_value(v) -> str:
    """A value as a user reads it in an error message: plain numbers, never ``np.float64(..)``.

    Integral floats below 1e6 print without a fraction (``12480``), other floats with up to 6
    significant digits (``0.34``, ``1.5e+22``), NaN/inf as ``nan``/``inf``; strings keep their
    quotes so an empty or blank cell is visible; anything else prints as ``str`` (truncated to
    60 chars).
    """
    import math
    import numbers

    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    try:  # numpy scalars and 0-d arrays
        import numpy as np

        if isinstance(v, np.generic | np.ndarray) and np.ndim(v) == 0:
            v = v.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        if not math.isfinite(f):
            return "nan" if math.isnan(f) else ("inf" if f > 0 else "-inf")
        if f.is_integer() and abs(f) < 1e6:
            return str(int(f))
        return f"{f:.6g}"
    if isinstance(v, str):
        return repr(v if len(v) <= 60 else v[:57] + "...")
    text = str(v).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


class OptionalDependencyError(LMForecastError, ImportError):
    """An optional extra (torch, transformers, pyarrow) is needed but not installed."""


class ConvergenceWarning(UserWarning):
    """A fit stopped without meeting its convergence criteria; the best result is returned."""


class DomainWarning(UserWarning):
    """An input lies outside the domain where a law is defined (e.g. teacher loss below E)."""


def require(module: str, extra: str):
    """Import an optional dependency lazily, or fail naming the extra that provides it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise OptionalDependencyError(
            f"{module!r} is not installed; install the optional extra: "
            f"pip install 'lmforecast[{extra}]'"
        ) from exc


def require_all(modules: tuple[str, ...], extra: str) -> tuple:
    """`require` each of `modules`, after checking that all are installed without importing
    any: a missing second module fails at once, not after the seconds the first one's import
    takes (torch)."""
    import importlib.util

    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            require(module, extra)  # raises, naming the extra
    return tuple(require(module, extra) for module in modules)
