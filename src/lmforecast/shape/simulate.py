"""Simulated checkpoints of models that differ in width and depth (tests, examples)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..isoflop.simulate import HOFFMANN
from ..laws.chinchilla import ChinchillaGamma

CURVATURE = 0.004  # the planted coefficient of (ln(width/depth) - ln 20)^2 (bundled example)

SHAPES = (
    (256, 24),
    (256, 72),
    (384, 12),
    (512, 12),
    (512, 30),
    (768, 3),
    (768, 40),
    (1024, 24),
    (1280, 14),
    (1792, 7),
    (2048, 24),
    (2560, 8),
)


def simulate_shapes(
    curvature: float = CURVATURE, noise: float = 0.002, seed: int = 0, steps: int = 8
) -> pd.DataFrame:
    """Checkpoints (D from 1e9 to 1e11 tokens) of transformers with N = 12 depth width^2; the
    loss is Hoffmann's law times exp(curvature (ln(width/depth) - ln 20)^2): 0 = shape-free."""
    rng = np.random.default_rng(seed)
    rows = []
    for w, h in SHAPES:
        N = 12.0 * h * w * w
        D = np.geomspace(1e9, 1e11, steps)
        x = np.log(w / h) - np.log(20.0)
        L = ChinchillaGamma.loss(HOFFMANN, N, D) * np.exp(curvature * x * x)
        L = L * np.exp(rng.normal(0, noise, D.shape))
        rows.append(
            pd.DataFrame({"model": f"{w}x{h}", "width": w, "depth": h, "N": N, "D": D, "loss": L})
        )
    return pd.concat(rows, ignore_index=True)
