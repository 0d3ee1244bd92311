"""Standard-normal quantiles and probabilities behind every normal-theory interval.

`z_of` is the one two-sided quantile of a central interval (the supervised stack's calibrated
terms, the presets' published CIs, the distillation teacher term, the point adapter's noise
band all scale by it); `normal_quantile` is one probability's quantile without scipy;
`normal_ppf` / `normal_cdf` are scipy's `ndtri` / `ndtr`, loaded on first call;
`normal_nodes` are the n mid-quantiles used wherever a normal term is added on fixed nodes
instead of random draws (reproducible bit for bit).
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np


def normal_quantile(p: float) -> float:
    """Standard-normal quantile of one probability in (0, 1): the standard library's
    `NormalDist.inv_cdf` (Wichura's AS241, accurate to double precision), no scipy."""
    return float(NormalDist().inv_cdf(p))


def z_of(level: float) -> float:
    """Two-sided standard-normal quantile of a central interval at `level` (1.645 for 0.9).
    The standard library's `NormalDist.inv_cdf` (Wichura's AS241, accurate to double
    precision), not scipy: `scipy.special` alone costs ~0.13 s of a `supervised predict` call,
    `scipy.stats` ~0.9 s."""
    p = 0.5 + float(level) / 2
    if not 0.0 < p < 1.0:  # the limits scipy's ndtri gives (+-inf at p = 1, 0; nan beyond)
        return {1.0: float("inf"), 0.0: float("-inf")}.get(p, float("nan"))
    return normal_quantile(p)


def normal_ppf(p):
    """Standard-normal quantile function (scipy's `ndtri`), elementwise."""
    from scipy.special import ndtri

    return ndtri(p)


def normal_cdf(x):
    """Standard-normal distribution function (scipy's `ndtr`), elementwise."""
    from scipy.special import ndtr

    return ndtr(x)


def normal_nodes(n: int) -> np.ndarray:
    """The n standard-normal mid-quantiles ndtri((b + 1/2) / n), b = 0..n-1: a normal term
    added on these nodes instead of n random draws has the exact quantiles of a normal and
    needs no random numbers."""
    n = int(n)
    return normal_ppf((np.arange(n) + 0.5) / n)


__all__ = ["normal_cdf", "normal_nodes", "normal_ppf", "normal_quantile", "z_of"]
