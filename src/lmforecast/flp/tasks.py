"""Per-task settings (Chen et al., Table 2): chance (the paper's "random performance") and
metric, in percentage points.

The paper keeps a checkpoint for the loss -> performance fit only when its score is at least
5 points above the task's chance level (Sec. 3.3); both are settings here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import pandas as pd

from ..errors import InputError
from ..params import CHANCE_POINTS

EMERGENCE_THRESHOLD = 5.0  # points above random (Sec. 3.3)


@dataclass(frozen=True)
class TaskSettings:
    """A benchmark's evaluation settings (Table 2)."""

    name: str
    chance: float
    metric: str = ""
    evaluation: str = ""


@cache
def table2() -> pd.DataFrame:
    """Table 2 of the paper as a DataFrame (bundled `data/bundled/flp/tasks.csv`)."""
    path = resources.files("lmforecast") / "data/bundled/flp/tasks.csv"
    with resources.as_file(path) as p:
        return pd.read_csv(p)


def table1() -> pd.DataFrame:
    """Table 1 of the paper (sampling and target LM configurations)."""
    path = resources.files("lmforecast") / "data/bundled/flp/table1.csv"
    with resources.as_file(path) as p:
        return pd.read_csv(p)


def known_tasks() -> list[str]:
    return list(table2()["task"])


def task_settings(name: str, chance: float | None = None) -> TaskSettings:
    """Settings for `name` (case-insensitive); unknown tasks need `chance`."""
    t = table2()
    hit = t[t["task"].str.lower() == str(name).lower()]
    if chance is not None:
        rp = float(chance)
        if CHANCE_POINTS.failure(rp) is not None:
            raise InputError(f"chance must be {CHANCE_POINTS.bounds()} points, got {rp:g}")
    if hit.empty:
        if chance is None:
            raise InputError(
                f"unknown task {name!r} and no chance level given; known tasks: "
                f"{', '.join(t['task'])} (pass --chance P, in points)"
            )
        return TaskSettings(str(name), float(chance))
    row = hit.iloc[0]
    rp = float(row["chance"]) if chance is None else float(rp)
    return TaskSettings(
        str(name), rp, str(row["metric"]), f"{row['evaluation_type']}, {row['evaluation_method']}"
    )


def table1_flops(n_layers, d_model, d_ffn, tokens, n_ctx: int = 2048):
    """Table 1's "non-embedding FLOPs": 6 D n_layers (4 d^2 + 3 d d_ffn + n_ctx d)
    ([CALC] in METHODS.md 3.4: reproduces the printed column within 0.035% with n_ctx = 2048)."""
    return 6.0 * tokens * n_layers * (4.0 * d_model**2 + 3.0 * d_model * d_ffn + n_ctx * d_model)
