"""Adapters from the small-model zoo's tables (docs/zoo.md) to the distillation estimator.

The zoo has a dozen distilled students (2 sizes x 2 IsoFLOP budgets x 3 teachers), too few to
pin the nine coefficients of Eq. 8 (Busbridge et al. 2025). `zoo_fixed_coefficients` holds the
exponents (alpha', beta', gamma') and the break's shape (c1, f1) at Table 6 and leaves the
scales A', B', the teacher-loss exponent c0 and the break location d1 free.
"""

from __future__ import annotations

import pandas as pd

from ..errors import InputError
from .presets import DISTILL_PRESETS

ZOO_FREE = ("A'", "B'", "c0", "d1")
RUN_COLUMNS = ("model", "teacher", "N_S", "D_S", "N_T", "D_T", "L_T", "L_S", "L_S_supervised")


def zoo_distillation_runs(distillation: pd.DataFrame) -> pd.DataFrame:
    """The zoo's `distillation.csv` as estimator input (N_S, D_S, L_T, L_S plus context)."""
    missing = [c for c in RUN_COLUMNS if c not in distillation.columns]
    if missing:
        raise InputError(f"zoo distillation table: missing column(s) {', '.join(missing)}")
    if len(distillation) == 0:
        raise InputError("zoo distillation table: no distilled students")
    out = distillation[list(RUN_COLUMNS)].copy()
    return out.sort_values(["N_S", "D_S", "L_T"], ascending=[True, True, False]).reset_index(
        drop=True
    )


def zoo_fixed_coefficients(
    free: tuple[str, ...] = ZOO_FREE, preset: str = "busbridge2025"
) -> dict[str, float]:
    """Eq. 8 coefficients held at the preset (Table 6) values: every one not in `free`."""
    params = DISTILL_PRESETS[preset]["params"]
    unknown = [k for k in free if k not in params]
    if unknown:
        raise InputError(f"free: unknown coefficient(s) {', '.join(unknown)}")
    return {k: float(v) for k, v in params.items() if k not in free}


def student_groups(runs: pd.DataFrame) -> list[tuple[tuple[float, float], pd.DataFrame]]:
    """The runs grouped by student configuration (N_S, D_S), each sorted by teacher loss."""
    return [(k, g.sort_values("L_T")) for k, g in runs.groupby(["N_S", "D_S"])]


__all__ = ["ZOO_FREE", "zoo_distillation_runs", "zoo_fixed_coefficients", "student_groups"]
