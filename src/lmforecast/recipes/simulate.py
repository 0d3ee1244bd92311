"""A simulated pair of recipes with a known effective-compute multiplier (tests, examples)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..isoflop.simulate import HOFFMANN, optimal_n, true_exponents
from ..laws.chinchilla import ChinchillaGamma


def simulate_pair(
    k: float = 2.5,
    budgets_base=(1e17, 3e17, 1e18, 3e18, 1e19, 3e19),
    budgets_new=(1e17, 3e17, 1e18, 3e18, 1e19),
    n_sizes: int = 5,
    noise: float = 0.003,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(base, new) isoFLOP runs; the new recipe's loss at (N, D) is the base law's at
    (N k^a, D k^b), so its frontier at C equals the base frontier at k C (a + b = 1)."""
    p = HOFFMANN
    a, b = true_exponents(p)
    rng = np.random.default_rng(seed)

    def runs(budgets, kk):
        out = []
        for C in budgets:
            N = optimal_n(p, kk * C) / kk**a * np.logspace(-0.5, 0.5, n_sizes)
            D = C / (6 * N)
            L = ChinchillaGamma.loss(p, N * kk**a, D * kk**b)
            L = L * np.exp(rng.normal(0, noise, N.shape))
            out.append(pd.DataFrame({"N": N, "D": D, "C": C, "loss": L}))
        return pd.concat(out, ignore_index=True)

    return runs(budgets_base, 1.0), runs(budgets_new, k)
