"""Exceptions and warnings shared by every method.

`InputError` is for user mistakes (bad tables, bad flags): the CLI turns it into a one-line
message and exit status 2. Anything else escaping the library is a bug.
"""

from __future__ import annotations


class LMForecastError(Exception):
    """Base class of lmforecast's own exceptions."""


class InputError(LMForecastError, ValueError):
    """The user's input is invalid; the message names the column, row or value."""


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
