"""Simulated isoFLOP profiles from a known Chinchilla law (tests, examples, benchmarks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas loads inside the functions that use it
    import pandas as pd

from ..laws.chinchilla import ChinchillaGamma

#: Hoffmann et al. (2022) Approach 3 coefficients (Eq. 10): a = beta/(alpha+beta) = 0.4516.
HOFFMANN = {"A": 406.4, "B": 410.7, "E": 1.69, "alpha": 0.34, "beta": 0.28}


def true_exponents(p: dict) -> tuple[float, float]:
    """(a, b) of N* ~ C^a, D* ~ C^b for L = E + A/N^alpha + B/D^beta."""
    s = p["alpha"] + p["beta"]
    return p["beta"] / s, p["alpha"] / s


def optimal_n(p: dict, C) -> np.ndarray:
    """Closed-form N*(C) under 6ND (Hoffmann et al. Eq. 4)."""
    s = p["alpha"] + p["beta"]
    G = (p["alpha"] * p["A"] / (p["beta"] * p["B"])) ** (1 / s)
    return G * (np.asarray(C, float) / 6) ** (p["beta"] / s)


def simulate_isoflops(
    params: dict | None = None,
    budgets=(1e17, 1e18, 1e19, 1e20, 1e21),
    n_sizes: int = 9,
    span: float = 1.0,
    noise: float = 0.002,
    seed: int = 0,
) -> pd.DataFrame:
    """`n_sizes` models per budget, log-spaced over +-`span` decades around the true N*(C)."""
    import pandas as pd

    p = dict(HOFFMANN if params is None else params)
    rng = np.random.default_rng(seed)
    rows = []
    for C in budgets:
        N = optimal_n(p, C) * np.logspace(-span, span, n_sizes)
        D = C / (6 * N)
        L = ChinchillaGamma.loss(p, N, D) * np.exp(rng.normal(0, noise, N.shape))
        rows.append(pd.DataFrame({"C": C, "N": N, "D": D, "loss": L}))
    return pd.concat(rows, ignore_index=True)
