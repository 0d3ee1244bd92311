"""How far to trust FLP / FLP-M forecasts: prediction-interval backtests on held-out larger runs.

Each function returns a forecasts table (`lmforecast.uncertainty.coverage`): one row per
held-out run, task and nominal level with the observed score `y`, the forecast `y_pred` and the
interval. Score them with `lmforecast.uncertainty.coverage.summarise_intervals` /
`calibration_curve`.

- `simulated_flp_forecasts`: `simulate_flp` studies (Table 1 sizes; the 7B and 13B targets
  forecast from the sampling models up to 3B), one study per seed. The simulated truth is not the
  fitted form (soft ramps, loss offsets of unfinished checkpoints), so this measures the
  interval's calibration under mild misspecification, not only under the fitted model.
- `simulated_flpm_forecasts`: `simulate_flpm` studies (3B at five code ratios and 7B at 0.3).
- `zoo_flp_forecasts`: the small-model zoo's supervised runs; each of the `n_sizes` largest
  model sizes is forecast from the runs of smaller sizes (rolling-origin over size).
- `zoo_flpm_forecasts`: the zoo's mixture runs; the largest size at every code share forecast
  from the smaller sizes.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..uncertainty.coverage import DEFAULT_LEVELS
from .mixture import FLPM
from .model import FLP, SCORE_RANGE
from .simulate import simulate_flp, simulate_flpm
from .zoo_data import flp_tables, flpm_tables, zoo_chance, zoo_tasks


def _rows(est, x, y, levels, **keys) -> list[pd.DataFrame]:
    """Forecast rows of `est` at inputs `x` (FLOPs, or FLOPs per source) for every level, with
    the score range (an interval clipped to all of [0, 100] is uninformative: a miss)."""
    pred = est.predict(x)
    r_lo, r_hi = SCORE_RANGE
    out = []
    for lv in levels:
        lo, hi = est.predict_interval(x, level=lv)
        cols = {"level": lv, "y": y, "y_pred": pred, "lower": lo, "upper": hi}
        rng = {"range_lower": r_lo, "range_upper": r_hi}
        out.append(pd.DataFrame({**keys, **cols, **rng}))
    return out


def _concat(rows) -> pd.DataFrame:
    cols = ["level", "y", "y_pred", "lower", "upper", "range_lower", "range_upper"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols)


def simulated_flp_forecasts(
    seeds: Sequence[int] = range(8),
    tasks: Sequence[str] = ("ARC", "Hellaswag", "TriviaQA"),
    *,
    bootstrap: int = 200,
    levels: Sequence[float] = DEFAULT_LEVELS,
) -> pd.DataFrame:
    """FLP's prediction intervals for the 7B / 13B targets of `simulate_flp(seed)`, per seed."""
    rows = []
    for seed in seeds:
        s = simulate_flp(tasks=tuple(tasks), seed=int(seed))
        C = s.targets["C"].to_numpy(float)
        for t in tasks:
            est = FLP(t, bootstrap=bootstrap, seed=int(seed)).fit(s.runs, s.checkpoints)
            rows += _rows(
                est,
                C,
                s.targets[t].to_numpy(float),
                levels,
                method="FLP",
                study="simulated",
                seed=int(seed),
                task=t,
                target=s.targets["model"].to_numpy(),
            )
    return _concat(rows)


def simulated_flpm_forecasts(
    seeds: Sequence[int] = range(4),
    tasks: Sequence[str] = ("HumanEval", "RACE"),
    *,
    bootstrap: int = 50,
    steps: int = 2000,
    levels: Sequence[float] = DEFAULT_LEVELS,
) -> pd.DataFrame:
    """FLP-M's prediction intervals for the six held-out mixtures of `simulate_flpm(seed)`."""
    rows = []
    for seed in seeds:
        s = simulate_flpm(tasks=tuple(tasks), seed=int(seed))
        F = s.targets[["C_general", "C_code"]].to_numpy(float)
        for t in tasks:
            est = FLPM(t, bootstrap=bootstrap, steps=steps, seed=int(seed))
            est.fit(s.runs, s.checkpoints)
            rows += _rows(
                est,
                F,
                s.targets[t].to_numpy(float),
                levels,
                method="FLP-M",
                study="simulated",
                seed=int(seed),
                task=t,
                target=s.targets["model"].to_numpy(),
            )
    return _concat(rows)


def zoo_flp_forecasts(
    zoo, *, n_sizes: int = 3, bootstrap: int = 200, levels: Sequence[float] = DEFAULT_LEVELS
) -> pd.DataFrame:
    """FLP on the zoo's supervised runs: each of the `n_sizes` largest sizes forecast from the
    smaller sizes' runs and checkpoints. Tasks/sizes whose filter keeps < 2 checkpoints are
    skipped (FLP cannot be fitted there)."""
    runs, ck = flp_tables(zoo)
    sizes = np.sort(runs["N"].unique())[-n_sizes:]
    rows = []
    for task in zoo_tasks(zoo):
        rp = zoo_chance(zoo, task)
        for N in sizes:
            tr, te = runs[runs["N"] < N], runs[runs["N"] == N]
            ck_tr = ck[ck["model"].isin(tr["model"])].reset_index(drop=True)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = FLP(task, chance=rp, bootstrap=bootstrap).fit(tr, ck_tr)
            except InputError:
                continue
            C = te["C"].to_numpy(float)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows += _rows(
                    est,
                    C,
                    te[task].to_numpy(float),
                    levels,
                    method="FLP",
                    study="zoo",
                    task=task,
                    target=te["model"].to_numpy(),
                    held_out_N=int(N),
                )
    return _concat(rows)


def zoo_flpm_forecasts(
    zoo, *, bootstrap: int = 50, steps: int = 2000, levels: Sequence[float] = DEFAULT_LEVELS
) -> pd.DataFrame:
    """FLP-M (M4 + network) on the zoo's mixture runs: the largest size at every code share
    forecast from the smaller sizes. Tasks that cannot be fitted are skipped."""
    runs, ck = flpm_tables(zoo)
    big = runs["N"] == runs["N"].max()
    tr, te = runs[~big], runs[big]
    ck_tr = ck[ck["model"].isin(tr["model"])].reset_index(drop=True)
    F = te[["C_general", "C_code"]].to_numpy(float)
    rows = []
    for task in zoo_tasks(zoo):
        rp = zoo_chance(zoo, task)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = FLPM(task, chance=rp, bootstrap=bootstrap, steps=steps)
                est.fit(tr, ck_tr)
        except InputError:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows += _rows(
                est,
                F,
                te[task].to_numpy(float),
                levels,
                method="FLP-M",
                study="zoo",
                task=task,
                target=te["model"].to_numpy(),
                held_out_N=int(te["N"].max()),
            )
    return _concat(rows)


__all__ = [
    "simulated_flp_forecasts",
    "simulated_flpm_forecasts",
    "zoo_flp_forecasts",
    "zoo_flpm_forecasts",
]
