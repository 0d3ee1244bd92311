"""Honest splits of a real training suite and the forecasts of any method on them (docs/trust.md).

A split fits only the runs below a cut and forecasts the runs above it:

- ``size-1``: hold out the largest model size (every D of it); fit all smaller sizes;
- ``size-2``: hold out the two largest sizes;
- ``compute``: hold out the runs above the 80th percentile of compute (an existing compute level).

A split is skipped (not failed) when its training side would have fewer than `min_sizes`
distinct model sizes or fewer than `min_train` runs. `suite_forecasts` runs every method (the
backtest adapter protocol: ``fit(train) -> fitted`` with ``predict`` and ``interval``) on every
split and returns one row per forecast; `score_forecasts` turns them into the trust table. A
non-finite interval is a failed forecast: it counts as not covered (column ``finite``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas loads inside the functions that use it
    import pandas as pd

from ..errors import InputError

SPLITS = ("size-1", "size-2", "compute")


def suite_splits(
    runs: pd.DataFrame, *, min_sizes: int = 3, min_train: int = 8, splits: Sequence[str] = SPLITS
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """[(name, train_mask, test_mask)] for the honest splits of one runs table."""
    N = runs["N"].to_numpy(float)
    C = 6.0 * N * runs["D"].to_numpy(float)
    sizes = np.unique(N)
    if sizes.size < 2:
        raise InputError(
            f"suite: a backtest needs at least two model sizes, found {int(sizes.size)} "
            f"(N = {float(sizes[0]) if sizes.size else float('nan'):g})"
        )
    out = []
    for name in splits:
        if name.startswith("size-"):
            k = int(name.split("-")[1])
            if sizes.size <= k:
                continue
            cut = sizes[-k]
            tr, te = N < cut, N >= cut
        elif name == "compute":
            levels = np.unique(C)
            cut = levels[np.searchsorted(levels, np.quantile(C, 0.8), side="right") - 1]
            tr, te = C <= cut, C > cut
        else:
            raise InputError(f"unknown split {name!r}; use {', '.join(SPLITS)}")
        if te.sum() == 0 or tr.sum() < min_train or np.unique(N[tr]).size < min_sizes:
            continue
        out.append((name, tr, te))
    return out


def distance(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """r = max(0, ln C/C_max, ln N/N_max, ln D/D_max) of each test run over the training runs."""
    Nt, Dt = train["N"].to_numpy(float), train["D"].to_numpy(float)
    N, D = test["N"].to_numpy(float), test["D"].to_numpy(float)
    r = np.log(N * D / np.max(Nt * Dt))
    r = np.maximum(r, np.log(N / Nt.max()))
    r = np.maximum(r, np.log(D / Dt.max()))
    return np.maximum(r, 0.0)


def suite_forecasts(
    suites: Mapping[str, Mapping[str, pd.DataFrame]],
    methods: Sequence,
    *,
    level: float = 0.9,
    splits: Sequence[str] = SPLITS,
    progress=None,
    min_train: int = 8,
) -> pd.DataFrame:
    """Forecasts of every method on every split of every sub-suite: columns suite, sub, split,
    method, N, D, truth, forecast, lower, upper, r (distance beyond the fitted runs) and, where a
    fitted method exposes ``terms(test)``, its interval terms (noise, s_boot). A split fits at
    least `min_train` runs."""
    import pandas as pd

    frames = []
    for suite, subs in suites.items():
        for sub, runs in subs.items():
            runs = runs.reset_index(drop=True)
            for split, tr, te in suite_splits(runs, splits=splits, min_train=min_train):
                train, test = runs[tr], runs[te]
                r = distance(train, test)
                for m in methods:
                    fitted = m.fit(train)
                    pred = np.asarray(fitted.predict(test), float).ravel()
                    iv = fitted.interval(test, level)
                    lo, hi = (np.full(pred.shape, np.nan),) * 2 if iv is None else iv
                    f = pd.DataFrame(
                        {
                            "suite": suite,
                            "sub": sub,
                            "split": split,
                            "method": m.name,
                            "N": test["N"].to_numpy(float),
                            "D": test["D"].to_numpy(float),
                            "truth": test["loss"].to_numpy(float),
                            "forecast": pred,
                            "lower": np.asarray(lo, float).ravel(),
                            "upper": np.asarray(hi, float).ravel(),
                            "r": r,
                            "n_train": int(tr.sum()),
                        }
                    )
                    terms = getattr(fitted, "terms", None)
                    if terms is not None:
                        for key, v in terms(test).items():
                            f[key] = np.asarray(v, float).ravel()
                    frames.append(f)
                    if progress is not None:
                        progress(suite, sub, split, m.name)
    if not frames:
        raise InputError("suite: no split leaves enough runs to fit and forecast")
    return pd.concat(frames, ignore_index=True)


def score_forecasts(f: pd.DataFrame, by: Sequence[str] = ("suite", "method")) -> pd.DataFrame:
    """Per group: forecasts n, non-finite intervals (failed, counted as misses), coverage of the
    interval over ALL forecasts, median relative half-width %, mean and median |% error|.
    Rows weigh equally within a (sub-suite, split) and each (sub-suite, split) equally."""
    import pandas as pd

    f = f.copy()
    finite = np.isfinite(f["lower"].to_numpy(float)) & np.isfinite(f["upper"].to_numpy(float))
    f["finite"] = finite
    f["covered"] = finite & (f["lower"] <= f["truth"]) & (f["truth"] <= f["upper"])
    f["halfwidth_pct"] = np.where(
        finite, 100 * (f["upper"] - f["lower"]) / (2 * f["forecast"]), np.nan
    )
    f["abs_pct"] = 100 * np.abs(f["forecast"] / f["truth"] - 1.0)
    cell = ["suite", "sub", "split"]
    size = f.groupby([*cell, "method"])["truth"].transform("size").to_numpy(float)
    cells = f.drop_duplicates([*cell, "method"]).groupby(["suite", "method"]).size()
    f["w"] = 1.0 / size / f.set_index(["suite", "method"]).index.map(cells).to_numpy(float)
    rows = []
    for key, g in f.groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        w = g["w"].to_numpy(float)
        w = w / w.sum()
        has_iv = bool(np.isfinite(g["lower"]).any() or g["lower"].notna().any())
        rows.append(
            {
                **dict(zip(by, key)),
                "n": int(len(g)),
                "nonfinite": int((~g["finite"]).sum()) if has_iv else 0,
                "coverage": float(np.sum(w * g["covered"])) if has_iv else np.nan,
                "median_halfwidth_pct": float(np.nanmedian(g["halfwidth_pct"]))
                if has_iv
                else np.nan,
                "mean_abs_pct": float(np.sum(w * g["abs_pct"])),
                "median_abs_pct": float(np.median(g["abs_pct"])),
            }
        )
    return pd.DataFrame(rows)


__all__ = ["SPLITS", "distance", "score_forecasts", "suite_forecasts", "suite_splits"]
