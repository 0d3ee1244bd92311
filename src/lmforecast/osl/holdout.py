"""Holdout splits of Sec. 4 (Ruan et al. 2024): FLOPs cutoff, top fraction, explicit list, and
the App. C.8 interval backtest on them (scores, forecasts and intervals in points)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..uncertainty.coverage import DEFAULT_LEVELS, calibration_curve, summarise_intervals
from ..uncertainty.percentile import percentile_interval
from .data import BASE_METRICS, MODEL, read_benchmarks
from .model import ObservationalScalingLaw
from .splits import LLAMA2_7B_FLOPS, cutoff_split, list_split, top_split

# ---- interval backtest (App. C.8) ------------------------------------------------------
BACKTEST_METHODS = ("OSL (3 PCs)", "FLOPs sigmoid", "persistence")


def _persistence(y_tr, logc_tr, y_te, levels, frac: float = 0.3):
    """Naive baseline: a held-out model scores like the best training model. Its interval is the
    empirical quantiles of the same rule's errors inside the training set (each of the top
    `frac` training models by FLOPs forecast by the best model below it)."""
    order = np.argsort(logc_tr, kind="stable")
    ys = y_tr[order]
    run_max = np.maximum.accumulate(ys)
    k0 = max(1, int(round((1 - frac) * len(ys))))
    errs = ys[k0:] - run_max[k0 - 1 : -1]
    p = float(y_tr.max())
    out = {}
    for lv in levels:
        lo, hi = percentile_interval(errs, lv) if errs.size else (0.0, 0.0)
        out[lv] = (np.clip(p + lo, 0, 100), np.clip(p + hi, 0, 100))
    return np.full(len(y_te), p), out


def holdout_forecasts(
    table: pd.DataFrame,
    targets: Sequence[str] | None = None,
    *,
    cutoff_flops: float = LLAMA2_7B_FLOPS,
    levels: Sequence[float] = DEFAULT_LEVELS,
    n_components: int = 3,
    score_unit: str = "auto",
) -> pd.DataFrame:
    """Every held-out forecast of the Sec. 4 FLOPs-cutoff holdout with its intervals.

    For each target (default: every paper benchmark in the table) fit on models with FLOPs <=
    `cutoff_flops` and forecast the rest with: the PC law (`n_components` PCs of the other
    benchmarks), the same sigmoid on log10 FLOPs, and persistence (the best training model's
    score). One row per target, method, held-out model and level: y, y_pred, lower, upper and
    the score range [0, 100] (`range_lower`, `range_upper`: an interval spanning it is a miss),
    all in points (the table's scores read per `score_unit`).
    """
    import warnings

    table = read_benchmarks(table)
    targets = list(targets) if targets is not None else [m for m in BASE_METRICS if m in table]
    rows = []
    for t in targets:
        for method, x in zip(BACKTEST_METHODS[:2], ("pcs", "flops")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                k = n_components if x == "pcs" else 3  # one predictor: no components to count
                est = ObservationalScalingLaw(
                    k, x=x, cutoff_flops=cutoff_flops, score_unit=score_unit
                )
                res = est.fit(table, t).result_
            pf = res.predictions_frame()
            te = (pf["split"] == "test").to_numpy()
            if not te.any():
                continue
            X = pf[[f"x{i + 1}" for i in range(res.n_components)]].to_numpy(float)[te]
            for lv in levels:
                lo, hi = res.predict_interval(X, lv)
                rows.append(
                    pd.DataFrame(
                        {
                            "target": t,
                            "method": method,
                            "model": pf[MODEL][te],
                            "level": lv,
                            "y": pf["y"][te],
                            "y_pred": pf["y_pred"][te],
                            "lower": lo,
                            "upper": hi,
                            "range_lower": 0.0,
                            "range_upper": 100.0,
                        }
                    )
                )
            if x == "flops":
                tr = ~te & np.isfinite(pf["log10_flops"].to_numpy(float))
                y_tr, y_te = pf["y"].to_numpy(float)[tr], pf["y"].to_numpy(float)[te]
                pred, ivs = _persistence(y_tr, pf["log10_flops"].to_numpy(float)[tr], y_te, levels)
                for lv in levels:
                    rows.append(
                        pd.DataFrame(
                            {
                                "target": t,
                                "method": BACKTEST_METHODS[2],
                                "model": pf[MODEL][te],
                                "level": lv,
                                "y": y_te,
                                "y_pred": pred,
                                "lower": ivs[lv][0],
                                "upper": ivs[lv][1],
                                "range_lower": 0.0,
                                "range_upper": 100.0,
                            }
                        )
                    )
    cols = ["target", "method", "model", "level", "y", "y_pred", "lower", "upper"]
    cols += ["range_lower", "range_upper"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols)


def interval_backtest(
    table: pd.DataFrame,
    targets: Sequence[str] | None = None,
    *,
    cutoff_flops: float = LLAMA2_7B_FLOPS,
    level: float = 0.9,
    n_components: int = 3,
    score_unit: str = "auto",
) -> pd.DataFrame:
    """Per target and method: coverage of the nominal `level` prediction intervals, median
    width and MAE (points) on the held-out models of the FLOPs-cutoff holdout
    (`holdout_forecasts`)."""
    f = holdout_forecasts(
        table,
        targets,
        cutoff_flops=cutoff_flops,
        levels=(level,),
        n_components=n_components,
        score_unit=score_unit,
    )
    return summarise_intervals(f, ("target", "method"), level)


__all__ = [
    "BACKTEST_METHODS",
    "LLAMA2_7B_FLOPS",
    "calibration_curve",
    "cutoff_split",
    "holdout_forecasts",
    "interval_backtest",
    "list_split",
    "summarise_intervals",
    "top_split",
]
