"""Simulated loss curves from known law parameters (examples and recovery tests)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from .fit import RunPoints, design, run_schedule
from .laws import LAWS, to_fit, value
from .table import read_schedule


def simulate_curves(
    schedule_table,
    params: dict,
    *,
    law: str = "mpl",
    noise: float = 0.0,
    rho: float = 0.0,
    seed: int = 0,
) -> pd.DataFrame:
    """A curves table (run, step, lr, loss, and the schedule's tokens/N) with the `law`'s loss
    at every schedule row after the warmup, times exp(e): e an AR(1) sequence per run with
    standard deviation `noise` and lag-one correlation `rho` (0: independent noise).
    Warmup rows keep their lr with no loss. `params` maps the law's parameter names to values
    (the multi-power law's names for ``"mpl"``: L0, A, alpha, B, C, beta, gamma)."""
    if law not in LAWS:
        raise InputError(f"simulate_curves: law {law!r} is not one of {', '.join(LAWS)}")
    missing = [k for k in LAWS[law] if k not in params]
    if missing:
        raise InputError(f"simulate_curves: params: missing {', '.join(missing)}")
    if not (noise >= 0 and -1 < rho < 1):
        raise InputError("simulate_curves: noise must be >= 0 and rho in (-1, 1)")
    sched = read_schedule(schedule_table)
    z = to_fit(law, np.array([float(params[k]) for k in LAWS[law]]))
    rng = np.random.default_rng(seed)
    out = []
    for run, rows in sched.groupby("run", sort=False):
        sch = run_schedule(rows, run)
        steps = rows["step"].to_numpy(float)
        loss = value(law, z, design(law, [RunPoints(run, sch, steps)]))
        e = rng.standard_normal(steps.size) * noise
        for i in range(1, e.size):  # AR(1) with stationary variance noise^2
            e[i] = rho * e[i - 1] + np.sqrt(1 - rho * rho) * e[i]
        loss = loss * np.exp(e)
        loss[np.rint(steps) <= sch.peak_step] = np.nan
        rows = rows.drop(columns=["loss"], errors="ignore").copy()
        rows["loss"] = loss
        out.append(rows)
    cols = ["run", "step", "lr", "loss"] + [c for c in ("tokens", "N") if c in sched.columns]
    return pd.concat(out, ignore_index=True)[cols]


__all__ = ["simulate_curves"]
