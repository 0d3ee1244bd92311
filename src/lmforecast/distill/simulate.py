"""Distillation runs simulated from a law over the experimental protocols of Busbridge et al.
(2025) Sec. 4.2 (METHODS 2.4 "Distillation data"), for tests, benchmarks and the report.

Protocols (model sizes from Table 13, N = non-embedding parameters; compute 3F(N)D, App. H.1):
  (i)   fixed-M teachers (M_T = 20; N_T in {546M, 975M, 1.82B, 2.72B, 4.82B, 7.75B}) distilled into
        students on IsoFLOP profiles C_S in {3e19, 1e20, 3e20, 1e21} (students 143M-12.6B with
        3 <= D_S/N_S <= 300, plus a few students >= 5B at 3e21);
  (ii)  IsoFLOP teachers (C_T in {3e19, 1e20, 3e20, 1e21}, teachers 198M-7.75B with
        3 <= D_T/N_T <= 300) distilled into fixed-M students (M_S = 20; 198M, 546M, 975M, 1.82B);
  (iii) ten fixed-M teachers (M_T = 20) into five student sizes with M_S in {20, 40, 80, 160, 320}.
Teacher losses are the supervised law's L(N_T, D_T); student losses are Eq. 8 times lognormal
noise of relative scale `noise` (0.5% by default).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..compute.flops import forward_flops_per_token
from .model import DistillationScalingLaw

# Table 13, column N (billions of non-embedding parameters)
TABLE13_N = 1e9 * np.array(
    [0.1028, 0.1434, 0.1983, 0.2657, 0.3398, 0.4348, 0.546, 0.6636, 0.8096, 0.9755, 1.147]
    + [1.355, 1.586, 1.821, 2.102, 2.41, 2.718, 3.082, 3.478, 3.87, 4.329, 4.823, 5.309]
    + [5.873, 6.476, 7.066, 7.747, 8.47, 9.173, 10.05, 10.84, 11.66, 12.61]
)
ISOFLOP_BUDGETS = (3e19, 1e20, 3e20, 1e21)
FIXED_M_TEACHERS = 1e9 * np.array([0.546, 0.9755, 1.821, 2.718, 4.823, 7.747])
FIXED_M_STUDENTS = 1e9 * np.array([0.1983, 0.546, 0.9755, 1.821])
GRID_TEACHERS = 1e9 * np.array(
    [0.1983, 0.3398, 0.546, 0.8096, 0.9755, 1.355, 1.821, 2.718, 4.823, 7.747]
)
GRID_STUDENTS = 1e9 * np.array([0.1434, 0.1983, 0.546, 0.9755, 1.821])
STUDENT_M = (20, 40, 80, 160, 320)


def _isoflop_sizes(C: float, lo: float, hi: float, m_range=(3.0, 300.0)) -> np.ndarray:
    N = TABLE13_N[(TABLE13_N >= lo * 0.999) & (TABLE13_N <= hi * 1.001)]
    M = C / (3.0 * forward_flops_per_token(N)) / N
    return N[(M >= m_range[0]) & (M <= m_range[1])]


def distillation_design() -> pd.DataFrame:
    """The (N_S, D_S, N_T, D_T, protocol) design of Sec. 4.2 protocols (i)-(iii)."""
    rows = []
    for NT in FIXED_M_TEACHERS:  # (i)
        for C in ISOFLOP_BUDGETS:
            for NS in _isoflop_sizes(C, 1.4e8, 1.27e10):
                DS = C / (3.0 * forward_flops_per_token(NS))
                rows.append((NS, DS, NT, 20.0 * NT, "fixed-M teacher / IsoFLOP student"))
        for NS in _isoflop_sizes(3e21, 5e9, 1.27e10, (2.5, 300.0)):  # "a few at 3e21"
            DS = 3e21 / (3.0 * forward_flops_per_token(NS))
            rows.append((NS, DS, NT, 20.0 * NT, "fixed-M teacher / IsoFLOP student"))
    for C in ISOFLOP_BUDGETS:  # (ii)
        for NT in _isoflop_sizes(C, 1.9e8, 7.8e9):
            DT = C / (3.0 * forward_flops_per_token(NT))
            for NS in FIXED_M_STUDENTS:
                rows.append((NS, 20.0 * NS, NT, DT, "IsoFLOP teacher / fixed-M student"))
    for NT in GRID_TEACHERS:  # (iii)
        for NS in GRID_STUDENTS:
            for M in STUDENT_M:
                rows.append((NS, M * NS, NT, 20.0 * NT, "fixed-M teacher / fixed-M student"))
    df = pd.DataFrame(rows, columns=["N_S", "D_S", "N_T", "D_T", "protocol"])
    return df.drop_duplicates(subset=["N_S", "D_S", "N_T", "D_T"]).reset_index(drop=True)


def simulate_distillation_runs(
    model=None,
    *,
    n_runs: int | None = 697,
    noise: float = 0.005,
    seed: int = 0,
) -> pd.DataFrame:
    """Runs (N_S, D_S, N_T, D_T, L_T, L_S, L_S_true, protocol) simulated from `model`.

    `model` is a `DistillationScalingLaw` (default: the Table 6 preset). `n_runs` subsamples the
    design (about 750 configurations) at random to the paper's 697 runs; None keeps them all.
    """
    model = model or DistillationScalingLaw.from_preset("busbridge2025")
    rng = np.random.default_rng(seed)
    df = distillation_design()
    if n_runs is not None and n_runs < len(df):
        keep = np.sort(rng.choice(len(df), size=n_runs, replace=False))
        df = df.iloc[keep].reset_index(drop=True)
    df["L_T"] = model.teacher_loss(df["N_T"], df["D_T"])
    df["L_S_true"] = model.predict(df["N_S"], df["D_S"], teacher_loss=df["L_T"])
    df["L_S"] = df["L_S_true"] * np.exp(rng.normal(0.0, noise, len(df)))
    return df[["N_S", "D_S", "N_T", "D_T", "L_T", "L_S", "L_S_true", "protocol"]]
