"""Compute-optimal allocation for forms without a closed form (Eq. 2 by golden-section search)."""

from __future__ import annotations

import numpy as np

from ..compute.allocation import Allocation
from ..compute.flops import Architecture, flops_per_token
from ..errors import InputError


def numeric_allocation(predict, C, accounting: str, arch: Architecture) -> Allocation:
    """argmin_N predict(N, D(N, C)) along each IsoFLOP by golden-section search on log N."""
    Cf = np.atleast_1d(np.asarray(C, float)).ravel()
    if not np.all(np.isfinite(Cf)) or np.any(Cf <= 0):
        raise InputError(f"compute budget must be positive and finite, got {C}")
    if accounting not in ("6ND", "F(N)"):
        raise InputError(f"unknown FLOPs accounting {accounting!r}; use '6ND' or 'F(N)'")

    def tokens(N):
        return Cf / (6.0 * N) if accounting == "6ND" else Cf / flops_per_token(N, "F(N)", arch)

    def f(logn):
        N = np.exp(logn)
        return np.asarray(predict(N, tokens(N)), float)

    a, b = np.full(Cf.shape, np.log(1e3)), np.log(Cf / 6.0) - np.log(1.0)
    r = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(120):
        c, d = b - r * (b - a), a + r * (b - a)
        left = f(c) < f(d)
        a, b = np.where(left, a, c), np.where(left, d, b)
    N = np.exp(0.5 * (a + b))
    D = tokens(N)
    shape = np.shape(C)
    return Allocation(
        C=np.asarray(C, float),
        N=N.reshape(shape),
        D=D.reshape(shape),
        loss=np.asarray(predict(N, D), float).reshape(shape),
        accounting=accounting,
    )
