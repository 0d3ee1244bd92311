"""Intervals and spreads read off draws: percentile intervals, weighted quantiles, robust sds.

Every method that turns bootstrap refits or Monte-Carlo draws into an interval reads it here:
`percentile_interval` is the percentile bootstrap interval (Efron & Tibshirani 1993, ch. 13:
the central `level` range of the draws); `interval_from_draws` adds normal run noise on fixed
normal nodes first; `quantile_sd` is half the 15.9-84.1 percentile range (a robust sd, the
one-sigma width of a normal); `weighted_quantile` is the quantile of a weighted empirical
distribution (split-conformal calibration of the supervised stack).
"""

from __future__ import annotations

import numpy as np

from .normal import normal_nodes

#: normal quantile nodes used to add run noise to draws (`interval_from_draws`)
N_NODES = 64

#: the normal's 15.87 and 84.13 percentiles: half their distance is one sd
ONE_SIGMA_QUANTILES = (0.158655, 0.841345)


def percentile_interval(
    draws, level: float, *, point=None, axis=0, nan: bool = False, method: str = "linear"
):
    """(lo, hi): the central `level` percentile range of `draws` along `axis` (the percentile
    bootstrap interval, Efron & Tibshirani 1993, eq. 13.5: the (1 - level) / 2 and
    1 - (1 - level) / 2 quantiles). `nan` skips NaN draws (`np.nanquantile`); `method` is
    numpy's quantile method; `point` given: the range is widened to hold it where it falls
    outside (a chained or centred set of draws can miss its own point forecast)."""
    a = (1 - level) / 2
    quantile = np.nanquantile if nan else np.quantile
    lo, hi = quantile(draws, [a, 1 - a], axis=axis, method=method)
    if point is None:
        return lo, hi
    point = np.asarray(point, float)
    return np.fmin(lo, point), np.fmax(hi, point)


def interval_from_draws(T: np.ndarray, sigma: float, level: float) -> tuple[np.ndarray, ...]:
    """(lo, hi) quantiles of draws T (B, n) convolved with N(0, sigma^2) noise: each draw is
    spread over the N_NODES normal mid-quantiles (`normal.normal_nodes`, no random numbers, so
    an interval is reproducible bit for bit), NaN draws skipped (a prediction interval from
    parameter draws plus run noise)."""
    T = np.asarray(T, float)
    if sigma > 0:
        z = normal_nodes(N_NODES)
        T = (T[:, None, :] + sigma * z[None, :, None]).reshape(-1, T.shape[-1])
    return percentile_interval(T, level, nan=True)


def quantile_sd(draws) -> np.ndarray:
    """Half the 15.87-84.13 percentile range of `draws` along axis 0, NaN draws skipped: a
    robust standard deviation (the one-sigma half-width of a normal) that a few wild draws do
    not inflate."""
    q16, q84 = np.nanquantile(draws, list(ONE_SIGMA_QUANTILES), axis=0)
    return 0.5 * (q84 - q16)


def bootstrap_sd(draws: np.ndarray | None, n: int) -> np.ndarray:
    """`quantile_sd` of bootstrap draws (B, n) with NaN read as 0; zeros(n) without draws."""
    if draws is None or np.size(draws) == 0 or n == 0:
        return np.zeros(n)
    return np.nan_to_num(quantile_sd(draws), nan=0.0)


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """Smallest v with weighted fraction of values <= v at least q (values may be inf): the
    q-quantile of the weighted empirical distribution (inverted cdf)."""
    v = np.asarray(values, float)
    w = np.asarray(weights, float)
    o = np.argsort(v, kind="stable")
    cw = np.cumsum(w[o]) / w.sum()
    i = int(np.searchsorted(cw, q - 1e-12))
    return float(v[o][min(i, v.size - 1)])


__all__ = [
    "N_NODES",
    "bootstrap_sd",
    "interval_from_draws",
    "percentile_interval",
    "quantile_sd",
    "weighted_quantile",
]
