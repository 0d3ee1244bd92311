"""Why a law does or does not fit the zoo: the shape of loss against N along a fixed D/N line.

Along a line D = k N, every law of the supervised family
L = E + (A / N^alpha + B / D^beta)^gamma (Hoffmann et al. 2022, Eq. 10 with gamma = 1;
Busbridge et al. 2025, Eq. 1) is *convex* in log-log: with x = ln N,
ln(A e^{-alpha x} + B k^{-beta} e^{-beta x}) is a log-sum-exp of affine functions (convex), gamma
times it stays convex, and ln(E + e^h) is convex for convex h and E >= 0. So the local slope
d ln L / d ln N can only rise (flatten) with N. Measured slopes that *steepen* with N (a curve
that is concave in log-log) cannot be followed by any member of the family, whatever the fit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def local_log_log_slopes(
    runs: pd.DataFrame, tokens_per_param: float = 20.0, rtol: float = 0.01
) -> pd.DataFrame:
    """Slopes d ln L / d ln N between consecutive sizes of the runs at ``tokens_per_param``
    (within ``rtol``): columns N_lo, N_hi, loss_lo, loss_hi, slope."""
    r = runs[np.isclose(runs["D"] / runs["N"], tokens_per_param, rtol=rtol)]
    r = r.sort_values("N").drop_duplicates("N")
    n, loss = r["N"].to_numpy(float), r["loss"].to_numpy(float)
    return pd.DataFrame(
        {
            "N_lo": n[:-1].astype(int),
            "N_hi": n[1:].astype(int),
            "loss_lo": loss[:-1],
            "loss_hi": loss[1:],
            "slope": np.diff(np.log(loss)) / np.diff(np.log(n)),
        }
    )


def steepening_steps(slopes: pd.DataFrame, tol: float = 1e-9) -> int:
    """How many consecutive slope pairs steepen (the next slope is more negative by > tol):
    each is a place where the curve is concave in log-log, which the law family cannot follow
    (module docstring)."""
    return int((np.diff(slopes["slope"].to_numpy()) < -tol).sum())


__all__ = ["local_log_log_slopes", "steepening_steps"]
