"""Simulated supervised runs following the distillation paper's experimental protocol (Sec. E.2).

Used where the package has no real runs (tests, benchmarks, the report until the zoo lands):
11 fixed-M models (M = D/N = 20), 6 models trained on 512B tokens, and 4 IsoFLOP profiles
C in {3e19, 1e20, 3e20, 1e21}, over the Table 13 model sizes (103M to 12.6B), with
multiplicative log-normal noise on the loss.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..laws.chinchilla import ChinchillaGamma

# Table 13 of Busbridge et al. 2025: non-embedding parameters (billions) of the 33 architectures
TABLE13_N = (
    np.array(
        [
            0.1028,
            0.1434,
            0.1983,
            0.2657,
            0.3398,
            0.4348,
            0.546,
            0.6636,
            0.8096,
            0.9755,
            1.147,
            1.355,
            1.586,
            1.821,
            2.102,
            2.41,
            2.718,
            3.082,
            3.478,
            3.87,
            4.329,
            4.823,
            5.309,
            5.873,
            6.476,
            7.066,
            7.747,
            8.47,
            9.173,
            10.05,
            10.84,
            11.66,
            12.61,
        ]
    )
    * 1e9
)


def simulate_supervised_runs(
    params: Mapping[str, float],
    *,
    noise: float = 0.005,
    seed: int = 0,
    isoflops=(3e19, 1e20, 3e20, 1e21),
) -> pd.DataFrame:
    """Runs (N, D, C=6ND, loss, protocol) drawn from L(N, D) with log-normal noise `noise`."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in TABLE13_N[np.linspace(0, 26, 11).round().astype(int)]:  # up to 7.75B
        rows.append((n, 20 * n, "fixed-M"))
    for n in TABLE13_N[[0, 3, 6, 9, 12, 15]]:
        rows.append((n, 512e9, "512B-tokens"))
    for c in isoflops:
        for n in TABLE13_N:
            d = c / (6 * n)
            if 2.0 <= d / n <= 400.0:  # keep the profile around its minimum, as the paper does
                rows.append((n, d, f"isoflop-{c:.0e}"))
    df = pd.DataFrame(rows, columns=["N", "D", "protocol"])
    df["C"] = 6 * df["N"] * df["D"]
    clean = ChinchillaGamma.loss(dict(params), df["N"].to_numpy(), df["D"].to_numpy())
    df["loss"] = clean * np.exp(rng.normal(0.0, noise, len(df)))
    return df[["N", "D", "C", "loss", "protocol"]]
