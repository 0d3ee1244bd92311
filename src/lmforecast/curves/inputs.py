"""The files `curves fit|predict|plan` read, as a notebook reads them too: the curves and
schedule tables, a saved `CurveLaw`, the ``prior=`` given by name or by a saved fit of other
runs, and a planned run's length. Each refusal is one `InputError` line naming the flag."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..errors import InputError, fmt_value
from .model import CurveLaw
from .prior import BUNDLED, CurvePrior
from .table import read_curves, read_schedule

#: The longest planned run `plan_schedules` compares schedules for.
MAX_PLAN_STEPS = 100_000_000


def input_file(path: str | Path, flag: str) -> str:
    """`path` if it names an existing file; a folder or a missing path is refused."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{flag} {path}: is a folder, expected a file")
    if not p.exists():
        raise InputError(f"{flag} {path}: no such file")
    return str(path)


def load_fit(path: str | Path, flag: str = "--fit") -> CurveLaw:
    """A `CurveLaw` saved by `curves fit --out` (`CurveLaw.save`)."""
    return CurveLaw.load(input_file(path, flag))


def read_runs(path: str | Path) -> pd.DataFrame:
    """The curves table of `curves fit --runs` (`read_curves`)."""
    return read_curves(input_file(path, "--runs"), what=f"--runs {path}")


def read_schedule_file(path: str | Path) -> pd.DataFrame:
    """The schedule table of `curves predict --schedule` (`read_schedule`)."""
    return read_schedule(input_file(path, "--schedule"), what=f"--schedule {path}")


def read_prior(spec: str):
    """The ``prior=`` of `CurveLaw` from its text: 'auto', 'none' (None), a bundled prior's
    name, or a fit of other runs saved by `curves fit --out`, whose decay parameters become the
    prior with the bundled 'mpl-25m' prior's spread and widening."""
    if spec in ("auto", *BUNDLED):
        return spec
    if spec == "none":
        return None
    if not Path(spec).exists():
        raise InputError(
            f"--prior {spec}: not one of auto, none, {', '.join(BUNDLED)} and no such file"
        )
    base = BUNDLED["mpl-25m"]
    return CurvePrior.from_fit(
        load_fit(spec, "--prior"), base.spread, f"the fit {spec}", base.widen
    )


def plan_steps(value, name: str = "--steps") -> int:
    """A planned run's length: a whole number of steps in [1, `MAX_PLAN_STEPS`]."""
    shown = value if isinstance(value, str) else fmt_value(value)
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} must be a whole number, got {shown!r}") from None
    if not (math.isfinite(v) and v == int(v) and 1 <= v <= MAX_PLAN_STEPS):
        raise InputError(f"{name} must be a whole number in [1, {MAX_PLAN_STEPS:,}], got {shown}")
    return int(v)


__all__ = [
    "MAX_PLAN_STEPS",
    "input_file",
    "load_fit",
    "plan_steps",
    "read_prior",
    "read_runs",
    "read_schedule_file",
]
