"""Simulated repeated-data runs from a known data-constrained law (for tests and examples)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..laws import get_law

#: Chinchilla's published part (Hoffmann et al. 2022) with the decay constants Muennighoff et al.
#: (2023) report: the law the tests recover.
PAPER_PARAMS = {
    "A": 406.4,
    "B": 410.7,
    "E": 1.69,
    "alpha": 0.34,
    "beta": 0.28,
    "RD_star": 15.4,
    "RN_star": 5.3,
}


def simulate_runs(
    params: dict | None = None,
    *,
    N=(1e7, 3e7, 1e8, 3e8, 1e9),
    U=(1e8, 4e8, 1.5e9),
    epochs=(1, 2, 4, 8, 16, 40),
    noise: float = 0.005,
    seed: int = 0,
) -> pd.DataFrame:
    """One run per (N, U, epochs): D = U x epochs, loss with multiplicative log-normal noise."""
    p = dict(PAPER_PARAMS if params is None else params)
    g = np.array(np.meshgrid(N, U, epochs, indexing="ij"), float).reshape(3, -1)
    n, u, e = g
    d = u * e
    law = get_law("data-constrained")
    loss = law.predict(p, N=n, D=d, U=u)
    rng = np.random.default_rng(seed)
    loss = loss * np.exp(rng.normal(0.0, noise, loss.shape))
    return pd.DataFrame({"N": n, "D": d, "U": u, "epochs": e, "C": 6 * n * d, "loss": loss})
