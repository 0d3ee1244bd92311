"""Compute-optimal allocation N*, D* for a supervised law (Busbridge et al. Eq. 2).

Under C = 6ND the optimum has a closed form for both supervised forms (gamma > 0 is a monotone
transform, so it does not move the argmin): N* = G (C/6)^a, D* = (C/6)^b / G with
G = (alpha A / (beta B))^(1/(alpha+beta)), a = beta/(alpha+beta), b = alpha/(alpha+beta)
(Hoffmann et al. 2022, Eq. 4; Busbridge et al. Table 6 caption, read b = alpha/(alpha+beta)).
Under C = 3 F(N) D (App. H.1) there is no closed form; we solve the 1-D problem along the
IsoFLOP by a vectorised golden-section search in log N (the IsoFLOP profile is unimodal).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .flops import DISTILLATION_PAPER, Architecture, flops_per_token


def plain(x):
    """A scalar as a plain Python float, anything else as a float ndarray: what the public API
    returns (no 0-d arrays, no ``np.float64`` reprs)."""
    return float(x) if np.ndim(x) == 0 else np.asarray(x, float)


@dataclass
class Allocation:
    """Compute-optimal parameters N, tokens D and loss for each budget C (plain floats for a
    scalar budget, arrays for an array of budgets)."""

    C: np.ndarray | float
    N: np.ndarray | float
    D: np.ndarray | float
    loss: np.ndarray | float
    accounting: str

    def __post_init__(self) -> None:
        for key in ("C", "N", "D", "loss"):
            object.__setattr__(self, key, plain(getattr(self, key)))

    def to_dict(self) -> dict:
        f = (lambda a: float(a)) if np.ndim(self.N) == 0 else (lambda a: np.asarray(a).tolist())
        return {
            "C": f(self.C),
            "N": f(self.N),
            "D": f(self.D),
            "loss": f(self.loss),
            "accounting": self.accounting,
        }


def _loss(params: Mapping[str, float], N, D):
    g = params.get("gamma", 1.0)
    return (
        params["E"] + (params["A"] / N ** params["alpha"] + params["B"] / D ** params["beta"]) ** g
    )


def closed_form_6nd(params: Mapping[str, float], C) -> tuple[np.ndarray, np.ndarray]:
    a_, b_ = params["alpha"], params["beta"]
    G = (a_ * params["A"] / (b_ * params["B"])) ** (1.0 / (a_ + b_))
    c6 = np.asarray(C, float) / 6.0
    return G * c6 ** (b_ / (a_ + b_)), c6 ** (a_ / (a_ + b_)) / G


def compute_optimal(
    params: Mapping[str, float],
    C,
    accounting: str = "6ND",
    arch: Architecture = DISTILLATION_PAPER,
    n_min: float = 1e3,
) -> Allocation:
    """N*, D*, L* = argmin L(N, D) subject to FLOPs(N, D) = C, vectorised over C."""
    C = np.asarray(C, float)
    if not np.all(np.isfinite(C)) or np.any(C <= 0):
        raise InputError(f"compute budget must be positive and finite, got {C}")
    if params.get("alpha", 0) <= 0 or params.get("beta", 0) <= 0:
        raise InputError("compute-optimal allocation needs alpha > 0 and beta > 0")
    if accounting == "6ND":
        N, D = closed_form_6nd(params, C)
        small = np.atleast_1d(N < n_min)
        if small.any():  # as the F(N) path: no model trains on such a budget
            Cs, Ns = np.atleast_1d(C)[small][0], np.atleast_1d(N)[small][0]
            raise InputError(
                f"budget {Cs:.3g} FLOPs is too small to train any model (its "
                f"optimum N* = {Ns:.3g} parameters is below {n_min:g})"
            )
    elif accounting == "F(N)":
        N = _golden_isoflop(params, C, arch, n_min)
        D = C / flops_per_token(N, "F(N)", arch)
    else:
        raise InputError(f"unknown FLOPs accounting {accounting!r}; use '6ND' or 'F(N)'")
    return Allocation(C=C, N=N, D=D, loss=_loss(params, N, D), accounting=accounting)


def _golden_isoflop(params, C, arch, n_min, iters: int = 120):
    Cf = np.atleast_1d(C).ravel()
    lo = np.full(Cf.shape, np.log(n_min))
    # the largest N that still trains on one token: 3F(N) <= C, bracketed by 6N <= C
    hi = np.log(Cf / 6.0)
    if np.any(hi <= lo):
        raise InputError(f"budget {Cf[hi <= lo][0]:.3g} FLOPs is too small to train any model")

    def f(logn):
        N = np.exp(logn)
        D = Cf / flops_per_token(N, "F(N)", arch)
        return _loss(params, N, D)

    r = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    for _ in range(iters):  # both probes re-evaluated: simpler, and a pass costs microseconds
        c, d = b - r * (b - a), a + r * (b - a)
        left = f(c) < f(d)
        a, b = np.where(left, a, c), np.where(left, d, b)
    return np.exp(0.5 * (a + b)).reshape(np.shape(C))
