"""How FLP-M treats runs with a source share of 0: the held-out study behind the default.

M1/M2/M4 (Chen et al., Table 3 / Eq. 5) take log C_i per source, which is -inf for the paper's
ratio-0 models (Sec. 5.1). `FLPM(zero_share="floor", zero_floor=f)` floors each source's compute
at f x the total; `zero_share="drop"` leaves those runs out of stage 1. `zero_share_study`
refits FLP-M under each setting and scores the forecasts of held-out target models (and, for a
simulated study with a known truth, the whole mixture curve).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from .mixture import FLPM
from .simulate import domain_losses, flpm_score, simulate_flpm
from .tasks import table1

SETTINGS = (("floor", 1e-2), ("floor", 1e-3), ("floor", 1e-6), ("drop", 1e-3))


def zero_share_study(
    runs: pd.DataFrame,
    checkpoints: pd.DataFrame,
    targets: pd.DataFrame,
    tasks: Sequence[str],
    *,
    settings: Sequence[tuple[str, float]] = SETTINGS,
    truth: Callable[[str, np.ndarray], np.ndarray] | None = None,
    curve_flops: Sequence[float] = (),
    shares: Sequence[float] = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
    chance: dict[str, float] | None = None,
    **flpm_kw,
) -> pd.DataFrame:
    """One row per task and setting: `target_mae` (held-out targets, points), and with `truth`
    (task, FLOPs per source (n, K) -> true score) `curve_mae` over `shares` of the last source
    at each of `curve_flops` total compute, plus the forecast and truth at the smallest share."""
    kw = {"bootstrap": 0, **flpm_kw}
    rows = []
    for task in tasks:
        rp = (chance or {}).get(task)
        for zs, floor in settings:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est = FLPM(task, zero_share=zs, zero_floor=floor, chance=rp, **kw)
                est.fit(runs, checkpoints)
                F = targets[[f"C_{s}" for s in est.sources_]].to_numpy(float)
                p = est.predict(F, clip=False)
            row = {
                "task": task,
                "zero_share": zs,
                "zero_floor": floor if zs == "floor" else None,
                "n_zero_share_runs": est.n_zero_share_,
                "target_mae": float(np.mean(np.abs(p - targets[task].to_numpy(float)))),
            }
            if truth is not None and len(curve_flops):
                K = len(est.sources_)
                sh = np.asarray(shares, float)
                R = np.column_stack([1 - sh] + [sh / (K - 1)] * (K - 1))
                err, first = [], []
                for C in curve_flops:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        pr = est.predict(R * C, clip=False)
                    tr = np.asarray(truth(task, R * C), float)
                    err.append(np.abs(pr - tr))
                    first.append((pr[0], tr[0]))
                row["curve_mae"] = float(np.mean(err))
                row["small_share_forecast"] = float(first[-1][0])
                row["small_share_truth"] = float(first[-1][1])
            rows.append(row)
    return pd.DataFrame(rows)


def simulated_zero_share_study(
    seeds: Sequence[int] = (0,), tasks=("ARC", "RACE", "HumanEval"), **kw
) -> pd.DataFrame:
    """`zero_share_study` on `simulate_flpm` (ratio-0 runs at every sampling size; targets 3B at
    the other ratios and 7B at 0.3), curves at the 3B and 7B compute against the ground truth."""
    t1 = table1().set_index("model")
    out = []
    for seed in seeds:
        st = simulate_flpm(tasks, seed=seed)
        df = zero_share_study(
            st.runs,
            st.checkpoints,
            st.targets,
            tasks,
            truth=lambda task, F: flpm_score(task, domain_losses(F)),
            curve_flops=[float(t1.loc[m, "flops"]) for m in ("3B", "7B")],
            **kw,
        )
        out.append(df.assign(seed=seed))
    return pd.concat(out, ignore_index=True)


__all__ = ["SETTINGS", "simulated_zero_share_study", "zero_share_study"]
