"""IsoFLOP profiles: validate a table of runs and group it into compute budgets."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..data.validate import numeric_column
from ..errors import DomainWarning, InputError

MIN_SIZES = 3  # a parabola in log N needs three sizes per budget


def budget_flops(N, D) -> np.ndarray:
    """6ND rounded to three significant digits: the budget a run belongs to when the table
    names none (runs of one isoFLOP profile agree to rounding of their token counts)."""
    return np.array([float(f"{v:.3g}") for v in 6.0 * np.asarray(N, float) * np.asarray(D, float)])


def isoflop_table(
    df: pd.DataFrame,
    n_col: str = "N",
    d_col: str = "D",
    c_col: str = "C",
    loss_col: str = "loss",
    what: str = "runs",
    min_sizes: int = MIN_SIZES,
) -> pd.DataFrame:
    """Columns C, N, D, loss, budget (index of the budget, grouped by C).

    C is taken from the table when present (its values name the budgets), else 6ND rounded to
    three significant digits. D = C/(6N) when only C is given. Every budget must hold at least
    `min_sizes` distinct sizes.
    """
    cols = list(df.columns)
    if len(df) == 0:
        raise InputError(f"{what}: the table has no rows")
    missing = [c for c in (n_col, loss_col) if c not in cols]
    if d_col not in cols and c_col not in cols:
        missing.append(f"{d_col} (or {c_col})")
    if missing:
        raise InputError(
            f"{what}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, cols))}"
        )
    N = numeric_column(df, n_col, positive=True, what=what)
    L = numeric_column(df, loss_col, positive=True, what=what)
    if c_col in cols:
        C = numeric_column(df, c_col, positive=True, what=what)
        D = numeric_column(df, d_col, positive=True, what=what) if d_col in cols else C / (6.0 * N)
    else:
        D = numeric_column(df, d_col, positive=True, what=what)
        C = budget_flops(N, D)
    out = pd.DataFrame({"C": C, "N": N, "D": D, "loss": L})
    budgets = np.unique(C)
    out["budget"] = np.searchsorted(budgets, C)
    # one order whatever the file's: the bootstrap resamples rows by position
    out = out.sort_values(["budget", "N", "loss"], kind="stable").reset_index(drop=True)
    rep = out.duplicated(["budget", "N"], keep=False)
    if rep.any():
        g = out[rep].iloc[0]
        warnings.warn(
            f"{what}: {int(rep.sum())} rows share a budget and a size with another row "
            f"(e.g. C={g['C']:.4g}, N={g['N']:.4g}): seed replicates are fine, but several "
            "recipes or data sets mixed in one table give an exponent of none of them; "
            "fit each recipe on its own",
            DomainWarning,
            stacklevel=2,
        )
    for b, g in out.groupby("budget"):
        k = g["N"].nunique()
        if k < min_sizes:
            raise InputError(
                f"{what}: budget C={budgets[b]:.4g} has {k} model size(s); an isoFLOP profile "
                f"needs at least {min_sizes} sizes per budget (column {c_col!r})"
            )
    if len(budgets) < 2:
        raise InputError(
            f"{what}: one compute budget ({budgets[0]:.4g}); the power laws "
            "N*(C), D*(C) need at least 2 budgets"
        )
    return out
